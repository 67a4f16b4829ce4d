#!/usr/bin/env bash
# The sharded optimizer on this machine, in one run; writes benchmarks/results/sharded.md:
#  1. memory per worker at each ZeRO stage for 1, 2 and 4 workers (bench_sharded memory),
#     measured with bytes_in_use against the formulas;
#  2. the step of a flat 8M-parameter Adam model, 2 processes under nubo-run (shared memory,
#     then Gloo over loopback), replicated against stages 1-3 and against gradients carried in
#     bf16, interleaved round by round (medians of ROUNDS, default 5), with where the time goes
#     and the bytes each worker puts on the wire;
#  3. nubo-train on Fashion-MNIST, 2 processes, 10 epochs: test accuracy for f32 replicated,
#     ZeRO 1, 2, 3, bf16, fp16 and bf16-compressed gradients; the final parameters compared
#     bit for bit with the replicated run's (from each run's last checkpoint).
# Usage: benchmarks/bench_sharded.sh [BUILD_DIR]   (default build; EPOCHS=10)
set -euo pipefail
build=${1:-build}
bin=$build/bin
out=benchmarks/results/sharded.md
rounds=${ROUNDS:-5}
epochs=${EPOCHS:-10}
params=8388608
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin/bench_sharded" memory "$params" >"$tmp/memory.md"

steps=(s0 s1 s2 s3 w16 g0 g1 gw16)
declare -A step_cmd=(
  [s0]="$bin/nubo-run -n 2 -- $bin/bench_sharded step 0 $params 10"
  [s1]="$bin/nubo-run -n 2 -- $bin/bench_sharded step 1 $params 10"
  [s2]="$bin/nubo-run -n 2 -- $bin/bench_sharded step 2 $params 10"
  [s3]="$bin/nubo-run -n 2 -- $bin/bench_sharded step 3 $params 10"
  [w16]="$bin/nubo-run -n 2 -- $bin/bench_sharded step 0 $params 10 bf16"
  [g0]="env NUBO_SHM_DISABLE=1 $bin/nubo-run -n 2 -- $bin/bench_sharded step 0 $params 10"
  [g1]="env NUBO_SHM_DISABLE=1 $bin/nubo-run -n 2 -- $bin/bench_sharded step 1 $params 10"
  [gw16]="env NUBO_SHM_DISABLE=1 $bin/nubo-run -n 2 -- $bin/bench_sharded step 0 $params 10 bf16"
)
for r in $(seq 1 "$rounds"); do
  for name in "${steps[@]}"; do
    ${step_cmd[$name]} 2>&1 | grep -o '{.*}' >>"$tmp/step.$name"
  done
  echo "step round $r done" >&2
done

declare -A train_cmd=(
  [f32]=""
  [zero1]="--zero 1"
  [zero2]="--zero 2"
  [zero3]="--zero 3"
  [bf16]="--zero 1 --precision bf16"
  [fp16]="--zero 1 --precision fp16"
  [wire]="--grad-compression bf16"
  [wire_ef]="--grad-compression bf16 --error-feedback"
)
trains=(f32 zero1 zero2 zero3 bf16 fp16 wire wire_ef)
for name in "${trains[@]}"; do
  # shellcheck disable=SC2086
  "$bin/nubo-run" -n 2 -- "$bin/nubo-train" --devices cpu --epochs "$epochs" --quiet \
    --checkpoint "$tmp/ckpt.$name" --fresh --profile "$tmp/train.$name.json" \
    ${train_cmd[$name]} >"$tmp/train.$name.log" 2>&1
  last=$(ls "$tmp/ckpt.$name"/ckpt-*.nubo | sort | tail -1)
  mkdir -p "$tmp/params.$name"
  "$bin/nubo-xfer" unpack "$last" -C "$tmp/params.$name" >/dev/null
  echo "train $name done" >&2
done

