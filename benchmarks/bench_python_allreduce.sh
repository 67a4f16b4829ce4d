#!/usr/bin/env bash
# all_reduce of a 64 MiB NumPy array across 2 host workers from Python, against the same
# collective on a nubo buffer from C++; writes benchmarks/results/python_allreduce.md.
# Usage: benchmarks/bench_python_allreduce.sh [BUILD_DIR]   (default: build; built if needed)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j2 --target bench_allreduce nubo_c >/dev/null
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3  # Debian's, which has NumPy
mkdir -p "$root/benchmarks/results"
NUBO_LIBRARY="$build/lib/libnubo_c.so" PYTHONPATH="$root/capi/python" "$py" \
  "$root/benchmarks/bench_python_allreduce.py" --bench "$build/bin/bench_allreduce" \
  --out "$root/benchmarks/results/python_allreduce.md" \
  --command "benchmarks/bench_python_allreduce.sh $(basename "$build")"
echo "written: benchmarks/results/python_allreduce.md"
