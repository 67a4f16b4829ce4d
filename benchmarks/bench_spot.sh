#!/usr/bin/env bash
# A training job on simulated spot capacity against the same job never interrupted:
# nubo-run --max-restarts with nubo-train --checkpoint-every auto, one process SIGKILLed at
# exponentially distributed times (seeded; the mean M set so that about 5 kills happen), one run
# per seed. Reports both wall times, the kills, the restarts' time (the kill to the "resumed
# from" line), the measured waste per kill, and what nubo-cost checkpoint predicts per
# interruption for the measured delta, M and restart time. Writes benchmarks/results/spot.md.
# Usage: benchmarks/bench_spot.sh [BUILD_DIR]   env: SEEDS ("7 8 9"), KILLS (5), MTBI (seconds:
#        skips the calibration run that otherwise sets M to the job's length / KILLS)
set -euo pipefail
build=${1:-build}
bin=$build/bin
out=benchmarks/results/spot.md
seeds=${SEEDS:-7 8 9}
kills_wanted=${KILLS:-5}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
job=(--devices cpu --batch 64 --epochs 10 --hidden 1024,512 --quiet)
now() { date +%s.%N; }
since() { python3 -c "print(f'{$(now) - $1:.2f}')"; }

# 1. Calibration: the job's length without checkpoints sets M (unless MTBI gives it).
if [ -n "${MTBI:-}" ]; then
  mtbi=$MTBI
  mtbi_from="given by MTBI"
else
  t=$(now)
  "$bin/nubo-run" --nproc 2 -- "$bin/nubo-train" "${job[@]}" >"$tmp/cal.log" 2>&1
  calibration=$(since "$t")
  mtbi=$(python3 -c "print(round($calibration / $kills_wanted, 1))")
  mtbi_from="the calibration run's length / $kills_wanted"
  echo "calibration ${calibration} s: M = ${mtbi} s" >&2
fi

# 2. Uninterrupted, with the checkpoints the spot run has.
t=$(now)
"$bin/nubo-run" --nproc 2 -- "$bin/nubo-train" "${job[@]}" --checkpoint "$tmp/whole" \
  --checkpoint-every auto --mtbi "${mtbi}s" --profile "$tmp/whole.json" >"$tmp/whole.log" 2>&1
whole=$(since "$t")
echo "uninterrupted ${whole} s" >&2

# 3. On spot, once per seed: a killer sleeps exponentially distributed times and SIGKILLs a
# process each time. A Poisson process with about 5 expected kills gives anywhere from 2 to 10,
# so one seed says little: each run is set against the prediction for the kills it really had.
results=()
started="resumed from\|no checkpoint to resume from"  # what each attempt says first
for seed in $seeds; do
  python3 -c "
import random
random.seed($seed)
print(' '.join(str(round(random.expovariate(1 / $mtbi) * 1000)) for _ in range(200)))" \
    >"$tmp/delays"
  rm -rf "$tmp/spot"
  t=$(now)
  "$bin/nubo-run" --nproc 2 --max-restarts 50 --grace 1 -- "$bin/nubo-train" "${job[@]}" \
    --checkpoint "$tmp/spot" --checkpoint-every auto --mtbi "${mtbi}s" >"$tmp/spot.log" 2>&1 &
  run=$!
  kills=0
  restarts=()
  for delay_ms in $(cat "$tmp/delays"); do
    # The wait for the next kill ends when the job does: the job's wall time is measured, not
    # the killer's last sleep.
    until_ms=$(($(date +%s%3N) + delay_ms))
    while kill -0 "$run" 2>/dev/null && (($(date +%s%3N) < until_ms)); do sleep 0.05; done
    kill -0 "$run" 2>/dev/null || break
    victim=$(awk '{print $NF}' "/proc/$run/task/$run/children" 2>/dev/null || true)
    [ -n "$victim" ] || continue
    resumed=$(grep -c "$started" "$tmp/spot.log" || true)
    k=$(now)
    kill -KILL "$victim" 2>/dev/null || continue
    kills=$((kills + 1))
    # The restart: until the next attempt says where it starts (or the job ends).
    while kill -0 "$run" 2>/dev/null &&
      [ "$(grep -c "$started" "$tmp/spot.log" || true)" -le "$resumed" ]; do
      sleep 0.05
    done
    restarts+=("$(since "$k")")
  done
  wait "$run"
  spot=$(since "$t")
  restart=$(python3 -c "import statistics; print(statistics.mean([$(IFS=,; echo "${restarts[*]}")] or [0]))")
  # The work each kill cost: the step the surviving rank stopped at, less the step the next
  # attempt resumed from.
  lost_steps=$(python3 - "$tmp/spot.log" <<'PY'
import re, sys
lost, failed = 0, None
for line in open(sys.argv[1]):
    if m := re.search(r"nubo-train: failed at step (\d+)", line):
        failed = int(m[1])
    elif failed is not None and (m := re.search(r"resumed from .* at step (\d+)", line)):
        lost, failed = lost + failed - int(m[1]), None
    elif failed is not None and "no checkpoint to resume from" in line:
        lost, failed = lost + failed, None
print(lost)
PY
)
  echo "seed $seed: spot ${spot} s, ${kills} kills, restart ${restart} s, ${lost_steps} steps lost" >&2
  results+=("$seed $spot $kills $restart $lost_steps")
