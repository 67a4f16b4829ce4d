#!/usr/bin/env bash
# Sending over the network on loopback (127.0.0.1 only): nubo-xfer send/serve against rsync 3.x
# as a daemon, the resume after an interruption at 50%, and codec auto against each fixed codec.
#   1. nubo-xfer send --rate R   vs   rsync -a -z --zc=zstd --partial --bwlimit=R (daemon), at
#      100 MB/s and 1 GB/s, and on 256 MiB of Linux source at 100 MB/s. Same corpus, fresh
#      destination each run; neither side fsyncs (serve --no-sync; rsync never does).
# Every row also shows its floor, max(wire bytes / rate, CPU seconds of both ends / cores), the
# CPU measured for that tool in that run (the client's, and the server's from /proc), and the
# time over that floor: how far from the machine's limit the tool runs.
#   2. Resume: a full send at 100 MB/s, then a send cancelled when half of the bytes are done
#      (the Python binding's progress callback returns False at 50%), then the same send again;
#      the resumed run's bytes on the wire against the full run's.
#   3. --codec auto against zstd, lz4 and none at 10 MB/s, 100 MB/s, 1 GB/s and unlimited.
# Corpus (in tmpfs, BENCH_DIR): copies of /usr/include and /usr/share/doc (text, many small
# files; doc has some .gz) and 32 MiB of random bytes, about 300 MB; and the Linux tree of
# corpus.sh (Debian's linux-source-6.1). The codec sweep at 10 MB/s
# uses /usr/include and the random file only (about 170 MB), to keep the run short.
# The median of RUNS runs (default 5; the 10 MB/s rows run once): this machine is shared and
# single runs vary by 10-15%. Writes benchmarks/results/net.md.
#   benchmarks/bench_net.sh [BUILD_DIR]        env: RUNS, BENCH_DIR
set -euo pipefail
build=${1:-build}
runs=${RUNS:-5}
work=${BENCH_DIR:-/dev/shm/nubo-bench-net}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/corpus.sh"
repo=$(cd "$here/.." && pwd)
out="$here/results/net.md"
build=$(cd "$build" && pwd)
xfer="$build/bin/nubo-xfer"
libc="$build/lib/libnubo_c.so"
[ -x "$xfer" ] || { echo "bench_net: $xfer not built" >&2; exit 1; }

# The peer, rsync 3.x, and the Linux source are Debian packages.
need=()
for p in rsync linux-source-6.1; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  if [ "$(id -u)" -ne 0 ]; then echo "bench_net: install ${need[*]}" >&2; exit 1; fi
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${need[@]}" >/dev/null
fi

mkdir -p "$work"
corpus="$work/corpus"
small="$work/corpus-small"
if [ ! -d "$corpus" ]; then
  mkdir -p "$corpus.tmp"
  cp -a /usr/include "$corpus.tmp/include"
  cp -a /usr/share/doc "$corpus.tmp/doc"
  head -c $((32 << 20)) /dev/urandom >"$corpus.tmp/random.bin"
  find "$corpus.tmp" -type l -delete  # dangling links in doc/ would only test the tools' errors
  mv "$corpus.tmp" "$corpus"
fi
if [ ! -d "$small" ]; then
  mkdir -p "$small"
  cp -a "$corpus/include" "$corpus/random.bin" "$small/"
fi
kernel="$work/linux"
linux_tree "$kernel"
size_of() { du -sb --apparent-size "$1" | cut -f1; }
bytes=$(size_of "$corpus")
kernel_bytes=$(size_of "$kernel")
small_bytes=$(size_of "$small")
load=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the two servers ------------------------------------------------------------------------
umask 077
head -c 32 /dev/urandom | base64 >"$work/token"
umask 022
dest="$work/dest"
rdest="$work/rsync-dest"
mkdir -p "$dest" "$rdest"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

"$xfer" serve --listen 127.0.0.1:0 --dest "$dest" --mkdir --token-file "$work/token" --no-sync \
  >"$work/serve.port" 2>"$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/serve.port" ] && break; sleep 0.05; done
