#!/usr/bin/env bash
# make demo: runs the bundled programs end to end on whatever devices this machine has, then on
# simulated GPUs so the multi-GPU parts can be seen anywhere.
set -euo pipefail
build=${1:-build}
bin="$build/bin"
here=$(cd "$(dirname "$0")" && pwd)

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "nubo-smi: the devices on this machine, and why a GPU is or is not usable"
"$bin/nubo-smi"

step "nubo-smi with 8 simulated A100 SXM4 GPUs (NUBO_SIM_DEVICES=8xA100-SXM4-80GB)"
NUBO_SIM_DEVICES=8xA100-SXM4-80GB "$bin/nubo-smi" --no-cuda

step "nubo-smi topo: their NVLink topology, like nvidia-smi topo -m"
NUBO_SIM_DEVICES=8xA100-SXM4-80GB "$bin/nubo-smi" topo --no-cuda

step "Two NVLink islands of 4 (a pasted nvidia-smi topo -m): choosing 4 GPUs takes one island"
NUBO_SIM_DEVICES=8xA100-SXM4-80GB NUBO_SIM_TOPOLOGY="$here/../tests/data/two_islands.topo" \
  "$bin/nubo-smi" topo --no-cuda --select 4

step "nubo-smi check: the preflight, each GPU against its model; one of 4 simulated H100s trained its PCIe link down to Gen3 x8"
# Exit status 4: degraded, as expected here.
NUBO_SIM_DEVICES=3xH100-SXM5-80GB,1xH100-SXM5-80GB:pcie=3x8 "$bin/nubo-smi" check --no-cuda \
  --budget 3 --no-host | tail -8 || true

step "Data parallelism: 4 simulated GPUs compute with Worker::gemm and sum gradients with all_reduce (examples/data_parallel)"
NUBO_SIM_DEVICES=4xA100-SXM4-80GB NUBO_CUDA=0 "$bin/nubo-data-parallel" --epochs 10

step "A program's own loop in C: two processes under nubo-run join (nubo_team_join) and all-reduce from main() (examples/c/own_loop.c)"
NUBO_CUDA=0 "$bin/nubo-run" -n 2 -- "$bin/nubo-own-loop-c"   # on the CPU: one GPU cannot serve two

if [ -x "$bin/nubo-cuda-stream" ]; then
  step "CUDA: the application's kernel on its own stream, ordered before nubo's all_reduce (examples/cuda)"
  "$bin/nubo-cuda-stream"
fi

step "Transfer: pack the sources into a verified archive, list it, unpack it, compare"
work=$(mktemp -d)
"$bin/nubo-xfer" pack "$here/../lib" "$here/../docs" -o "$work/src.nubo" --quiet
"$bin/nubo-xfer" list "$work/src.nubo" | sed -n 1,5p  # sed reads it all: no SIGPIPE under pipefail
"$bin/nubo-xfer" verify "$work/src.nubo"
"$bin/nubo-xfer" unpack "$work/src.nubo" -C "$work/out" --quiet
diff -r "$here/../lib" "$work/out/lib" && diff -r "$here/../docs" "$work/out/docs" &&
  echo "unpacked tree identical to the source"
rm -rf "$work"

step "Cost: a 7B model trained on 2e9 tokens within 48 h and \$2,000, over 15 clouds' offers"
"$bin/nubo-cost" plan --params 7B --tokens 2e9 --deadline 48h --budget 2000 --spot --zero auto \
  --batch 512 --seq-len 4096 --nodes 1-2 --checkpoint-size 100G --limit 5

if [ -x "$bin/nubo-plan-example" ]; then
  step "Cost from C++: the same question through nubo::cost::plan (examples/cost_plan)"
  "$bin/nubo-plan-example"
fi

step "Cost: serving it at 2,000 tokens/s, 50 ms per token at most"
"$bin/nubo-cost" plan --inference --params 7B --rate 2000 --latency 50ms --limit 5

step "Cost of a queue: five jobs with deadlines over one reserved p4d.24xlarge, on-demand and spot"
work=$(mktemp -d)
"$bin/nubo-cost" schedule "$here/cost_schedule/queue.json" --reserve p4d.24xlarge@us-east-1=1:1y \
  --emit skypilot "$work/jobs"
sed -n 1,12p "$work/jobs/README.md"
rm -rf "$work"

if [ -x "$bin/nubo-train" ] && [ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  step "Train: one epoch of Fashion-MNIST on 2 simulated GPUs, a subset"
  "$bin/nubo-train" --devices sim:2 --subset 6000 --epochs 1
  step "Train: the same at ZeRO stage 2 in bf16 (fp32 master weights), 2 micro-batches a step"
  "$bin/nubo-train" --devices sim:2 --subset 6000 --epochs 1 --zero 2 --precision bf16 --accumulate 2
fi

if [ -x "$bin/nubo-devices-c" ]; then
  step "The C ABI: examples/c/devices.c"
  NUBO_SIM_DEVICES=2xT4,1xV100-SXM2-16GB "$bin/nubo-devices-c"
fi

# Debian's python3 has NumPy and PyTorch (.ci/install-deps); another one on PATH may not.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
if command -v "$py" >/dev/null; then
  step "Python: nubo.discover() through the C ABI"
  NUBO_LIBRARY="$build/lib/libnubo_c.so" PYTHONPATH="$here/../capi/python" \
    NUBO_SIM_DEVICES=4xH100-SXM5-80GB "$py" "$here/python/devices.py"
  if "$py" -c "import numpy" 2>/dev/null; then
    step "Python: NumPy arrays (and PyTorch tensors) all-reduced in place, no copy (examples/python/data_parallel.py)"
    NUBO_LIBRARY="$build/lib/libnubo_c.so" PYTHONPATH="$here/../capi/python" \
      "$py" "$here/python/data_parallel.py"
  fi
  if "$py" -c "import torch.distributed" 2>/dev/null; then
    step "Python: a PyTorch DDP script whose gradients nubo reduces, 2 processes (examples/python/torch_ddp.py)"
    NUBO_LIBRARY="$build/lib/libnubo_c.so" PYTHONPATH="$here/../capi/python" OMP_NUM_THREADS=1 \
      NUBO_CUDA=0 "$bin/nubo-run" -n 2 -- "$py" "$here/python/torch_ddp.py"   # a CPU model
    step "Python: a PyTorch model in one flat bf16 tensor, its Adam state sharded by nubo (ZeRO 1), 2 processes (examples/python/sharded_torch.py)"
    NUBO_LIBRARY="$build/lib/libnubo_c.so" PYTHONPATH="$here/../capi/python" OMP_NUM_THREADS=1 \
      NUBO_CUDA=0 "$bin/nubo-run" -n 2 -- "$py" "$here/python/sharded_torch.py"
  fi
fi
