#!/usr/bin/env bash
# Archive throughput and ratio: nubo-xfer pack/unpack against the tools a user would pick
# instead, on the same data in the same run: `zstd -T0 -3` and `zstd -d`, `lz4` and `lz4 -d`,
# and `cp` (the floor for incompressible data). Corpora (issue 3):
#   linux    the Linux 6.1 source tar from Debian's linux-source-6.1 (~1.3 GB of text)
#   linuxtree the files of its first 256 MiB, as a source tree (~17,000 files, most of them small)
#   random   incompressible bytes (512 MiB from /dev/urandom)
#   fmnist   Fashion-MNIST (dataset-fashion-mnist), its four IDX files decompressed (~55 MB)
# Inputs and outputs in tmpfs (BENCH_DIR, default /dev/shm/...): what is compared is the tools'
# work, not the disk's writeback, which on a shared VM varies more than the tools do. Best of RUNS interleaved runs (default 5). nubo runs with
# --no-sync, like the CLI tools, which do not fsync either; one row shows the cost of sync.
# Writes benchmarks/results/transfer.md (OUT= another file).
#   benchmarks/bench_transfer.sh [BUILD_DIR]     env: RUNS, BENCH_DIR, OUT,
#                                                CORPORA="linux random fmnist" (or linuxtree)
set -euo pipefail
build=${1:-build}
runs=${RUNS:-5}
work=${BENCH_DIR:-/dev/shm/nubo-bench-transfer}
corpora=${CORPORA:-linux random fmnist}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/corpus.sh"
out=${OUT:-$here/results/transfer.md}
xfer="$(cd "$build" && pwd)/bin/nubo-xfer"
[ -x "$xfer" ] || { echo "bench_transfer: $xfer not built" >&2; exit 1; }

# The peers and the corpora are Debian packages.
need=()
for p in zstd lz4 xz-utils linux-source-6.1 dataset-fashion-mnist; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  if [ "$(id -u)" -ne 0 ]; then echo "bench_transfer: install ${need[*]}" >&2; exit 1; fi
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${need[@]}" >/dev/null
fi