port=$(head -n1 "$work/serve.port")
serve_pid=${pids[-1]}
[ -n "$port" ] || { echo "bench_net: nubo-xfer serve did not start" >&2; exit 1; }

rport=$((20000 + RANDOM % 20000))
cat >"$work/rsyncd.conf" <<EOF
address = 127.0.0.1
port = $rport
use chroot = no
pid file = $work/rsyncd.pid
log file = $work/rsyncd.log
[bench]
  path = $rdest
  read only = no
  uid = $(id -u)
  gid = $(id -g)
EOF
rsync --daemon --no-detach --config="$work/rsyncd.conf" &
pids+=($!)
rsyncd_pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$rport") 2>/dev/null && break; sleep 0.05; done

now_ns() { date +%s%N; }
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
ticks=$(getconf CLK_TCK)
# CPU milliseconds a server process has used, its reaped children included (rsync's daemon
# forks one per connection).
server_cpu_ms() { awk -v t="$ticks" '{print int(($14 + $15 + $16 + $17) * 1000 / t)}' "/proc/$1/stat"; }
# The client's CPU milliseconds, from bash's `time` (user + system, children included).
TIMEFORMAT='%3U %3S'
client_cpu_ms() { awk '{print int(($1 + $2) * 1000)}' "$work/client.time"; }

