#!/usr/bin/env bash
# nubo-run --watch-health, with the fake NVML: an XID raised during a job (appended to the fake's
# scenario file, as the driver would raise it) stops the job within the interval, naming the GPU
# and the XID, with status 75; with --exclude-unhealthy and --max-restarts the job starts again
# without that GPU. Simulated GPU 0 and the fake's GPU 0 share a PCI address (00000000:10:00.0).
set -u
nubo_run=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FAKE_NVML_SCENARIO=$tmp/scenario.txt
fail() {
  echo "FAIL: $*"
  exit 1
}

# The job: its first attempt raises XID 79 on GPU 0 (after the watch has read the healthy
# state), then works on; a later attempt prints the GPUs it was given and ends.
cat >"$tmp/job.sh" <<'JOB'
if [ "$NUBO_RESTART_COUNT" = 0 ]; then
  sleep 1
  echo "gpu 0 xid 79" >>"$FAKE_NVML_SCENARIO"
  exec sleep 60
fi
echo "visible: ${CUDA_VISIBLE_DEVICES:-all}"
JOB

: >"$FAKE_NVML_SCENARIO"
start=$(date +%s)
out=$("$nubo_run" --watch-health 0.2 -n 1 -- sh "$tmp/job.sh" 2>&1)
rc=$?
elapsed=$(($(date +%s) - start))
echo "$out"
[ $rc -eq 75 ] || fail "exit status $rc, expected 75"
echo "$out" | grep -q "GPU 0 (00000000:10:00.0) failed: XID 79" || fail "the GPU and the XID are not named"
echo "$out" | grep -q "action: drain-node" || fail "the action is not named"
[ $elapsed -lt 20 ] || fail "the job was not stopped soon after the XID ($elapsed s)"

: >"$FAKE_NVML_SCENARIO"
out=$("$nubo_run" --watch-health 0.2 --exclude-unhealthy --max-restarts 1 -n 1 -- sh "$tmp/job.sh" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "exit status $rc after the restart without the GPU"
echo "$out" | grep -q "leaving GPU 0" || fail "GPU 0 was not left out"
echo "$out" | grep -q "visible: GPU-" || fail "the restarted job did not get CUDA_VISIBLE_DEVICES"
echo PASS
