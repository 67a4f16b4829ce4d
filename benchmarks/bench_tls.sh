#!/usr/bin/env bash
# What TLS costs a send: nubo-xfer send with its default TLS 1.3 against the same send with
# --no-encryption, on loopback, of random bytes (incompressible, sent with --codec none, so the
# cipher is what differs), unlimited and at --rate 100M. Runs interleaved (TLS, clear, TLS, ...)
# and the median of RUNS each (default 5). Writes benchmarks/results/tls.md.
#   benchmarks/bench_tls.sh [BUILD_DIR]        env: RUNS, BENCH_DIR, SIZE_MIB (default 256)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-5}
size_mib=${SIZE_MIB:-256}
work=${BENCH_DIR:-/dev/shm/nubo-bench-tls}
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results/tls.md"
xfer="$build/bin/nubo-xfer"
[ -x "$xfer" ] || { echo "bench_tls: $xfer not built" >&2; exit 1; }

mkdir -p "$work/src"
if [ "$(stat -c %s "$work/src/random.bin" 2>/dev/null || echo 0)" != $((size_mib << 20)) ]; then
  head -c $((size_mib << 20)) /dev/urandom >"$work/src/random.bin"
fi
umask 077
head -c 32 /dev/urandom | base64 >"$work/token"
umask 022
rm -rf "$work/dest" && mkdir -p "$work/dest"
"$xfer" serve --listen 127.0.0.1:0 --dest "$work/dest" --token-file "$work/token" --no-sync \
  --quiet >"$work/port" 2>"$work/serve.log" &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true; rm -rf "$work/dest"' EXIT
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(head -n1 "$work/port")

# One send into a fresh subdirectory; prints its seconds.
run() {
  local mode=$1 rate=$2 sub
  sub="r$RANDOM$RANDOM"
  local flags=(--codec none --json -q --token-file "$work/token" --rate "$rate")
  [ "$mode" = clear ] && flags+=(--no-encryption)
  "$xfer" send "$work/src" "127.0.0.1:$port/$sub" "${flags[@]}" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'
  rm -rf "${work:?}/dest/$sub"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

rows=()
for rate in 0 100M; do
  tls=() clear=()
  for _ in $(seq "$runs"); do
    tls+=("$(run tls "$rate")")
    clear+=("$(run clear "$rate")")
  done
  t=$(printf '%s\n' "${tls[@]}" | median)
  c=$(printf '%s\n' "${clear[@]}" | median)
  mb=$((size_mib * 1048576))
  rows+=("$(python3 -c "
t, c, b = $t, $c, $mb
label = 'unlimited' if '$rate' == '0' else '$rate' + 'B/s'
print(f'| {label} | {t:.3f} | {c:.3f} | {b/t/1e6:.0f} | {b/c/1e6:.0f} | {t/c:.2f} |')")")
done

# What the cipher itself costs a core, for reading the table.
aes=$(openssl speed -elapsed -seconds 2 -evp aes-128-gcm 2>/dev/null | tail -1 |
  awk '{sub("k", "", $NF); printf "%.0f", $NF / 1000}')
{
  echo "# TLS on the wire: what encryption costs a send"
  echo
  echo "Command: \`benchmarks/bench_tls.sh\` (RUNS=$runs, ${size_mib} MiB of random bytes, --codec none,"
  echo "loopback, serve --no-sync). Median seconds of $runs interleaved runs each; load average at"
  echo "start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
  echo
  echo "| rate | TLS 1.3 s | --no-encryption s | TLS MB/s | clear MB/s | TLS / clear time |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "The cipher is AES-128-GCM with the token's key (AES-NI): ${aes} MB/s on one core at 16 KiB"
  echo "records (\`openssl speed -evp aes-128-gcm\`). Sender and receiver share this machine's cores, so"
  echo "the unlimited row pays both ends' encryption and decryption, plus a copy each side, out of the"
  echo "same CPU time that moves the data: $((size_mib)) MiB costs about 2 x $((size_mib * 1048576 / 1000000)) MB / ${aes} MB/s"
  echo "of CPU for the cipher alone. Between two machines each end pays half of that, on its own"
  echo "cores. At a rate the link sets (100 MB/s), the cost does not show."
} >"$out"
cat "$out"
