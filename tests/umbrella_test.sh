#!/bin/sh
# nubo.hpp includes every public header, so that `#include <nubo/nubo.hpp>` is the whole C++ API.
#   umbrella_test.sh INCLUDE_DIR
set -eu
dir=$1/nubo
missing=0
for header in "$dir"/*.hpp "$dir"/*.h; do
  name=$(basename "$header")
  [ "$name" = nubo.hpp ] && continue
  grep -q "^#include \"nubo/$name\"" "$dir/nubo.hpp" || { echo "nubo.hpp does not include $name"; missing=1; }
done
exit $missing
