#!/usr/bin/env bash
# The README's training sequence, run as written: train with checkpoints and a profile, run it
# again (it continues from the checkpoints), then plan from the profile. Only `build/bin/` is
# replaced by this build's programs; the commands run in a folder of their own.
# Usage: readme_sequence_test.sh README.md BIN_DIR   (exit 77: the dataset is not installed)
set -euo pipefail
readme=$(realpath "$1") bin=$(realpath "$2")
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || {
  echo "dataset-fashion-mnist is not installed: skipping the README's training sequence"
  exit 77
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
commands=$(grep -E '^\$ build/bin/nubo-(train --devices cpu:2 --checkpoint|cost plan --profile run\.json)' "$readme" |
  sed -e 's/^\$ //' -e 's/  *#.*$//' -e "s|build/bin/|$bin/|g")
[ "$(wc -l <<<"$commands")" = 3 ] || { echo "the README's sequence changed: $commands"; exit 1; }
while IFS= read -r command; do
  echo "+ $command"
  eval "$command" || { echo "readme_sequence_test: failed: $command"; exit 1; }
done <<<"$commands"
