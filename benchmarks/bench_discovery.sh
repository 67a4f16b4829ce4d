#!/usr/bin/env bash
# Discovery latency: how long until a program knows its devices. nubo-smi --json against the
# peers a user would run instead, when they are installed: nvidia-smi -q -x, and PyTorch's
# torch.cuda.device_count(). Median of repeated runs, in one run of this script.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-20}
out="$(cd "$(dirname "$0")" && pwd)/results/discovery.md"

median_ms() {  # median wall time of "$@" over $runs runs, in milliseconds
  local times=()
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

declare -A ms
ms[nubo-smi --json]=$(median_ms "$build/bin/nubo-smi" --json)
ms[nubo-smi --json (8 sim GPUs)]=$(NUBO_SIM_DEVICES=8xA100-SXM4-80GB median_ms "$build/bin/nubo-smi" --json)
if command -v nvidia-smi >/dev/null; then ms[nvidia-smi -q -x]=$(median_ms nvidia-smi -q -x); fi
if python3 -c "import torch" 2>/dev/null; then
  ms[torch.cuda.device_count()]=$(median_ms python3 -c "import torch; torch.cuda.device_count()")
fi

base=${ms[nubo-smi --json]}
{
  echo "# Discovery latency"
  echo
  echo "Command: \`benchmarks/bench_discovery.sh $build\` (RUNS=$runs), $(date -u +%Y-%m-%d)"
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
    "GPU driver: $(command -v nvidia-smi >/dev/null && echo present || echo none)"
  echo
  echo "| program | median ms | ratio to nubo-smi --json |"
  echo "|---|---:|---:|"
  for k in "${!ms[@]}"; do
    awk -v k="$k" -v v="${ms[$k]}" -v b="$base" 'BEGIN {printf "| %s | %.1f | %.2f |\n", k, v, v / b}'
  done | sort
  command -v nvidia-smi >/dev/null || echo "| nvidia-smi -q -x | n/a (no driver here) | |"
  python3 -c "import torch" 2>/dev/null || echo "| torch.cuda.device_count() | n/a (PyTorch not installed) | |"
} | tee "$out"
