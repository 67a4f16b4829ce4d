#!/usr/bin/env bash
# make bench: runs every benchmark in benchmarks/ against its peers; each writes its table to
# benchmarks/results/<name>.md together with the command that produced it.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
for bench in "$here"/bench_*.sh; do
  echo "==> $(basename "$bench")"
  "$bench" "$build"
done