mkdir -p "$work"
load=$(cut -d' ' -f1-3 /proc/loadavg)
prepare() {  # the input file or directory of corpus $1
  case $1 in
    linux)
      [ -s "$work/linux.tar" ] || xz -dc /usr/src/linux-source-6.1.tar.xz >"$work/linux.tar"
      echo "$work/linux.tar" ;;
    linuxtree)
      linux_tree "$work/linuxtree"
      echo "$work/linuxtree" ;;
    random)
      [ -s "$work/random.bin" ] || head -c $((512 << 20)) /dev/urandom >"$work/random.bin"
      echo "$work/random.bin" ;;
    fmnist)
      if [ ! -d "$work/fmnist" ]; then
        mkdir -p "$work/fmnist"
        for f in /usr/share/datasets/fashion-mnist/*.gz; do
          gzip -dc "$f" >"$work/fmnist/$(basename "$f" .gz)"
        done
      fi
      echo "$work/fmnist" ;;
  esac
}

size_of() { du -sb --apparent-size "$1" | cut -f1; }
now_ns() { date +%s%N; }
clean_outputs() { rm -rf "$work"/o.* "$work"/u "$work"/u.*; }

# Cases of one corpus: "op|label|output|command". The runs are interleaved (every case once, then
# again) and the best of each is kept, so that a burst of load elsewhere on the machine hurts all
# tools alike instead of one.
rows=()
targets=()
run_cases() {  # corpus bytes case...
  local corpus=$1 bytes=$2
  shift 2
  local -A best=()
  local r c
  for r in $(seq "$runs"); do
    for c in "$@"; do
      IFS='|' read -r op label output cmd <<<"$c"
      clean_outputs
      [ "$op" = unpack ] && eval "$PREPARE_UNPACK"
      sync
      local t0 t1 ms
      t0=$(now_ns)
      eval "$cmd" >/dev/null 2>&1 || { echo "bench_transfer: failed: $cmd" >&2; exit 1; }
      t1=$(now_ns)
      ms=$(((t1 - t0) / 1000000))
      if [ -z "${best[$label]:-}" ] || [ "$ms" -lt "${best[$label]}" ]; then best[$label]=$ms; fi
      if [ "$r" = 1 ]; then sizes[$label]=$(size_of "$output"); fi
    done
  done
  for c in "$@"; do
    IFS='|' read -r op label output cmd <<<"$c"
    local mbps ratio
    mbps=$(awk -v b="$bytes" -v ms="${best[$label]}" 'BEGIN {printf "%.0f", (ms > 0 ? b / 1e6 / (ms / 1000) : 0)}')
    ratio=$(awk -v a="${sizes[$label]}" -v b="$bytes" 'BEGIN {printf "%.4f", (b > 0 ? a / b : 0)}')
    rows+=("$corpus|$op|$label|${best[$label]}|$mbps|$ratio")
    times[$label]=${best[$label]}
    printf '%-7s %-7s %-44s %7s ms %6s MB/s  ratio %s\n' "$corpus" "$op" "$label" "${best[$label]}" "$mbps" "$ratio" >&2
  done
}

declare -A sizes times
for corpus in $corpora; do
  src=$(prepare "$corpus")
  bytes=$(size_of "$src")
  name=$(basename "$src")
  cat "$src" >/dev/null 2>&1 || find "$src" -type f -exec cat {} + >/dev/null
  # Single-file tools take the file itself, or a directory through tar in the same pipeline
  # (tar -c | zstd to pack, zstd -d | tar -x to unpack), as a user would run them.
  read_one="cat '$src'"
  write_one="cat >'$work/u.out'"
  if [ -d "$src" ]; then
    read_one="tar -cf - -C '$(dirname "$src")' '$name'"
    write_one="(mkdir -p '$work/u' && tar -xf - -C '$work/u')"
  fi
  cp_cmd="cp '$src' '$work/o.cp'"
  [ -d "$src" ] && cp_cmd="cp -r '$src' '$work/o.cp'"
  sizes=()
  times=()
  run_cases "$corpus" "$bytes" \
    "pack|nubo-xfer pack --codec zstd --level 3|$work/o.nubo|'$xfer' pack '$src' -o '$work/o.nubo' --codec zstd --level 3 --no-sync -q" \
    "pack|zstd -T0 -3|$work/o.zst|$read_one | zstd -T0 -3 -q -f -o '$work/o.zst'" \
    "pack|nubo-xfer pack --codec lz4|$work/o.nubo|'$xfer' pack '$src' -o '$work/o.nubo' --codec lz4 --no-sync -q" \
    "pack|lz4 -1|$work/o.lz4|$read_one | lz4 -1 -q -f - '$work/o.lz4'" \
    "pack|nubo-xfer pack --codec auto|$work/o.nubo|'$xfer' pack '$src' -o '$work/o.nubo' --codec auto --no-sync -q" \
    "pack|nubo-xfer pack --codec auto --target-rate 100M|$work/o.nubo|'$xfer' pack '$src' -o '$work/o.nubo' --codec auto --target-rate 100M --no-sync -q" \
    "pack|nubo-xfer pack --codec none|$work/o.nubo|'$xfer' pack '$src' -o '$work/o.nubo' --codec none --no-sync -q" \
    "pack|nubo-xfer pack --codec zstd --level 3 (with fdatasync)|$work/o.nubo|'$xfer' pack '$src' -o '$work/o.nubo' --codec zstd --level 3 -q" \
    "pack|cp|$work/o.cp|$cp_cmd"

  # Unpack inputs, made once, outside the timing.
  "$xfer" pack "$src" -o "$work/in.nubo" --codec zstd --level 3 --no-sync -q -f
  eval "$read_one" | zstd -T0 -3 -q -f -o "$work/in.zst"
  eval "$read_one" | lz4 -1 -q -f - "$work/in.lz4"
  PREPARE_UNPACK=":"
  run_cases "$corpus" "$bytes" \
    "unpack|nubo-xfer unpack (zstd-3 archive)|$work/in.nubo|'$xfer' unpack '$work/in.nubo' -C '$work/u' --no-sync -q" \
    "unpack|zstd -d|$work/in.zst|zstd -d -q -c '$work/in.zst' | $write_one" \
    "unpack|lz4 -d|$work/in.lz4|lz4 -d -q -c '$work/in.lz4' | $write_one" \
    "unpack|nubo-xfer verify (zstd-3 archive, writes nothing)|$work/in.nubo|'$xfer' verify '$work/in.nubo' -q"
  "$xfer" unpack "$work/in.nubo" -C "$work/u" --no-sync -q
  if [ -d "$src" ]; then diff -r "$src" "$work/u/$name" >/dev/null; else cmp -s "$src" "$work/u/$name"; fi ||
    { echo "bench_transfer: unpacked $corpus differs from the source" >&2; exit 1; }

  targets+=("$corpus|${times[nubo-xfer pack --codec zstd --level 3]}|${times[zstd -T0 -3]}|${sizes[nubo-xfer pack --codec zstd --level 3]}|${sizes[zstd -T0 -3]}|${times[nubo-xfer unpack (zstd-3 archive)]}|${times[zstd -d]}|${times[nubo-xfer pack --codec auto]}|${times[cp]}")
  rm -f "$work"/in.*
  clean_outputs
done

{
  echo "# Archive throughput: nubo-xfer against zstd, lz4 and cp"
  echo
  echo "Command: \`benchmarks/bench_transfer.sh $build\` (RUNS=$runs, CORPORA=\"$corpora\"), $(date -u +%Y-%m-%d)"
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo);" \
    "zstd $(zstd -V | grep -oE 'v[0-9.]+' | head -1), lz4 $(lz4 -V 2>&1 | grep -oE 'v[0-9.]+' | head -1)"
  echo
  echo "Best of $runs interleaved runs, inputs and outputs in tmpfs ($work); nubo with --no-sync like"
  echo "the CLI tools (the \"(sync)\" row includes its fdatasync checkpoints). MB/s are of the"
  echo "original data (10^6 bytes/s); ratio is output size / original size. Directories go to the"
  echo "single-file tools through tar in the same pipeline. nubo's archive also holds an XXH3-64"
  echo "per chunk and an XXH3-128 per file, and unpack verifies both. Load average at the start:"
  echo "$load (the machine is shared; interleaving spreads any disturbance over all tools)."
  echo
  echo "| corpus | op | tool | ms | MB/s | ratio |"
  echo "|---|---|---|---:|---:|---:|"
  for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
  echo
  echo "## Targets (issue 3)"
  echo
  echo "| corpus | pack zstd-3 speed vs zstd -T0 -3 (>= 1.00) | ratio vs zstd (<= 1.03) | unpack speed vs zstd -d (>= 1.00) | auto speed vs cp (>= 0.90 on random) |"
  echo "|---|---:|---:|---:|---:|"
  for t in "${targets[@]}"; do
    IFS='|' read -r c nz z ns zs nu zd a cpm <<<"$t"
    awk -v c="$c" -v nz="$nz" -v z="$z" -v ns="$ns" -v zs="$zs" -v nu="$nu" -v zd="$zd" -v a="$a" -v cp="$cpm" \
      'BEGIN {printf "| %s | %.2f | %.3f | %.2f | %.2f |\n", c, z / nz, ns / zs, zd / nu, cp / a}'
  done
} | tee "$out"
