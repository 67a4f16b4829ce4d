#!/usr/bin/env bash
# Tests capi/abi/abi.sh itself: on a toy library laid out like nubo (capi/nubo.h), the changes
# docs/abi.md allows must pass and every kind of break must fail. abidiff alone flags only
# removals as incompatible, so this guards the rules abi.sh adds on top.
#   abi_check_selftest.sh <abi.sh> <C compiler>
set -euo pipefail
abi_sh=${1:?abi.sh}
cc=${2:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nubo-abi-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

base_header='#include <stddef.h>
#include <stdint.h>
typedef enum nubo_kind { NUBO_KIND_A = 0, NUBO_KIND_B = 1 } nubo_kind;
typedef struct nubo_info { uint32_t struct_size; int a; const char* b; double c; nubo_kind k; } nubo_info;
__attribute__((visibility("default"))) int nubo_get(nubo_info* out, size_t n);
__attribute__((visibility("default"))) int nubo_count(void);
EXTRA_DECL'
base_source='#include "nubo.h"
int nubo_get(nubo_info* out, size_t n) { return out->a + (int)n; }
int nubo_count(void) { return 1; }
EXTRA_DEF'

# build <dir> <sed script for the header> [<sed script for the source>]; $SONAME overrides
build() {
  mkdir -p "$1/capi" "$1/include/nubo"
  sed -e "$2" -e 's/EXTRA_DECL//' <<<"$base_header" >"$1/capi/nubo.h"
  sed -e "${3:-}" -e 's/EXTRA_DEF//' <<<"$base_source" >"$1/lib.c"
  "$cc" -g -shared -fPIC -fvisibility=hidden -I"$1/capi" "$1/lib.c" -Wl,-soname,"${SONAME:-libtoy.so.1}" \
    -o "$1/libtoy.so"
}

build "$tmp/base" ''
"$abi_sh" dump "$tmp/base" "$tmp/base/libtoy.so" "$tmp/base.abi" >/dev/null

failures=0
# expect <pass|fail> <name> <header sed> [<source sed>]
expect() {
  local dir="$tmp/case$((++n))" got
  build "$dir" "$3" "${4:-}"
  if "$abi_sh" check "$dir" "$dir/libtoy.so" "$tmp/base.abi" >"$dir/out.txt" 2>&1; then got=pass; else got=fail; fi
  if [ "$got" = "$1" ]; then
    echo "ok: $2 ($got)"
  else
    echo "WRONG: $2: expected $1, got $got" >&2
    cat "$dir/out.txt" >&2
    failures=$((failures + 1))
  fi
}
n=0
expect pass "unchanged" ''
expect pass "field appended" 's/nubo_kind k; }/nubo_kind k; int d; }/'
expect pass "enumerator added" 's/NUBO_KIND_B = 1 }/NUBO_KIND_B = 1, NUBO_KIND_C = 2 }/'
expect pass "function added" 's/EXTRA_DECL/__attribute__((visibility("default"))) int nubo_more(void);/' \
  's/EXTRA_DEF/int nubo_more(void) { return 2; }/'
expect fail "fields reordered" 's/int a; const char\* b;/const char* b; int a;/'
expect fail "field retyped" 's/int a;/unsigned a;/'
expect fail "field inserted in the middle" 's/int a;/int a; int z;/'
expect fail "last field removed" 's/ nubo_kind k; }/ }/'
expect fail "enumerator value changed" 's/NUBO_KIND_B = 1 }/NUBO_KIND_B = 2 }/'
expect fail "parameter retyped" 's/size_t n)/uint32_t n)/' 's/size_t n)/uint32_t n)/'
expect fail "function removed" 's/.*nubo_count.*//' 's/.*nubo_count.*//'
SONAME=libtoy.so.2 expect fail "soname changed (NUBO_ABI_VERSION bumped)" ''
if ((failures)); then
  echo "abi_check_selftest: $failures case(s) judged wrongly" >&2
  exit 1
fi
echo "abi_check_selftest: every case judged as docs/abi.md says"
