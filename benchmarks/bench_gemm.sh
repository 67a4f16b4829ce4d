#!/usr/bin/env bash
# The host backend's GEMM against OpenBLAS called directly; writes benchmarks/results/gemm.md.
# Usage: benchmarks/bench_gemm.sh [BUILD_DIR]   (default: build; built if needed, -j2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j2 --target bench_gemm >/dev/null
mkdir -p "$root/benchmarks/results"
"$build/bin/bench_gemm" --out "$root/benchmarks/results/gemm.md"
echo "written: benchmarks/results/gemm.md"
