#!/usr/bin/env bash
# Planner speed: plan() over a synthetic catalog of 50,000 rows (instance types x regions, as
# the merged public catalogs give once zones collapse into regions) for 100 workloads, against
# the exhaustive reference planner in the same run (benchmarks/cost/bench_plan.cpp). Target:
# under 5 ms per workload. Writes benchmarks/results/cost_planner.md.
set -euo pipefail
build=${1:-build}
rows=${ROWS:-50000}
workloads=${WORKLOADS:-100}
exhaustive=${EXHAUSTIVE:-5}
out="$(cd "$(dirname "$0")" && pwd)/results/cost_planner.md"
bench="$build/bin/nubo-cost-bench"
if [ ! -x "$bench" ]; then
  echo "bench_cost: $bench is missing: build with tests on (cmake --build $build)" >&2
  exit 1
fi
table=$("$bench" --rows "$rows" --workloads "$workloads" --exhaustive-workloads "$exhaustive")
{
  echo "# Cost planner speed"
  echo
  echo "Command: \`benchmarks/bench_cost.sh $build\` (ROWS=$rows WORKLOADS=$workloads" \
    "EXHAUSTIVE=$exhaustive), $(date -u +%Y-%m-%d)"
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
    "(shared with other builds while it ran)"
  echo
  echo "$table"
  echo
  echo "plan() indexes the catalog once per change (rows grouped by hardware shape, prices"
  echo "sorted), runs the time model once per shape x nodes x pricing, cuts by budget with a"
  echo "binary search, merges the sorted lists for the ranking, finds the frontier among each"
  echo "shape's cheapest options, and estimates in full only the plans it returns. The"
  echo "exhaustive reference estimates every option, writes every exclusion, and sorts all."
  echo "Both give the same ranking, frontier and exclusion counts (checked here and in"
  echo "tests/cost/planner_test.cpp)."
} | tee "$out"
