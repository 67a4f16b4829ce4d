#!/usr/bin/env bash
# The preflight's time budget: how long `nubo-smi check` takes against the budget it was given,
# on the host backend (this machine's CPU, and 8 simulated GPUs whose figures are modelled), so
# that "about a minute" and "--quick about 10 s" are measured, not promised. The peer a user
# would run instead, DCGM's `dcgmi diag`, states its levels' durations (level 1 seconds, level 2
# about 2 minutes, level 3 about 15 minutes) and is not installed here: it is named, not run.
# Rounds interleave the budgets; the table gives medians.
#
#   benchmarks/bench_preflight_budget.sh [BUILD_DIR]     RUNS=3 by default
set -euo pipefail
build=${1:-build}
runs=${RUNS:-3}
out="$(cd "$(dirname "$0")" && pwd)/results/preflight_budget.md"
smi=$build/bin/nubo-smi

declare -A times
cases=("--quick" "--budget 20" "--budget 60")
for _ in $(seq "$runs"); do
  for c in "${cases[@]}"; do
    for sim in "" "8xH100-SXM5-80GB"; do
      t0=$(date +%s%N)
      # shellcheck disable=SC2086  # the case is two words
      NUBO_SIM_DEVICES=$sim "$smi" check --no-cuda $c >/dev/null 2>&1 || true
      t1=$(date +%s%N)
      times["$c|$sim"]+="$(((t1 - t0) / 1000000)) "
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'; }
{
  echo "# The preflight's time budget"
  echo
  echo "Command: \`RUNS=$runs benchmarks/bench_preflight_budget.sh $build\` on $(nproc) cores ($(date -u +%Y-%m-%d))"
  echo
  echo "| options | devices | budget s | wall s (median of $runs) | wall / budget |"
  echo "|---|---|---:|---:|---:|"
  for c in "${cases[@]}"; do
    budget=10
    [ "$c" = "--quick" ] || budget=${c#--budget }
    for sim in "" "8xH100-SXM5-80GB"; do
      m=$(echo "${times["$c|$sim"]}" | median)
      printf '| `%s` | %s | %s | %s | %.2f |\n' "$c" "${sim:-the host only}" "$budget" "$m" \
        "$(echo "$m / $budget" | bc -l)"
    done
  done
  echo
  echo "The budget is shared by the measurements (each also pays two warm-up calls), so the wall"
  echo "time stays within it; DCGM's \`dcgmi diag -r 1\` takes seconds, \`-r 2\` about 2 minutes and"
  echo "\`-r 3\` about 15 minutes (NVIDIA's documentation), and compares nothing with the GPU's model."
} | tee "$out"
