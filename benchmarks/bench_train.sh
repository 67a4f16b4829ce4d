#!/usr/bin/env bash
# nubo-train throughput on the CPU: 1 and 2 workers in one process, 2 processes under nubo-run;
# and the communication exposed on the critical path with gradient buckets (overlapping
# backward) against one all-reduce after backward. Writes benchmarks/results/train.md.
# Usage: benchmarks/bench_train.sh [BUILD_DIR]   (default build-train)
set -euo pipefail
build=${1:-build-train}
bin=$build/bin
out=benchmarks/results/train.md
tmp=$(mktemp -d)
common=(--epochs 2 --batch 256 --quiet)
field() { python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
run() {  # name, profile, command...
  local name=$1 prof=$2; shift 2
  "$@" --profile "$prof" >"$tmp/$name.log" 2>&1
  printf "| %s | %.0f | %.3f | %.3f | %.3f | %s |\n" "$name" \
    "$(field "$prof" 'p["samples_per_s"]')" "$(field "$prof" 'p["per_step"]["wall_s"]*1e3')" \
    "$(field "$prof" 'p["per_step"]["compute_s"]*1e3')" \
    "$(field "$prof" 'p["per_step"]["communication_s"]*1e3')" \
    "$(grep -o 'test accuracy [0-9.]*' "$tmp/$name.log" | awk '{print $3}')"
}
{
  echo "# nubo-train on the CPU"
  echo
  echo "Command: \`benchmarks/bench_train.sh $build\` on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(date -u +%F)."
  echo "Fashion-MNIST, MLP 784-256-128-10, global batch 256, 2 epochs, SGD momentum, cosine lr."
  echo
  echo "| run | samples/s | step ms | compute ms | exposed comm ms | test acc |"
  echo "|---|---|---|---|---|---|"
  run "1 worker" "$tmp/p1.json" "$bin/nubo-train" --devices cpu "${common[@]}"
  run "2 workers, 1 process" "$tmp/p2.json" "$bin/nubo-train" --devices cpu:2 "${common[@]}"
  run "2 processes (nubo-run)" "$tmp/pr.json" "$bin/nubo-run" --nproc 2 -- "$bin/nubo-train" --devices cpu "${common[@]}"
  echo
  echo "## Overlap: exposed communication, buckets against one all-reduce"
  echo
  echo "| 2 workers, 1 process | samples/s | step ms | compute ms | exposed comm ms | test acc |"
  echo "|---|---|---|---|---|---|"
  run "no buckets (--bucket-mb 0)" "$tmp/b0.json" "$bin/nubo-train" --devices cpu:2 --bucket-mb 0 "${common[@]}"
  run "buckets of 0.25 MB (3 buckets)" "$tmp/b1.json" "$bin/nubo-train" --devices cpu:2 --bucket-mb 0.25 "${common[@]}"
  e0=$(field "$tmp/b0.json" 'p["per_step"]["communication_s"]')
  e1=$(field "$tmp/b1.json" 'p["per_step"]["communication_s"]')
  echo
  echo "Fraction of the unbucketed communication hidden by the overlap: $(python3 -c "print(f'{1-$e1/$e0:.2f}')")"
} | tee "$out"
rm -rf "$tmp"
