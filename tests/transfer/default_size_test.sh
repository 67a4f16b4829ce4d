#!/usr/bin/env bash
# The default archive of a source tree is as small as zstd makes it, the same on every run: this
# project's own sources are packed twice, each time beside two busy loops competing for the
# cores, and each archive must be within 2% of the other and at most 1.05x `tar | zstd -1`.
# Usage: default_size_test.sh NUBO_XFER SOURCE_ROOT
set -euo pipefail
xfer=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
busy=()
trap 'kill "${busy[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "default_size_test: $*" >&2; exit 1; }
command -v zstd >/dev/null || fail "zstd (the Debian package) is not installed"

dirs=(lib include docs tests)
tar -cf - -C "$root" "${dirs[@]}" | zstd -1 -q -c > "$work/tree.tar.zst"
reference=$(stat -c %s "$work/tree.tar.zst")

for _ in 1 2; do (while :; do :; done) & busy+=($!); done
sizes=()
for run in 1 2; do
  (cd "$root" && "$xfer" pack "${dirs[@]}" -o "$work/run$run.nubo" -q --no-sync)
  sizes+=("$(stat -c %s "$work/run$run.nubo")")
done
echo "default_size_test: tar | zstd -1: $reference bytes; nubo pack: ${sizes[*]} bytes"
awk -v a="${sizes[0]}" -v b="${sizes[1]}" -v r="$reference" 'BEGIN {
  d = (a > b ? a - b : b - a) / (a < b ? a : b)
  if (d > 0.02) { printf "the two runs differ by %.1f%%\n", 100 * d; exit 1 }
  m = (a > b ? a : b) / r
  if (m > 1.05) { printf "the archive is %.3fx tar | zstd -1\n", m; exit 1 }
  printf "runs within %.2f%%, %.3fx tar | zstd -1\n", 100 * d, m }' || fail "size check failed"
echo "default_size_test: ok"
