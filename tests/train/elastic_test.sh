#!/usr/bin/env bash
# An elastic job (nubo-run --nnodes 1:2) on two "nodes" of this machine that meet in a shared
# folder: node 1 is lost for good (its nubo-run and its process SIGKILLed, as a reclaimed spot
# machine is) after the first checkpoint; node 0's next round forms without it once the
# rendezvous timeout has passed, and the trainer resumes on the smaller world and finishes.
# Then the errors: a late node after the job ended, a tcp:// store, and bad --nnodes.
# Needs dataset-fashion-mnist. Usage: elastic_test.sh NUBO_TRAIN NUBO_RUN WORKDIR
set -euo pipefail
train=$1 run=$2 work=$3
if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "dataset-fashion-mnist is not installed: skipped"; exit 77  # ctest: skipped
fi
rm -rf "$work"; mkdir -p "$work" "$work/rdzv"  # the shared folder, as each node would mount it
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f:"; cat "$f"; done; exit 1; }

node() {  # node RANK: one node's nubo-run
  "$run" --nnodes 1:2 --node-rank "$1" --nproc 1 --rendezvous "file://$work/rdzv" \
    --job-id el1 --max-restarts 2 --rendezvous-timeout 2s --grace 1 -- \
    "$train" --devices cpu --subset 20000 --batch 16 --epochs 3 --hidden 32 \
    --checkpoint-every 40 --checkpoint "$work/ckpt" --quiet >"$work/node$1.log" 2>&1 &
}
node 0
pid0=$!
node 1
pid1=$!
for _ in $(seq 1 600); do ls "$work"/ckpt/ckpt-*.nubo >/dev/null 2>&1 && break; sleep 0.05; done
grep -q "round 0: 2 of 2 nodes" "$work/node0.log" || fail "the first round did not hold both nodes"
# The whole node: its nubo-run and its process (in a process group of its own).
victims="$pid1 $(cat "/proc/$pid1/task/$pid1/children")"
kill -KILL $victims
set +e; wait "$pid0"; status=$?; set -e
[ "$status" -eq 0 ] || fail "the elastic job exited $status after losing a node"
grep -q "round 1: 1 of 2 nodes" "$work/node0.log" || fail "no round without the lost node"
grep -q "resumed from" "$work/node0.log" || fail "the smaller job did not resume"
grep -q "test accuracy" "$work/node0.log" || fail "the smaller job did not finish"

# The job has ended: a node that comes now is told so and stops.
set +e
"$run" --nnodes 1:2 --node-rank 1 --rendezvous "file://$work/rdzv" --job-id el1 -- true \
  >"$work/late.log" 2>&1
status=$?
set -e
[ "$status" -eq 0 ] || fail "a node joining a finished job exited $status"
grep -q "has finished" "$work/late.log" || fail "a late node was not told the job finished"

# Refused with exit 2, naming what is wrong.
refused() {  # refused WHAT ARGS...: nubo-run ARGS must exit 2 and say WHAT
  local what=$1; shift
  set +e; "$run" "$@" -- true >"$work/refused.log" 2>&1; local s=$?; set -e
  [ "$s" -eq 2 ] && grep -q -- "$what" "$work/refused.log" || fail "not refused ($s): $*"
}
refused "outlives every node" --nnodes 1:2 --master-addr 127.0.0.1
refused "not a node count" --nnodes 2:1 --rendezvous "file://$work/x" --job-id j
refused "not a node count" --nnodes 0:x --rendezvous "file://$work/x" --job-id j
refused "rendezvous-timeout" --nnodes 1:2 --rendezvous-timeout soon --rendezvous "file://$work/x" --job-id j
echo "elastic_test: ok"
