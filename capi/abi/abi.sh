#!/usr/bin/env bash
# The C ABI baseline of libnubo_c.so, with libabigail (Debian abigail-tools). One place for the
# options, so that the baseline and the check always look at the ABI the same way.
#
#   abi.sh dump  <source dir> <libnubo_c.so> <baseline.abi>   write the baseline (abi-baseline)
#   abi.sh check <source dir> <libnubo_c.so> <baseline.abi>   compare; exit 1 on a break
#
# Only what capi/nubo.h declares is the ABI (not the handle's C++ insides in capi/src/). The
# baseline keeps no absolute paths (only file names), so it is the same from any checkout.
#
# What counts as compatible follows docs/abi.md: new functions, new enumerators, and fields added
# to an info or options struct (its struct_size tells the library how much the caller has).
# libabigail flags only removals as "incompatible" (exit bit 8); a moved, retyped or deleted
# field, a changed enumerator value or a changed function signature is only an "ABI change"
# (bit 4), so the check reads abidiff's leaf report and accepts only the changes listed above.
set -euo pipefail

mode=${1:?usage: abi.sh dump|check <source dir> <library> <baseline>}
src=${2:?source dir}
lib=${3:?library}
baseline=${4:?baseline file}
# abidw describes only what the exported nubo_* functions reach (--exported-interfaces-only),
# which is exactly nubo.h: the handle stays an incomplete type even inside capi/src/. abidiff
# gets no header filter on purpose: it would hide a change to a type declared in a system header,
# such as a size_t parameter becoming uint32_t.
headers=(--headers-dir "$src/capi" --headers-dir "$src/include/nubo")

for tool in abidw abidiff; do
  command -v "$tool" >/dev/null || {
    echo "abi.sh: $tool not found: install the Debian package abigail-tools (.ci/install-deps)" >&2
    exit 1
  }
done

case "$mode" in
  dump)
    tmp="$baseline.tmp"
    abidw --no-corpus-path --no-comp-dir-path --short-locs --no-elf-needed --exported-interfaces-only \
      --type-id-style hash "${headers[@]}" --out-file "$tmp" "$lib"
    mv "$tmp" "$baseline"
    echo "abi.sh: wrote $baseline"
    ;;
  check)
    [ -f "$baseline" ] || { echo "abi.sh: no baseline $baseline (make it: cmake --build <build> --target abi-baseline)" >&2; exit 1; }
    set +e
    report=$(abidiff --fail-no-debug-info --leaf-changes-only "$baseline" "$lib" 2>&1)
    rc=$?
    set -e
    echo "$report"
    # abidiff's exit status is a bit set: 1 error, 2 usage error, 4 ABI change, 8 incompatible.
    if ((rc & 3)); then
      echo "abi.sh: abidiff failed (exit $rc)" >&2
      exit 1
    fi
    if ((rc & 8)); then
      echo "abi.sh: INCOMPATIBLE: libnubo_c.so removed something the baseline has (above)." >&2
      echo "abi.sh: a deliberate break bumps NUBO_ABI_VERSION and regenerates the baseline (docs/abi.md)" >&2
      exit 1
    fi
    # Every line of the leaf report must be a summary, an addition, or a struct that only grew.
    bad=$(awk '
      /^$/ || /summary: / { next }
      /^[0-9]+ Added (function|variable)s?:$/ || /^  \[A\] / { next }
      /^\047(struct|enum) nubo_[a-z0-9_]+ at [^\047]*\047 changed:$/ { section = ""; next }
      /^  type size hasn.t changed$/ { next }
      /^  type size changed from [0-9]+ to [0-9]+ \(in bits\)$/ { if ($7 + 0 > $5 + 0) next }
      /^  [0-9]+ (data member|enumerator) insertions?:$/ { section = "insertion"; next }
      /^    / && section == "insertion" { next }
      { section = ""; print }' <<<"$report")
    if [ -n "$bad" ]; then
      echo "abi.sh: INCOMPATIBLE: these changes break callers built against the baseline:" >&2
      echo "$bad" >&2
      echo "abi.sh: add fields only at the end of a struct, never move, retype or remove one;" >&2
      echo "abi.sh: a deliberate break bumps NUBO_ABI_VERSION and regenerates the baseline (docs/abi.md)" >&2
      exit 1
    fi
    if ((rc & 4)); then echo "abi.sh: compatible additions only (baseline can be regenerated)"; fi
    echo "abi.sh: libnubo_c.so is compatible with $(basename "$baseline")"
    ;;
  *)
    echo "abi.sh: unknown mode '$mode' (dump or check)" >&2
    exit 2
    ;;
esac
