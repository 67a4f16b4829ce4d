#!/usr/bin/env bash
# nubo-train as a user runs it: SIGTERM mid-epoch (exit 75 after a checkpoint), then the same
# command continues to the end (resume is the default with --checkpoint; --fresh starts over);
# two processes under nubo-run; and nubo-run --max-restarts bringing a job whose rank was
# SIGKILLed to the same final parameters as an uninterrupted run. Needs dataset-fashion-mnist.
# Usage: cli_test.sh NUBO_TRAIN NUBO_RUN WORKDIR NUBO_XFER
set -euo pipefail
train=$1 run=$2 work=$3 xfer=$4
if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "dataset-fashion-mnist is not installed: skipped"; exit 77  # ctest: skipped
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

# 2. The same command again continues to the end of the epoch (no --resume needed).
"$train" --devices cpu:2 --subset 30000 --batch 8 --epochs 1 --checkpoint "$work/ckpt" \
  --hidden 64 --quiet >"$work/resume.log" 2>&1 || fail "resume failed"
grep -q "resumed from .*ckpt-" "$work/resume.log" || fail "did not resume from the checkpoint"
grep -q "test accuracy" "$work/resume.log" || fail "no final line after resuming"

# 3. A corrupt newest checkpoint: the resume falls back with a warning.
newest=$(ls "$work"/ckpt/ckpt-*.nubo | sort | tail -1)
cp "$newest" "$work/ckpt/ckpt-9999999999.nubo"
printf 'garbage' | dd of="$work/ckpt/ckpt-9999999999.nubo" bs=1 seek=100 conv=notrunc 2>/dev/null
"$train" --devices cpu --subset 30000 --batch 8 --epochs 1 --checkpoint "$work/ckpt" \
  --hidden 64 --resume --quiet >"$work/fallback.log" 2>&1 || fail "fallback resume failed"
grep -q "falling back" "$work/fallback.log" || fail "no warning about the corrupt checkpoint"
"$train" --devices cpu --subset 2000 --batch 8 --epochs 1 --checkpoint "$work/ckpt" \
  --hidden 64 --fresh --quiet >"$work/fresh.log" 2>&1 || fail "--fresh failed"
! grep -q "resumed from" "$work/fresh.log" || fail "--fresh resumed"

# 4. Two processes under nubo-run, with a profile.
"$run" --nproc 2 -- "$train" --devices cpu --subset 2000 --epochs 1 --profile "$work/p.json" \
  >"$work/run.log" 2>&1 || fail "nubo-run --nproc 2 failed"
grep -q "test accuracy" "$work/run.log" || fail "no final line under nubo-run"
grep -q '"count": *2' "$work/p.json" || fail "the profile does not count 2 devices"

# 5. Restarts: one rank SIGKILLed after the first checkpoint; --max-restarts starts the job
# again, it continues from the newest checkpoint, and ends with the parameters of a run that was
# never interrupted (the same seed). The final checkpoint's params.bin is compared.
job=(--devices cpu --subset 3000 --batch 16 --epochs 2 --hidden 32 --checkpoint-every 40 --quiet)
params() { "$xfer" cat "$(ls "$1"/ckpt-*.nubo | sort | tail -1)" params.bin | sha256sum; }
"$run" --nproc 2 -- "$train" "${job[@]}" --checkpoint "$work/whole" >"$work/whole.log" 2>&1 \
  || fail "the uninterrupted two-process run failed"
"$run" --nproc 2 --max-restarts 2 --grace 1 -- "$train" "${job[@]}" --checkpoint "$work/cut" \
  >"$work/cut.log" 2>&1 &
