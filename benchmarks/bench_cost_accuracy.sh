#!/usr/bin/env bash
# The cost model's accuracy on this machine: the run time predicted from a 1-worker nubo-train
# profile for the same run with 2 workers (one process) and with 2 processes (nubo-run), against
# the measured time. Appends a section to benchmarks/results/train.md.
#
# The planner (nubo-cost plan) only prices GPU instances from its catalogs, so a CPU target is
# predicted here with the same time model, written out (docs/cost.md, "The time model"):
#   compute = steps x t_compute(1 worker) x n_measured x peak_measured / (N x peak_target)
#   comm    = steps x 2(N-1)/N x S / B_link           (ring all-reduce, overlap 0)
# with peak_target = peak_measured (the same CPU) and B_link = $LINK_GBS GB/s (default 10, a
# shared-memory copy; S is under 1 MB a step, so this term is small either way).
# Usage: benchmarks/bench_cost_accuracy.sh [BUILD_DIR]   (default build-train)
set -euo pipefail
build=${1:-build-train}
bin=$build/bin
out=benchmarks/results/train.md
link_gbs=${LINK_GBS:-10}
tmp=$(mktemp -d)
common=(--epochs 2 --batch 256 --quiet)
"$bin/nubo-train" --devices cpu "${common[@]}" --profile "$tmp/p1.json" >/dev/null
"$bin/nubo-train" --devices cpu:2 "${common[@]}" --profile "$tmp/p2.json" >/dev/null
"$bin/nubo-run" --nproc 2 -- "$bin/nubo-train" --devices cpu "${common[@]}" \
  --profile "$tmp/pr.json" >/dev/null
python3 - "$tmp" "$link_gbs" "$build" <<'PY' | tee -a "$out"
import json, sys
tmp, link, build = sys.argv[1], float(sys.argv[2]) * 1e9, sys.argv[3]
p1 = json.load(open(f"{tmp}/p1.json"))
def measured(p): return p["steps"] * p["per_step"]["wall_s"]
def predict(n):
    s = p1["per_step"]
    compute = p1["steps"] * s["compute_s"] * p1["devices"]["count"] / n
    comm = p1["steps"] * 2 * (n - 1) / n * s["allreduce_bytes"] / link
    return compute + comm
print()
print("## Cost-model accuracy (time predicted from the 1-worker profile)")
print()
print(f"Command: `benchmarks/bench_cost_accuracy.sh {build}` (B_link = {link/1e9:g} GB/s). "
      "Target: within 15%.")
print()
print("| run | measured s | predicted s | error |")
print("|---|---|---|---|")
print(f"| 1 worker (the profile itself) | {measured(p1):.3f} | {predict(1):.3f} | "
      f"{(predict(1) - measured(p1)) / measured(p1):+.0%} |")
for name, f in (("2 workers, 1 process", "p2"), ("2 processes (nubo-run)", "pr")):
    m = measured(json.load(open(f"{tmp}/{f}.json")))
    print(f"| {name} | {m:.3f} | {predict(2):.3f} | {(predict(2) - m) / m:+.0%} |")
PY
rm -rf "$tmp"
