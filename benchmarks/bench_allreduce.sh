#!/usr/bin/env bash
# All-reduce bus bandwidth (nccl-tests' busbw) from 1 KiB to 256 MiB:
#  - in one process, teams of 2, 4 and 8 host workers (shared memory), against memcpy
#    bandwidth on this machine -> benchmarks/results/allreduce.md
#  - all_to_all in one process, between 2 processes (shared memory and Gloo) and raw
#    gloo::alltoall, interleaved -> appended to allreduce.md
#  - between 2 processes on this host started by nubo-run: nubo's shared-memory link against
#    nubo over Gloo, raw Gloo and memcpy, interleaved -> appended to allreduce.md
#  - across 2 processes started by nubo-run, nubo's Gloo path against raw Gloo AllreduceRing
#    in the same run -> benchmarks/results/allreduce_gloo.md
# Usage: benchmarks/bench_allreduce.sh [BUILD_DIR]   (default: build; built if needed, -j2)
# MAX_BYTES=N lowers the largest size (default 268435456).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j2 --target bench_allreduce nubo-run >/dev/null
results="$root/benchmarks/results"
mkdir -p "$results"
command="benchmarks/bench_allreduce.sh $(basename "$build")${MAX_BYTES:+ (MAX_BYTES=$MAX_BYTES)}"

"$build/bin/bench_allreduce" local --out "$results/allreduce.md" --command "$command"
NUBO_SIM_DEVICES= "$build/bin/nubo-run" --nproc 2 -- \
  "$build/bin/bench_allreduce" processes --out "$results/allreduce.md" --command "$command" \
  >/dev/null
NUBO_SIM_DEVICES= "$build/bin/nubo-run" --nproc 2 -- \
  "$build/bin/bench_allreduce" all_to_all --out "$results/allreduce.md" --command "$command" \
  >/dev/null
echo "written: benchmarks/results/allreduce.md"

# nubo-run prefixes the table with [0]; rank 0 also writes it to the file as it is.
NUBO_SIM_DEVICES= "$build/bin/nubo-run" --nproc 2 -- \
  "$build/bin/bench_allreduce" gloo --out "$results/allreduce_gloo.md" --command "$command" \
  >/dev/null
cat "$results/allreduce_gloo.md"
echo "written: benchmarks/results/allreduce_gloo.md"