runpid=$!
for _ in $(seq 1 600); do ls "$work"/cut/ckpt-*.nubo >/dev/null 2>&1 && break; sleep 0.05; done
victim=$(awk '{print $NF}' "/proc/$runpid/task/$runpid/children")  # nubo-run's last rank
[ -n "$victim" ] && kill -KILL "$victim"
set +e; wait "$runpid"; status=$?; set -e
[ "$status" -eq 0 ] || fail "the restarted job exited $status"
grep -q "attempt 1 of 3 failed" "$work/cut.log" || fail "no restart line"
grep -q "resumed from" "$work/cut.log" || fail "the restarted job did not resume"
# The surviving rank says where it stopped, which the next attempt's resume is measured against.
grep -Eq "\[0\] nubo-train: failed at step [0-9]+" "$work/cut.log" || fail "no 'failed at step' line"
[ "$(params "$work/whole")" = "$(params "$work/cut")" ] \
  || fail "the restarted job's parameters differ from the uninterrupted run's"

# 6. Killed at every attempt: it gives up and says how many attempts it made.
set +e
"$run" --nproc 1 --max-restarts 1 -- sh -c 'kill -KILL $$' >"$work/giveup.log" 2>&1
status=$?
set -e
[ "$status" -ne 0 ] || fail "a job killed at every attempt succeeded"
grep -q "failed 2 times" "$work/giveup.log" || fail "no give-up line"
# 7. SIGKILL while a checkpoint is being written in the background (the default): the previous
# checkpoint stays good, and the same command resumes from it and finishes.
wide=(--devices cpu --subset 2000 --batch 16 --epochs 1 --hidden 1024,1024 --checkpoint-every 10)
writing() { compgen -G "$work/async/*.staging-*" >/dev/null || compgen -G "$work/async/*.part" >/dev/null; }
# On a loaded machine the write may end between the look and the kill: then try again.
for attempt in 1 2 3 4 5; do
  rm -rf "$work/async"
  "$train" "${wide[@]}" --checkpoint "$work/async" >"$work/async.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1500); do
    compgen -G "$work/async/ckpt-*.nubo" >/dev/null && writing && break
    sleep 0.02
  done
  kill -KILL "$pid"
  set +e; wait "$pid"; set -e
  writing && break
done
writing || fail "the kill did not land during a background write (5 attempts)"
good=$(ls "$work"/async/ckpt-*.nubo | sort | tail -1)
"$xfer" verify "$good" -q || fail "the checkpoint before the killed write is damaged"
"$train" "${wide[@]}" --checkpoint "$work/async" --quiet >"$work/async-resume.log" 2>&1 \
  || fail "the resume after a kill mid-write failed"
grep -q "resumed from $good" "$work/async-resume.log" || fail "did not resume from $good"
! writing || fail "the killed write's leftovers were not cleared"

# 8. --checkpoint-every auto: the interval Daly's formula gives, said in a line; --mtbi alone
# and a bad --mtbi are refused.
"$train" --devices cpu --subset 2000 --batch 64 --epochs 1 --hidden 32 --checkpoint "$work/auto" \
  --checkpoint-every auto --mtbi 1h >"$work/auto.log" 2>&1 || fail "--checkpoint-every auto failed"
grep -q "^checkpoint interval .*(Daly: .*an interruption every 60 min" "$work/auto.log" \
  || fail "no checkpoint interval line"
for bad in "--mtbi 1h" "--checkpoint-every auto --mtbi 0" "--checkpoint-every auto --mtbi soon"; do
  set +e
  # shellcheck disable=SC2086
  "$train" --devices cpu --subset 100 --epochs 1 --checkpoint "$work/auto" $bad >"$work/bad.log" 2>&1
  status=$?
  set -e
  [ "$status" -ne 0 ] && grep -q -- "--mtbi" "$work/bad.log" || fail "'$bad' was not refused"
done
# An empty --devices would silently mean "the default devices": refused as bad usage.
set +e
"$train" --devices '' >"$work/bad.log" 2>&1
status=$?
set -e
[ "$status" -eq 2 ] && grep -q -- "--devices: is empty" "$work/bad.log" \
  || fail "--devices '' was not refused: $(cat "$work/bad.log")"

echo "ok"
