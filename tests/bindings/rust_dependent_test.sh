#!/bin/sh
# An application crate depending on nubo by path (rust_dependent/): built by cargo with the
# build.rs lines docs/bindings.md gives, then started under nubo-run with 2 processes, without
# LD_LIBRARY_PATH: each joins from its main thread and all-reduces.
#   rust_dependent_test.sh CARGO NUBO_RUN
set -eu
cargo=$1 runner=$2
here=$(cd "$(dirname "$0")" && pwd)
"$cargo" build --offline --quiet --locked --manifest-path "$here/rust_dependent/Cargo.toml"
unset LD_LIBRARY_PATH
out=$("$runner" --nproc 2 -- "$CARGO_TARGET_DIR/debug/nubo-dependent" 2>&1) || {
  echo "$out"
  exit 1
}
echo "$out"
for rank in 0 1; do
  echo "$out" | grep -q "^\[$rank\] rank $rank of 2: 6 all-reduces from the program's own threads, mean 4.5$"
done
echo "rust dependent crate: built, started and reduced"
