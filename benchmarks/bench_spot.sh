#!/usr/bin/env bash
# A training job on simulated spot capacity against the same job never interrupted:
# nubo-run --max-restarts with nubo-train --checkpoint-every auto, one process SIGKILLed at
# exponentially distributed times (seeded; the mean M set so that about 5 kills happen). Reports
# both wall times, the kills, each restart's time (the kill to the "resumed from" line), the
# measured waste, and what nubo-cost checkpoint predicts for the measured delta, M and restart
# time. Writes benchmarks/results/spot.md.
# Usage: benchmarks/bench_spot.sh [BUILD_DIR]   env: SEED (7), KILLS (5), MTBI (seconds: skips
#        the calibration run that otherwise sets M to the job's length / KILLS)
set -euo pipefail
build=${1:-build}
bin=$build/bin
out=benchmarks/results/spot.md
seed=${SEED:-7}
kills_wanted=${KILLS:-5}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
job=(--devices cpu --batch 64 --epochs 10 --hidden 1024,512 --quiet)
now() { date +%s.%N; }
since() { python3 -c "print(f'{$(now) - $1:.2f}')"; }

# 1. Calibration: the job's length without checkpoints sets M (unless MTBI gives it).
if [ -n "${MTBI:-}" ]; then
  mtbi=$MTBI
else
  t=$(now)
  "$bin/nubo-run" --nproc 2 -- "$bin/nubo-train" "${job[@]}" >"$tmp/cal.log" 2>&1
  calibration=$(since "$t")
  mtbi=$(python3 -c "print(round($calibration / $kills_wanted, 1))")
  echo "calibration ${calibration} s: M = ${mtbi} s" >&2
fi

# 2. Uninterrupted, with the checkpoints the spot run has.
t=$(now)
"$bin/nubo-run" --nproc 2 -- "$bin/nubo-train" "${job[@]}" --checkpoint "$tmp/whole" \
  --checkpoint-every auto --mtbi "${mtbi}s" --profile "$tmp/whole.json" >"$tmp/whole.log" 2>&1
whole=$(since "$t")
echo "uninterrupted ${whole} s" >&2

# 3. On spot: a killer sleeps exponentially distributed times and SIGKILLs a process each time.
python3 -c "
import random
random.seed($seed)
print(' '.join(f'{random.expovariate(1 / $mtbi):.2f}' for _ in range(200)))" >"$tmp/delays"
t=$(now)
"$bin/nubo-run" --nproc 2 --max-restarts 50 --grace 1 -- "$bin/nubo-train" "${job[@]}" \
  --checkpoint "$tmp/spot" --checkpoint-every auto --mtbi "${mtbi}s" >"$tmp/spot.log" 2>&1 &
run=$!
kills=0
restarts=()
for delay in $(cat "$tmp/delays"); do
  sleep "$delay"
  kill -0 "$run" 2>/dev/null || break
  victim=$(awk '{print $NF}' "/proc/$run/task/$run/children" 2>/dev/null || true)
  [ -n "$victim" ] || continue
  resumed=$(grep -c "resumed from" "$tmp/spot.log" || true)
  k=$(now)
  kill -KILL "$victim" 2>/dev/null || continue
  kills=$((kills + 1))
  # The restart: until the job says it resumed (or ends).
  while kill -0 "$run" 2>/dev/null && [ "$(grep -c "resumed from" "$tmp/spot.log" || true)" -le "$resumed" ]; do
    sleep 0.05
  done
  restarts+=("$(since "$k")")
done
wait "$run"
spot=$(since "$t")
echo "spot ${spot} s, ${kills} kills" >&2

delta=$(python3 -c "import json; print(json.load(open('$tmp/whole.json'))['checkpoint']['time_s'])")
restart=$(python3 -c "import statistics; print(statistics.mean([$(IFS=,; echo "${restarts[*]}")] or [0]))")
predicted=$("$bin/nubo-cost" checkpoint --size "$(python3 -c "print(int($delta * 1e9))")" \
  --write-rate 1G --mtbi "${mtbi}s" --restart "${restart}s" --work "${whole}s" --json)
python3 - "$whole" "$spot" "$kills" "$mtbi" "$delta" "$restart" "$predicted" "$build" "$seed" \
  <<'PY' >"$out"
import json, sys, datetime, os
whole, spot, kills, mtbi, delta, restart = map(float, sys.argv[1:7])
p = json.loads(sys.argv[7])["run"]
build, seed = sys.argv[8], sys.argv[9]
measured = spot - whole
predicted = p["lost_work_s"] + p["restart_s"]
print("# Spot: a job interrupted about every M seconds against the same job never interrupted\n")
print(f"Command: `benchmarks/bench_spot.sh {build}` (SEED={seed}), {datetime.date.today()}")
print(f"Machine: {os.cpu_count()} cores. The job: nubo-run --nproc 2 -- nubo-train --devices cpu "
      "--batch 64 --epochs 10 --hidden 1024,512 (all 60,000 rows), --checkpoint-every auto "
      f"--mtbi {mtbi:g}s (M); on spot, nubo-run --max-restarts "
      "and one process SIGKILLed at exponentially distributed times of mean M (seeded).\n")
print("| | value |")
print("|---|---:|")
print(f"| uninterrupted wall time | {whole:.1f} s |")
print(f"| spot wall time | {spot:.1f} s |")
print(f"| kills | {kills:.0f} |")
print(f"| spot / uninterrupted | {spot / whole:.3f} |")
print(f"| delta (measured write time) | {delta:.3f} s |")
print(f"| R (a restart, kill to resumed, mean) | {restart:.2f} s |")
print(f"| Daly's interval for delta and M | {json.loads(sys.argv[7])['daly_interval_s']:.2f} s |")
print(f"| measured waste (spot - uninterrupted) | {measured:.1f} s |")
print(f"| predicted waste (nubo-cost: lost work + restarts) | {predicted:.1f} s |")
print(f"| measured / predicted | {measured / predicted:.2f} |")
print("\n## Targets\n")
ok = spot / whole <= 1.15
print(f"- Wall time at most 1.15x the uninterrupted run's: {spot / whole:.3f}: **{'met' if ok else 'NOT met'}**.")
ok = abs(measured / predicted - 1) <= 0.25
print(f"- Measured waste within 25% of the prediction: {measured / predicted:.2f}: **{'met' if ok else 'NOT met'}**.")
PY
cat "$out"
