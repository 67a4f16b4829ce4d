#!/usr/bin/env bash
# Installs the build tree into a fresh temporary prefix and uses it as a user would: a CMake
# project with find_package(nubo) (C++ and C), a C program built with pkg-config alone, and,
# when cargo is given, the Rust crate copied away from the repository, finding the installed
# library through pkg-config.
#   install_test.sh <build dir> <consumer source dir> <libdir> <cc> <c++> <cmake> [cargo crate]
set -euo pipefail
build=${1:?build dir}
consumer=${2:?consumer source}
libdir=${3:?libdir relative to the prefix}
cc=${4:?C compiler}
cxx=${5:?C++ compiler}
cmake=${6:-cmake}
cargo=${7:-}
crate=${8:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nubo-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { echo "install_test: $*"; }

step "installing $build into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log" >&2
  exit 1
}
for f in include/nubo.h include/nubo/nubo.hpp include/nubo/version.h include/nubo/export.hpp \
  "$libdir/libnubo.so" "$libdir/libnubo_c.so" "$libdir/cmake/nubo/nuboConfig.cmake" \
  "$libdir/cmake/nubo/nuboConfigVersion.cmake" "$libdir/pkgconfig/nubo.pc"; do
  [ -e "$prefix/$f" ] || { echo "install_test: $f is not installed" >&2; exit 1; }
done
# libnubo_c finds libnubo beside it, wherever the prefix is; no path of the build tree remains.
readelf -d "$prefix/$libdir/libnubo_c.so" | grep -q 'RUNPATH.*\[\$ORIGIN\]' || {
  echo "install_test: libnubo_c.so lacks RUNPATH \$ORIGIN" >&2
  readelf -d "$prefix/$libdir/libnubo_c.so" >&2
  exit 1
}
if readelf -d "$prefix/$libdir/libnubo_c.so" "$prefix/$libdir/libnubo.so" | grep -F "$build"; then
  echo "install_test: an installed library still points into the build tree" >&2
  exit 1
fi

step "building the consumer with find_package(nubo)"
# The package registry is off so that only the installed prefix can satisfy find_package.
"$cmake" -S "$consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" || { cat "$tmp/configure.log" >&2; exit 1; }
found=$(sed -n 's/^nubo_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")
[ "$found" = "$prefix/$libdir/cmake/nubo" ] || {
  echo "install_test: find_package(nubo) found '$found', not the installed prefix" >&2
  exit 1
}
"$cmake" --build "$tmp/consumer" >"$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }
"$tmp/consumer/consumer_cpp" | tee "$tmp/out_cpp.txt"
grep -q ": 2 devices" "$tmp/out_cpp.txt"
"$tmp/consumer/consumer_c" | tee "$tmp/out_c.txt"
grep -q ": 2 devices" "$tmp/out_c.txt"

step "building the C consumer with pkg-config nubo"
export PKG_CONFIG_LIBDIR="$prefix/$libdir/pkgconfig" PKG_CONFIG_PATH=
flags=$(pkg-config --cflags --libs nubo)
echo "install_test: pkg-config --cflags --libs nubo: $flags"
# shellcheck disable=SC2086  # the flags are words
"$cc" -std=c11 -Wall -Wextra -Werror "$consumer/main.c" $flags \
  -Wl,-rpath,"$(pkg-config --variable=libdir nubo)" -o "$tmp/consumer_pc"
"$tmp/consumer_pc" | tee "$tmp/out_pc.txt"
grep -q ": 2 devices" "$tmp/out_pc.txt"
[ "$(pkg-config --modversion nubo)" = "$(sed -n 's/^Version: //p' "$prefix/$libdir/pkgconfig/nubo.pc")" ]
if [ -f "$prefix/$libdir/pkgconfig/nubo++.pc" ]; then
  pkg-config --exists nubo++ || { echo "install_test: nubo++.pc is broken" >&2; exit 1; }
fi
if [ -n "$cargo" ]; then
  step "building the Rust crate against the installed nubo, found by pkg-config"
  cp -r "$crate" "$tmp/rust"  # away from the repository: no ../../build/lib to fall back to
  rm -rf "$tmp/rust/target"
  (cd "$tmp/rust" && env -u NUBO_LIB_DIR CARGO_TARGET_DIR="$tmp/rust-target" \
    "$cargo" run --offline --quiet --example devices -- 2xA100-SXM4-80GB) | tee "$tmp/out_rust.txt"
  grep -q "A100" "$tmp/out_rust.txt"
  readelf -d "$tmp/rust-target/debug/examples/devices" | grep -qF "$prefix/$libdir" || {
    echo "install_test: the Rust example does not load the installed library" >&2
    exit 1
  }
fi
if [ -z "$cargo" ]; then
  step "no cargo: the Rust crate was not built against the installed nubo (skipped)"
  exit 77
fi
step "ok"
