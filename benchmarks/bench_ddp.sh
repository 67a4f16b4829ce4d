#!/usr/bin/env bash
# PyTorch DDP with nubo's communication hooks against DDP over its own Gloo group, and
# nubo.init() against Team.run, 2 processes under nubo-run; writes
# benchmarks/results/ddp_hook.md. Needs Debian's python3-torch and python3-numpy.
# Usage: benchmarks/bench_ddp.sh [BUILD_DIR]   (default: build; built if needed)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j2 --target nubo-run nubo_c >/dev/null
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3  # Debian's, which has PyTorch and NumPy
mkdir -p "$root/benchmarks/results"
NUBO_LIBRARY="$build/lib/libnubo_c.so" PYTHONPATH="$root/capi/python" "$py" \
  "$root/benchmarks/bench_ddp.py" --runner "$build/bin/nubo-run" \
  --out "$root/benchmarks/results/ddp_hook.md" \
  --command "benchmarks/bench_ddp.sh $(basename "$build")"
echo "written: benchmarks/results/ddp_hook.md"
