"""List the devices nubo sees, from Python (the ctypes binding over libnubo_c.so)."""
import nubo

report = nubo.discover()
print(f"host: {report.host.model}, {report.host.logical_cores} threads")
for d in report.devices:
    print(f"GPU{d.index}: {d.name}, {d.memory_total / 2**30:.0f} GiB, "
          f"{d.peak_tflops_bf16:.0f} bf16 TFLOP/s")
group = report.select(count=2)
print("best pair:", [d.index for d in group], "linked by", report.link(group[0].index, group[1].index).name)
for diag in report.diagnoses:
    print(f"[{diag.severity}] {diag.code}: {diag.message}")