# nubo_send SRC RATE CODEC -> "ms wire_bytes cpu_ms" (a fresh destination each time)
nubo_send() {
  rm -rf "$dest/run"
  local t0 t1 c0 c1
  c0=$(server_cpu_ms "$serve_pid")
  t0=$(now_ns)
  { time "$xfer" send "$1" "127.0.0.1:$port/run" --token-file "$work/token" --rate "$2" \
    --codec "$3" --json -q >"$work/send.json"; } 2>"$work/client.time"
  t1=$(now_ns)
  c1=$(server_cpu_ms "$serve_pid")
  echo "$(((t1 - t0) / 1000000)) $(json_field "['wire_bytes']" <"$work/send.json")" \
    "$((c1 - c0 + $(client_cpu_ms)))"
}
# rsync_send SRC RATE -> "ms wire_bytes cpu_ms" (sent bytes as rsync --stats counts them)
rsync_send() {
  rm -rf "${rdest:?}"/*
  local t0 t1 c0 c1 bw=()
  [ "$2" -gt 0 ] && bw=(--bwlimit=$(($2 / 1024)))
  c0=$(server_cpu_ms "$rsyncd_pid")
  t0=$(now_ns)
  { time rsync -a -z --zc=zstd --partial --stats "${bw[@]}" "$1" \
    "rsync://127.0.0.1:$rport/bench/" >"$work/rsync.stats"; } 2>"$work/client.time"
  t1=$(now_ns)
  sleep 0.2  # the daemon reaps its connection's processes
  c1=$(server_cpu_ms "$rsyncd_pid")
  local sent
  sent=$(sed -n 's/^Total bytes sent: \([0-9,.]*\).*/\1/p' "$work/rsync.stats" | tr -d ',.')
  echo "$(((t1 - t0) / 1000000)) $sent $((c1 - c0 + $(client_cpu_ms)))"
}
# floor_ms WIRE RATE CPU_MS -> max(wire / rate, cpu / cores) in ms (rate 0: unlimited)
floor_ms() {
  python3 -c "print(round(max($1 / $2 * 1000 if $2 else 0, $3 / $(nproc))))"
}
median_of() {  # N command... -> the run with the median ms (the lower middle one for even N)
  local n=$1 r
  shift
  for r in $(seq "$n"); do "$@"; done | sort -n | sed -n "$(((n + 1) / 2))p"
}
mbs() { python3 -c "print(f'{$1 / ($2 / 1000) / 1e6:.0f}')"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

# ---- 1. nubo against rsync ------------------------------------------------------------------
peer_rows=()
peer_targets=()
floor_targets=()
for case in "mixed 100000000" "mixed 1000000000" "linux 100000000"; do
  read -r name rate <<<"$case"
  if [ "$name" = linux ]; then src=$kernel src_bytes=$kernel_bytes; else src=$corpus src_bytes=$bytes; fi
  n=$(median_of "$runs" nubo_send "$src" "$rate" auto)
  r=$(median_of "$runs" rsync_send "$src/" "$rate")
  read -r nms nwire ncpu <<<"$n"
  read -r rms rwire rcpu <<<"$r"
  nfloor=$(floor_ms "$nwire" "$rate" "$ncpu")
  rfloor=$(floor_ms "$rwire" "$rate" "$rcpu")
  label="$name, $((rate / 1000000)) MB/s"
  peer_rows+=("| $label | nubo-xfer send --codec auto --rate $rate | $nms | $(mbs "$src_bytes" "$nms") | $nwire | $ncpu | $nfloor | $(ratio "$nms" "$nfloor") | $(ratio "$nms" "$rms") |")
  peer_rows+=("| $label | rsync -a -z --zc=zstd --partial --bwlimit=$((rate / 1024)) (daemon) | $rms | $(mbs "$src_bytes" "$rms") | $rwire | $rcpu | $rfloor | $(ratio "$rms" "$rfloor") | 1.00 |")
  verdict=$(python3 -c "print('met' if $nms <= 0.5 * $rms else 'NOT met')")
  peer_targets+=("- $label: nubo takes at most half of rsync's time: nubo/rsync = $(ratio "$nms" "$rms"): **$verdict**.")
  verdict=$(python3 -c "print('met' if $nms <= 1.25 * $nfloor else 'NOT met')")
  floor_targets+=("- $label: nubo within 1.25x its floor: $(ratio "$nms" "$nfloor"): **$verdict**.")
done

# ---- 2. resume after an interruption at 50% -------------------------------------------------
rm -rf "$dest/resume"
full=$(PYTHONPATH="$repo/capi/python" NUBO_LIBRARY="$libc" python3 - "$corpus" "$port" "$work/token" <<'EOF'
import sys, shutil, os
from nubo import net
from nubo.errors import NuboError, Status
src, port, token = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().strip()
to = f"127.0.0.1:{port}"
full = net.send(src, f"{to}/full", token=token, rate=100e6)
try:
    net.send(src, f"{to}/resume", token=token, rate=100e6, progress=lambda p: p.fraction < 0.5)
    raise SystemExit("the send was not cancelled")
except NuboError as e:
    if e.status != Status.CANCELLED:
        raise
again = net.send(src, f"{to}/resume", token=token, rate=100e6)
print(full.wire_bytes, full.bytes_sent, again.wire_bytes, again.bytes_sent, again.bytes_resumed,
      again.bytes)
EOF
)
read -r full_wire full_sent res_wire res_sent res_resumed res_bytes <<<"$full"
rm -rf "$dest/full" "$dest/resume"
res_ratio=$(ratio "$res_wire" "$full_wire")
verdict=$(python3 -c "print('met' if $res_wire <= 0.52 * $full_wire else 'NOT met')")

# ---- 3. codec auto against the fixed codecs -------------------------------------------------
codec_rows=()
codec_targets=()
for rate in 10000000 100000000 1000000000 0; do
  if [ "$rate" = 10000000 ]; then src=$small n_runs=1 src_bytes=$small_bytes
  else src=$corpus n_runs=$runs src_bytes=$bytes; fi
  label=$([ "$rate" = 0 ] && echo unlimited || echo "$((rate / 1000000)) MB/s")
  declare -A ms=() wire=() cpu=()
  for codec in auto zstd lz4 none; do
    read -r ms[$codec] wire[$codec] cpu[$codec] <<<"$(median_of "$n_runs" nubo_send "$src" "$rate" "$codec")"
  done
  best_fixed=zstd
  for codec in lz4 none; do
    [ "${ms[$codec]}" -lt "${ms[$best_fixed]}" ] && best_fixed=$codec
  done
  for codec in auto zstd lz4 none; do
    f=$(floor_ms "${wire[$codec]}" "$rate" "${cpu[$codec]}")
    codec_rows+=("| $label | $codec | ${ms[$codec]} | $(mbs "$src_bytes" "${ms[$codec]}") | ${wire[$codec]} | ${cpu[$codec]} | $f | $(ratio "${ms[$codec]}" "$f") | $(ratio "${ms[$codec]}" "${ms[$best_fixed]}") |")
  done
  f=$(floor_ms "${wire[auto]}" "$rate" "${cpu[auto]}")
  verdict_f=$(python3 -c "print('met' if ${ms[auto]} <= 1.25 * $f else 'NOT met')")
  floor_targets+=("- codec auto, $label: within 1.25x its floor: $(ratio "${ms[auto]}" "$f"): **$verdict_f**.")
  verdict_c=$(python3 -c "print('met' if ${ms[auto]} <= 1.10 * ${ms[$best_fixed]} else 'NOT met')")
  codec_targets+=("- $label: auto/$best_fixed (best fixed) = $(ratio "${ms[auto]}" "${ms[$best_fixed]}"): **$verdict_c**.")
  unset ms wire cpu
done

# ---- the table ------------------------------------------------------------------------------
{
  echo "# Network transfer: nubo-xfer send/serve against rsync, resume, codec auto"
  echo
  echo "Command: \`benchmarks/bench_net.sh $(basename "$build")\` (RUNS=$runs), $(date +%F)"
  echo "Machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)," \
    "$(free -g | awk '/^Mem:/ {print $2}') GiB; $(rsync --version | head -1 | sed 's/  */ /g')"
  echo
  echo "Loopback (127.0.0.1), everything in tmpfs ($work). Corpus \"mixed\": /usr/include +"
  echo "/usr/share/doc copies + 32 MiB random, $bytes bytes; \"linux\": the files of the first 256 MiB"
  echo "of Debian's linux-source-6.1 tar, $kernel_bytes bytes; the 10 MB/s codec rows use /usr/include +"
  echo "the random file, $small_bytes bytes. A fresh destination for every run; nubo serve --no-sync"
  echo "(rsync does not fsync either). ms is wall time of the sending command, median of $runs"
  echo "(10 MB/s: 1 run); MB/s is logical bytes / time; wire is bytes the sender wrote to its"
  echo "sockets (rsync: its --stats 'Total bytes sent'). Rates are bytes/s; rsync's --bwlimit is"
  echo "in KiB/s. cpu ms is both ends' CPU time (client and server processes); floor is"
  echo "max(wire / rate, cpu / $(nproc) cores): on loopback both ends share the cores. Load average"
  echo "at the start: $load (the machine is shared)."
  echo
  echo "## nubo against rsync (daemon, -z --zc=zstd, the same rate)"
  echo
  echo "| corpus, rate | tool | ms | MB/s | wire bytes | cpu ms | floor ms | time / floor | time / rsync |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${peer_rows[@]}"
  echo
  echo "## Resume after an interruption at 50% (100 MB/s, codec auto)"
  echo
  echo "A full send; then a send cancelled from its progress callback when half the logical bytes"
  echo "were done; then the same send again."
  echo
  echo "| run | wire bytes | logical bytes sent | bytes resumed | of the full run's wire bytes |"
  echo "|---|---:|---:|---:|---:|"
  echo "| full | $full_wire | $full_sent | 0 | 1.00 |"
  echo "| resumed | $res_wire | $res_sent | $res_resumed | $res_ratio |"
  echo
  echo "## codec auto against each fixed codec"
  echo
  echo "| rate | codec | ms | MB/s | wire bytes | cpu ms | floor ms | time / floor | time / best fixed |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${codec_rows[@]}"
  echo
  echo "## Targets"
  echo
  printf '%s\n' "${peer_targets[@]}"
  echo "- The resumed run sends at most 52% of a full run's bytes: $res_ratio: **$verdict**."
  echo "- auto within 10% of the best fixed codec at each rate:"
  printf '  %s\n' "${codec_targets[@]}"
  printf '%s\n' "${floor_targets[@]}"
} >"$out"
cat "$out"
