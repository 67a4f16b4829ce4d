#!/usr/bin/env bash
# nubo-train on the CPU, side by side in one run, interleaved round by round (medians of
# ROUNDS, default 3): one worker pinned to one core (taskset -c 0), one worker on all cores,
# 2 workers in one process (cpu:2), 2 processes under nubo-run (shared memory between them) and
# the same over Gloo (NUBO_SHM_DISABLE=1); the communication exposed with and without gradient
# buckets; and the cost model's prediction of the multi-worker runs from the 1-worker profile
# (nubo-cost scale). Writes benchmarks/results/train.md.
# Usage: benchmarks/bench_train.sh [BUILD_DIR]   (default build)
set -euo pipefail
build=${1:-build}
bin=$build/bin
out=benchmarks/results/train.md
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--epochs 2 --batch 256 --quiet)
declare -A runs=(
  [taskset]="taskset -c 0 $bin/nubo-train --devices cpu"
  [one]="$bin/nubo-train --devices cpu"
  [cpu2]="$bin/nubo-train --devices cpu:2"
  [procs]="$bin/nubo-run -n 2 -- $bin/nubo-train --devices cpu"
  [gloo]="env NUBO_SHM_DISABLE=1 $bin/nubo-run -n 2 -- $bin/nubo-train --devices cpu"
  [nobucket]="$bin/nubo-train --devices cpu:2 --bucket-mb 0"
  [bucket]="$bin/nubo-train --devices cpu:2 --bucket-mb 0.25"
)
order=(taskset one cpu2 procs gloo nobucket bucket)
# What two cores give two workers' GEMMs on this machine, measured before and after the rounds:
# the most any 2-worker run can gain here.
cores_before=$(OPENBLAS_NUM_THREADS=1 "$bin/bench_cores" 5 | tail -1)
for r in $(seq 1 "$rounds"); do
  for name in "${order[@]}"; do
    ${runs[$name]} "${common[@]}" --profile "$tmp/$name.$r.json" >"$tmp/$name.$r.log" 2>&1
  done
  echo "round $r done" >&2
done
cores_after=$(OPENBLAS_NUM_THREADS=1 "$bin/bench_cores" 5 | tail -1)
python3 - "$tmp" "$rounds" "$build" "$bin" "$cores_before" "$cores_after" <<'PY' >"$out"
import json, statistics, subprocess, sys
tmp, rounds, build, bin_ = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cores_before, cores_after = sys.argv[5], sys.argv[6]
def load(name):
    return [json.load(open(f"{tmp}/{name}.{r}.json")) for r in range(1, rounds + 1)]
def med(ps, f):
    return statistics.median(f(p) for p in ps)
def acc(name):
    vals = []
    for r in range(1, rounds + 1):
        for line in open(f"{tmp}/{name}.{r}.log"):
            if "test accuracy" in line:
                vals.append(float(line.split("test accuracy")[1].split()[0]))
    return statistics.median(vals) if vals else float("nan")
rows = {n: load(n) for n in ["taskset", "one", "cpu2", "procs", "gloo", "nobucket", "bucket"]}
sps = {n: med(p, lambda x: x["samples_per_s"]) for n, p in rows.items()}
cpu = open("/proc/cpuinfo").read().split("model name")[1].split(":")[1].split("\n")[0].strip()
import os, datetime
print("# nubo-train on the CPU\n")
print(f"Command: `benchmarks/bench_train.sh {build}` on {os.cpu_count()} cores ({cpu}), "
      f"{datetime.date.today()}; medians of {rounds} interleaved rounds.")
print("Fashion-MNIST, MLP 784-256-128-10, global batch 256, 2 epochs, SGD momentum, cosine lr.\n")
print("| run | samples/s | vs 1 worker on 1 core | step ms | compute ms | GEMM ms | exposed comm ms | test acc |")
print("|---|---|---|---|---|---|---|---|")
names = {"taskset": "1 worker, 1 core (taskset -c 0)", "one": "1 worker, all cores",
         "cpu2": "2 workers, 1 process (cpu:2)", "procs": "2 processes, shared memory (nubo-run -n 2)",
         "gloo": "2 processes, Gloo over loopback (NUBO_SHM_DISABLE=1)"}
for n, label in names.items():
    p = rows[n]
    print(f"| {label} | {sps[n]:.0f} | {sps[n] / sps['taskset']:.2f} | "
          f"{med(p, lambda x: x['per_step']['wall_s']) * 1e3:.3f} | "
          f"{med(p, lambda x: x['per_step']['compute_s']) * 1e3:.3f} | "
          f"{med(p, lambda x: x['per_step'].get('gemm_s', 0)) * 1e3:.3f} | "
          f"{med(p, lambda x: x['per_step']['communication_s']) * 1e3:.3f} | {acc(n):.4f} |")
print(f"\n2 processes / cpu:2 = {sps['procs'] / sps['cpu2']:.2f}; shared memory / Gloo between "
      f"the 2 processes = {sps['procs'] / sps['gloo']:.2f}.\n")
print("What the 2 cores give 2 workers' GEMMs (nubo-train's first layer, one thread each; "
      "`OPENBLAS_NUM_THREADS=1 bench_cores`), before and after the rounds: the ceiling of any "
      "2-worker row above.\n")
print("| | one worker alone | two workers at once | two / one |\n|---|---|---|---|")
print(f"| before {cores_before[1:]}")
print(f"| after {cores_after[1:]}\n")
print("## Overlap: exposed communication, buckets against one all-reduce (cpu:2)\n")
print("| | samples/s | step ms | exposed comm ms | comm / step |")
print("|---|---|---|---|---|")
for n, label in (("nobucket", "no buckets (--bucket-mb 0)"), ("bucket", "buckets of 0.25 MB")):
    p = rows[n]
    step = med(p, lambda x: x["per_step"]["wall_s"])
    comm = med(p, lambda x: x["per_step"]["communication_s"])
    print(f"| {label} | {sps[n]:.0f} | {step * 1e3:.3f} | {comm * 1e3:.3f} | {comm / step:.1%} |")
print("\n## Cost model: the runs predicted from the 1-worker profile (`nubo-cost scale`)\n")
# The median 1-worker round's own profile, as a user would have it.
ones = sorted(rows["one"], key=lambda x: x["samples_per_s"])
mid = ones[len(ones) // 2]
json.dump(mid, open(f"{tmp}/profile.json", "w"))
pred = json.loads(subprocess.run(
    [f"{bin_}/nubo-cost", "scale", "--profile", f"{tmp}/profile.json", "--workers", "1", "2",
     "--json"], check=True, capture_output=True, text=True).stdout)["predictions"]
print("| run | measured step ms | predicted step ms | error |")
print("|---|---|---|---|")
for n, label, k in (("one", "1 worker (the profile itself)", 0), ("cpu2", "2 workers, 1 process", 1),
                    ("procs", "2 processes (nubo-run)", 1)):
    m = med(rows[n], lambda x: x["per_step"]["wall_s"])
    p = pred[k]["step_s"]
    print(f"| {label} | {m * 1e3:.3f} | {p * 1e3:.3f} | {(p - m) / m:+.0%} |")
print("\nThe model (docs/cost.md, \"Scaling on a host\"): each of n workers gets cores/n GEMM "
      "threads, so GEMMs that already used every core gain nothing from more workers, while the "
      "single-threaded rest of a step divides among them; the all-reduce moves 2(n-1)/n of the "
      "gradients at 10 GB/s.")
PY
cat "$out"
