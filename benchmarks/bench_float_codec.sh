#!/usr/bin/env bash
# nubo's float codec (zstd over byte planes) against `zstd -3` and nubo's own zstd on model
# weights: PyTorch state dicts (fp32, bf16, fp16) of a trained MLP, and nubo-train's checkpoint
# (parameters and optimizer state); size ratio and packing speed, median of interleaved rounds.
# Writes benchmarks/results/float_codec.md.
# Usage: benchmarks/bench_float_codec.sh [BUILD_DIR]   (default: build; built if needed)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j2 --target nubo-xfer nubo-train >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3  # Debian's, which has PyTorch

# Inputs, each a folder of one kind of tensor file.
"$py" - "$work" <<'PY'
import os, sys, torch
work = sys.argv[1]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(784, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(50):  # trained a little: weights move off their initial distribution
    x = torch.randn(256, 784)
    y = torch.randint(0, 10, (256,))
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)):
    os.makedirs(f"{work}/in-{name}")
    torch.save({k: v.to(dtype) for k, v in model.state_dict().items()},
               f"{work}/in-{name}/state_dict.pt")
PY
"$build/bin/nubo-train" --devices cpu:2 --epochs 2 --checkpoint "$work/ckpt" --quiet >/dev/null
last=$(ls "$work/ckpt"/*.nubo | tail -1)
"$build/bin/nubo-xfer" unpack "$last" -C "$work/in-train" -q

"$py" "$root/benchmarks/bench_float_codec.py" --xfer "$build/bin/nubo-xfer" --work "$work" \
  --inputs fp32 bf16 fp16 train --out "$root/benchmarks/results/float_codec.md" \
  --command "benchmarks/bench_float_codec.sh $(basename "$build")"
echo "written: benchmarks/results/float_codec.md"
