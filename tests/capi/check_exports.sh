#!/usr/bin/env bash
# libnubo_c.so exports exactly the functions the C headers declare (capi/nubo.h and the
# capi/nubo_*.h it includes): nothing that is not nubo_* (the version script and
# -fvisibility=hidden), and no declared function missing.
#   check_exports.sh <libnubo_c.so> <header>...
set -euo pipefail
lib=${1:?library}
shift
(($#)) || { echo "check_exports: no header given" >&2; exit 2; }

exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
declared=$(grep -ohE 'NUBO_C_API[^(]*[^a-z0-9_]nubo_[a-z0-9_]+\(' "$@" |
  grep -oE 'nubo_[a-z0-9_]+\($' | tr -d '(' | sort -u)

status=0
foreign=$(grep -v '^nubo_' <<<"$exported" || true)
if [ -n "$foreign" ]; then
  echo "check_exports: $lib exports symbols that are not nubo_*:" >&2
  echo "$foreign" >&2
  status=1
fi
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [ -n "$missing" ]; then
  echo "check_exports: nubo.h declares functions that $lib does not export:" >&2
  echo "$missing" >&2
  status=1
fi
undeclared=$(comm -23 <(grep '^nubo_' <<<"$exported" || true) <(echo "$declared"))
if [ -n "$undeclared" ]; then
  echo "check_exports: $lib exports nubo_* functions that nubo.h does not declare:" >&2
  echo "$undeclared" >&2
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "check_exports: $(wc -l <<<"$exported") symbols, all nubo_*, all declared in nubo.h"
fi
exit "$status"