python3 - "$tmp" "$rounds" "$epochs" "$params" "$build" <<'PY' >"$out"
import hashlib, json, re, statistics, sys
tmp, rounds, epochs, params, build = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
print("# The sharded optimizer: memory, step time, wire bytes and accuracy\n")
print(f"Command: `benchmarks/bench_sharded.sh {build}` on this machine (2 cores).\n")
print("## Memory per worker (bytes_in_use) against the formulas\n")
print(f"{params:,} parameters in bf16 with Adam (fp32 master, m, v), 16 slices, simulated "
      "A100 workers in one process; measured after a step, with the buffers an application "
      "keeps at each stage (a slice's gradient buffer at stages 2-3 is reused and not counted). "
      "Formula: docs/sharded.md.\n")
print(open(f"{tmp}/memory.md").read())

def load(name):
    return [json.loads(l) for l in open(f"{tmp}/step.{name}")]
def med(rows, key):
    return statistics.median(r[key] for r in rows)
labels = {
    "s0": "replicated (stage 0), shared memory", "s1": "stage 1, shared memory",
    "s2": "stage 2, shared memory", "s3": "stage 3, shared memory",
    "w16": "replicated, gradients as bf16, shared memory",
    "g0": "replicated, Gloo over loopback", "g1": "stage 1, Gloo over loopback",
    "gw16": "replicated, gradients as bf16, Gloo over loopback",
}
print("## Step time, 2 processes\n")
print(f"A flat {params:,}-parameter f32 model with Adam in 8 slices, each reduced as backward "
      "would produce it; medians of {} interleaved rounds of 10 steps. Wire bytes: what each "
      "worker sends under ring algorithms (an all-reduce 2(n-1)/n of the data, a reduce-scatter "
      "or all-gather (n-1)/n).\n".format(rounds))
print("| run | step ms | waiting for the reduction ms | update (+ all-gather) ms | vs replicated | wire MB per step |")
print("|---|---:|---:|---:|---:|---:|")
base = {"s": med(load("s0"), "step_ms"), "g": med(load("g0"), "step_ms")}
for name in ["s0", "s1", "s2", "s3", "w16", "g0", "g1", "gw16"]:
    rows = load(name)
    ref = base["g" if name.startswith("g") else "s"]
    print(f"| {labels[name]} | {med(rows, 'step_ms'):.2f} | {med(rows, 'reduce_wait_ms'):.2f} | "
          f"{med(rows, 'update_ms'):.2f} | {med(rows, 'step_ms') / ref:.2f} | "
          f"{med(rows, 'bytes_per_step') / 1e6:.1f} |")
w = med(load("w16"), "bytes_per_step") / med(load("s0"), "bytes_per_step")
print(f"\nGradients as bf16 put {w:.2f}x the replicated f32 run's bytes on the wire.\n")

print(f"## Fashion-MNIST, 2 processes, {epochs} epochs\n")
print("nubo-train (MLP 784-256-128-10, SGD with momentum, cosine lr, batch 128) under "
      "`nubo-run -n 2`; parameters compared with the f32 replicated run's final checkpoint.\n")
print("| run | test accuracy | vs f32 (points) | step ms | parameters vs replicated |")
print("|---|---:|---:|---:|---|")
names = {"f32": "f32, replicated", "zero1": "f32, ZeRO 1", "zero2": "f32, ZeRO 2",
         "zero3": "f32, ZeRO 3", "bf16": "bf16, ZeRO 1 (fp32 master)",
         "fp16": "fp16, ZeRO 1 (fp32 master, loss scaling)", "wire": "f32, gradients as bf16",
         "wire_ef": "f32, gradients as bf16 with error feedback"}
def acc(name):
    m = re.search(r"test accuracy ([0-9.]+)", open(f"{tmp}/train.{name}.log").read())
    return float(m.group(1))
def params_of(name):
    return open(f"{tmp}/params.{name}/params.bin", "rb").read()
import array
ref_p = array.array("f", params_of("f32"))
for name in names:
    prof = json.load(open(f"{tmp}/train.{name}.json"))
    p = array.array("f", params_of(name))
    if p.tobytes() == ref_p.tobytes():
        same = "bit for bit"
    else:
        same = f"max difference {max(abs(a - b) for a, b in zip(p, ref_p)):.2e}"
    print(f"| {names[name]} | {acc(name):.4f} | {100 * (acc(name) - acc('f32')):+.2f} | "
          f"{prof['per_step']['wall_s'] * 1e3:.3f} | {same} |")
PY
cat "$out"