done

delta=$(python3 -c "import json; print(json.load(open('$tmp/whole.json'))['checkpoint']['time_s'])")
# The model's waste per interruption (lost work + restart) for delta, M and each run's restart.
per_kill=()
for r in "${results[@]}"; do
  read -r _ _ _ restart _ <<<"$r"
  p=$("$bin/nubo-cost" checkpoint --size "$(python3 -c "print(int($delta * 1e9))")" \
    --write-rate 1G --mtbi "${mtbi}s" --restart "${restart}s" --work "${whole}s" --json)
  per_kill+=("$(python3 -c "
import json, sys
d = json.loads(sys.argv[1]); r = d['run']
print(r['interruptions'], (r['lost_work_s'] + r['restart_s']) / r['interruptions'], d['daly_interval_s'])" "$p")")
done
# Seconds per step of the uninterrupted run: its training wall time over its steps.
step_s=$(python3 -c "
import json, re
wall = float(re.search(r'wall time ([0-9.]+) s', open('$tmp/whole.log').read())[1])
print(wall / json.load(open('$tmp/whole.json'))['steps'])")
python3 - "$whole" "$mtbi" "$delta" "$build" "$(printf '%s\n' "${results[@]}")" \
  "$(printf '%s\n' "${per_kill[@]}")" "$step_s" "$mtbi_from" <<'PY' >"$out"
import sys, datetime, os, statistics
whole, mtbi, delta = map(float, sys.argv[1:4])
build = sys.argv[4]
runs = [l.split() for l in sys.argv[5].splitlines()]
model = [list(map(float, l.split())) for l in sys.argv[6].splitlines()]
step_s = float(sys.argv[7])
mtbi_from = sys.argv[8]
seeds = " ".join(r[0] for r in runs)
print("# Spot: a job interrupted about every M seconds against the same job never interrupted\n")
print(f"Command: `benchmarks/bench_spot.sh {build}` (SEEDS=\"{seeds}\"), {datetime.date.today()}")
print(f"Machine: {os.cpu_count()} cores. The job: nubo-run --nproc 2 -- nubo-train --devices cpu "
      "--batch 64 --epochs 10 --hidden 1024,512 (all 60,000 rows), --checkpoint-every auto "
      f"--mtbi {mtbi:g}s (M, {mtbi_from}); on spot, nubo-run "
      "--max-restarts and one process SIGKILLed at exponentially distributed times of mean M, "
      "one run per seed.\n")
print(f"Uninterrupted (with the same checkpoints): {whole:.1f} s. delta, the measured write "
      f"time: {delta:.3f} s. Daly's interval for delta and M: {model[0][2]:.2f} s. Expected "
      f"kills for M: {model[0][0]:.1f}.\n")
print("Waste, two ways. By the clock: the spot run's wall time less the uninterrupted run's "
      "(one run each, on a shared machine: a few seconds of noise either way). By its parts, "
      "what the model predicts: each restart's time R (the kill to the \"resumed from\" line) "
      "plus the work redone (the step the surviving rank failed at, less the step the next "
      f"attempt resumed from, at the uninterrupted run's {step_s * 1000:.2f} ms a step). "
      "The prediction is nubo-cost checkpoint's waste per interruption (lost work plus R) for "
      "delta, M and the run's R, times the kills that happened.\n")
print("| seed | kills | spot s | spot / uninterrupted | waste by the clock s | R s | steps redone "
      "| waste by its parts s | per kill s | predicted per kill s | measured / predicted |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
ratios, accuracy = [], []
for (seed, spot, kills, restart, lost), (_, per, _) in zip(runs, model):
    spot, kills, restart, lost = float(spot), int(kills), float(restart), int(lost)
    parts = kills * restart + lost * step_s
    ratios.append(spot / whole)
    if kills:
        accuracy.append(parts / kills / per)
    print(f"| {seed} | {kills} | {spot:.1f} | {spot / whole:.3f} | {spot - whole:.1f} | "
          f"{restart:.2f} | {lost} | {parts:.1f} | "
          + (f"{parts / kills:.2f} | {per:.2f} | {parts / kills / per:.2f} |" if kills else
             f"- | {per:.2f} | - |"))
print("\n## Targets (medians over the seeds)\n")
r = statistics.median(ratios)
print(f"- Wall time at most 1.15x the uninterrupted run's: {r:.3f}: "
      f"**{'met' if r <= 1.15 else 'NOT met'}**.")
a = statistics.median(accuracy) if accuracy else float("nan")
print(f"- Measured waste (by its parts) within 25% of the prediction: {a:.2f}: "
      f"**{'met' if abs(a - 1) <= 0.25 else 'NOT met'}**.")
PY
cat "$out"
