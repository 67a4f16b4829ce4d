#!/usr/bin/env bash
# nubo-train as a user runs it: SIGTERM mid-epoch (exit 75 after a checkpoint) then --resume to
# the end; and a two-process run under nubo-run. Needs Debian's dataset-fashion-mnist.
# Usage: cli_test.sh NUBO_TRAIN NUBO_RUN WORKDIR
set -euo pipefail
train=$1 run=$2 work=$3
if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "dataset-fashion-mnist is not installed: skipped"; exit 0
fi
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$work"/*.log; exit 1; }

# 1. SIGTERM mid-epoch. Batch 8 keeps the epoch long (thousands of steps), so the signal lands
# inside it; we send it as soon as the first progress line shows training has started.
"$train" --devices cpu:2 --subset 30000 --batch 8 --epochs 1 --checkpoint "$work/ckpt" \
  --hidden 64 >"$work/first.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do grep -q "^epoch" "$work/first.log" && break; sleep 0.05; done
kill -TERM "$pid"
set +e; wait "$pid"; status=$?; set -e
[ "$status" -eq 75 ] || fail "expected exit status 75 after SIGTERM, got $status"
grep -q "stopped at step" "$work/first.log" || fail "no 'stopped at step' line"
ls "$work"/ckpt/ckpt-*.nubo >/dev/null || fail "no checkpoint after SIGTERM"

# 2. Resume to the end of the epoch.
"$train" --devices cpu:2 --subset 30000 --batch 8 --epochs 1 --checkpoint "$work/ckpt" \
  --hidden 64 --resume --quiet >"$work/resume.log" 2>&1 || fail "resume failed"
grep -q "resumed from .*ckpt-" "$work/resume.log" || fail "did not resume from the checkpoint"
grep -q "test accuracy" "$work/resume.log" || fail "no final line after resuming"

# 3. A corrupt newest checkpoint: the resume falls back with a warning.
newest=$(ls "$work"/ckpt/ckpt-*.nubo | sort | tail -1)
cp "$newest" "$work/ckpt/ckpt-9999999999.nubo"
printf 'garbage' | dd of="$work/ckpt/ckpt-9999999999.nubo" bs=1 seek=100 conv=notrunc 2>/dev/null
"$train" --devices cpu --subset 30000 --batch 8 --epochs 1 --checkpoint "$work/ckpt" \
  --hidden 64 --resume --quiet >"$work/fallback.log" 2>&1 || fail "fallback resume failed"
grep -q "falling back" "$work/fallback.log" || fail "no warning about the corrupt checkpoint"

# 4. Two processes under nubo-run, with a profile.
"$run" --nproc 2 -- "$train" --devices cpu --subset 2000 --epochs 1 --profile "$work/p.json" \
  >"$work/run.log" 2>&1 || fail "nubo-run --nproc 2 failed"
grep -q "test accuracy" "$work/run.log" || fail "no final line under nubo-run"
grep -q '"count": *2' "$work/p.json" || fail "the profile does not count 2 devices"
echo "ok"
