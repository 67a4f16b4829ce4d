#!/usr/bin/env bash
# What a checkpoint costs training: nubo-train's stall per periodic checkpoint with checkpoints
# written synchronously (--sync-checkpoints) against in the background (the default), for about
# 1 MB and 100 MB of state (parameters and SGD momentum), interleaved, medians of ROUNDS
# (default 3). The stall and the write time come from the run's profile (checkpoint.stall_s,
# checkpoint.time_s). Writes benchmarks/results/checkpoint.md.
# Usage: benchmarks/bench_checkpoint.sh [BUILD_DIR]   (default build)
set -euo pipefail
build=${1:-build}
train=$build/bin/nubo-train
out=benchmarks/results/checkpoint.md
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# hidden widths -> state: 784-160-10 is 127,050 parameters (1.0 MB with momentum);
# 784-4096-2304-10 is 12.67 M (101 MB). Checkpoints every N steps, far enough apart that a
# background write ends before the next one starts.
declare -A hidden=([1MB]=160 [100MB]=4096,2304)
declare -A every=([1MB]=40 [100MB]=20)
declare -A steps_rows=([1MB]=25600 [100MB]=6400)
for r in $(seq 1 "$rounds"); do
  for size in 1MB 100MB; do
    for mode in sync async; do
      flag=()
      [ "$mode" = sync ] && flag=(--sync-checkpoints)
      rm -rf "$tmp/ckpt"
      "$train" --devices cpu:2 --hidden "${hidden[$size]}" --subset "${steps_rows[$size]}" \
        --batch 128 --epochs 1 --checkpoint "$tmp/ckpt" --checkpoint-every "${every[$size]}" \
        "${flag[@]}" --fresh --quiet --profile "$tmp/$size.$mode.$r.json" >"$tmp/log" 2>&1 \
        || { cat "$tmp/log" >&2; exit 1; }
    done
  done
  echo "round $r done" >&2
done
python3 - "$tmp" "$rounds" "$build" <<'PY' >"$out"
import json, statistics, sys, datetime, os
tmp, rounds, build = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def med(size, mode, field):
    return statistics.median(json.load(open(f"{tmp}/{size}.{mode}.{r}.json"))["checkpoint"][field]
                             for r in range(1, rounds + 1))
print("# Checkpoints: training stall, synchronous against in the background\n")
print(f"Command: `benchmarks/bench_checkpoint.sh {build}` (ROUNDS={rounds}), "
      f"{datetime.date.today()}")
print(f"Machine: {os.cpu_count()} cores; nubo-train --devices cpu:2, batch 128, SGD; the "
      "checkpoint directory on the local disk (fdatasync on)\n")
print("Stall: the training time one periodic checkpoint stopped the run for (the write itself "
      "when synchronous; the copy of the state in memory, and any wait for the previous write, "
      "in the background). Write: the time to write one checkpoint (staging to rename), "
      f"medians of {rounds} interleaved rounds.\n")
print("| state | write (s) | stall, synchronous (s) | stall, background (s) | background / synchronous |")
print("|---|---:|---:|---:|---:|")
verdicts = []
for size in ("1MB", "100MB"):
    w = med(size, "async", "time_s")
    s = med(size, "sync", "stall_s")
    a = med(size, "async", "stall_s")
    ratio = a / s if s > 0 else float("nan")
    print(f"| {size[:-2]} MB | {w:.4f} | {s:.4f} | {a:.5f} | {ratio:.3f} |")
    verdicts.append(f"- {size[:-2]} MB: background stall at most 10% of synchronous: "
                    f"{ratio:.3f}: **{'met' if ratio <= 0.10 else 'NOT met'}**.")
print("\n## Targets\n")
print("\n".join(verdicts))
PY
cat "$out"
