#!/usr/bin/env bash
# A sync that cannot destroy what it was given, on this machine's file system (file:// and local
# paths, no server):
#  - a source inside its destination, or the reverse, however spelled (a path and a file:// URL,
#    a trailing "/.", "..", a symlink to the same folder) is refused before anything is listed;
#    once `sync file:///D/sub/ file:///D/ --delete` removed /D/sub/* and /D/top.txt;
#  - --delete from a source that holds nothing is refused unless --allow-empty-source;
#  - --max-delete refuses, before any change, a sync that would delete more;
#  - --backup-dir keeps what is deleted or replaced;
#  - a symlink planted in a local destination never takes a download or a deletion outside it.
# Usage: sync_guards_test.sh NUBO_XFER
set -euo pipefail
xfer=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "sync_guards_test: $*" >&2; [ -f err ] && cat err >&2; exit 1; }
source "$here/../transfer/store/s3/refused.sh"

D=$work/D
reset_tree() {
  rm -rf "$D"
  mkdir -p "$D/sub"
  echo top >"$D/top.txt"
  echo a >"$D/sub/a.txt"
  echo b >"$D/sub/b.txt"
}
intact() {
  [ "$(cat "$D/top.txt")" = top ] && [ "$(cat "$D/sub/a.txt")" = a ] &&
    [ "$(cat "$D/sub/b.txt")" = b ] || fail "$1: the tree was changed: $(find "$D" | sort)"
}

# Overlap, every spelling of it.
reset_tree
ln -s "$D" alias
for pair in "file://$D/sub/ file://$D/" "file://$D/sub/ $D" "$D/sub file://$D/" \
            "file://$D/ $D/sub" "file://$D/sub/ file://$work/alias/" \
            "file://$D/sub/../sub/ file://$D/sub/./" "$D/. file://$D/sub/new/"; do
  # shellcheck disable=SC2086
  set -- $pair
  exits 2 "overlap\|its own destination" "$xfer" sync "$1" "$2" --delete -q
  intact "sync $pair"
done
refused "its own destination" "$xfer" sync "file://$D/" "$D" --delete

# An empty source and --delete.
reset_tree
mkdir empty
refused "holds nothing" "$xfer" sync "file://$work/empty/" "$D" --delete
intact "an empty source"
mkdir -p copy && echo x >copy/x.txt
refused "holds nothing that the filters let through" "$xfer" sync "$D/sub" \
  "file://$work/copy/" --exclude '*' --delete
[ -f copy/x.txt ] || fail "a filtered-out source emptied the destination"
exits 1 "is not a directory" "$xfer" sync "file://$work/missing/" "$D" --delete -q
intact "a missing source"
"$xfer" sync "file://$work/empty/" copy --delete --allow-empty-source -q
[ ! -e copy/x.txt ] || fail "--allow-empty-source did not let the sync empty the destination"

# --max-delete, decided before any change.
mkdir -p mirror && for i in 1 2 3 4 5; do echo "$i" >"mirror/old$i"; done
refused "more than the 3 allowed" "$xfer" sync "file://$D/" mirror --delete --max-delete 3
[ ! -e mirror/top.txt ] && [ -f mirror/old5 ] || fail "--max-delete let the sync change something"
"$xfer" sync "file://$D/" mirror --delete --max-delete 5 -q
[ ! -e mirror/old5 ] && [ -f mirror/top.txt ] || fail "--max-delete 5 did not sync"

# --backup-dir keeps what is deleted and what is replaced: in a store (file://, its objects
# copied within it), and on this machine (renamed).
"$xfer" sync "$D" "file://$work/m2/" -q
echo changed >m2/top.txt  # written around the store: its checksum no longer holds
echo stale >m2/stale.txt
"$xfer" sync "$D" "file://$work/m2/" --delete --backup-dir "file://$work/bk/" --json -q >bk.json
grep -q '"backed_up": 2' bk.json || fail "backup count: $(cat bk.json)"
[ "$(cat bk/top.txt)" = changed ] && [ "$(cat bk/stale.txt)" = stale ] &&
  [ "$(cat m2/top.txt)" = top ] && [ ! -e m2/stale.txt ] || fail "the store's backup is not what it replaced"
echo stale >mirror/stale.txt
"$xfer" sync "file://$D/" mirror --delete --backup-dir "$work/bk2" --json -q >bk2.json 2>/dev/null
[ "$(cat bk2/stale.txt)" = stale ] && [ ! -e mirror/stale.txt ] || fail "the local backup: $(cat bk2.json)"
refused "overlap" "$xfer" sync "file://$D/" mirror --delete --backup-dir "$work/mirror/bk"
refused "overlap" "$xfer" sync "file://$D/" mirror --delete --backup-dir "file://$D/bk/"
refused "must be where" "$xfer" sync "$D" "file://$work/m2/" --delete --backup-dir "$work/bk3"

# Planted links in a local destination: a download lands inside, or is refused.
mkdir -p outside dst/sub
ln -s "$work/outside" dst/sub/a
mkdir -p src/sub/a && echo secret >src/sub/a/f.txt && echo fine >src/sub/ok.txt
exits 1 "refusing to write through it" "$xfer" sync "file://$work/src/" dst -q
[ -z "$(ls -A outside)" ] || fail "a download went through a planted link: $(ls -A outside)"
exits 1 "refusing to write through it" "$xfer" cp "file://$work/src/" dst/ -q
[ -z "$(ls -A outside)" ] || fail "cp went through a planted link: $(ls -A outside)"
# A link where the partial file or the journal goes is never written through.
rm -rf dst2 && mkdir dst2 && echo precious >victim
ln -s "$work/victim" dst2/.ok.txt.nubo-part
exits 1 "symlink" "$xfer" cp "file://$work/src/sub/ok.txt" dst2/ok.txt -q
[ "$(cat victim)" = precious ] || fail "a download wrote through a planted partial file"
# A deletion never goes through a link either.
mkdir -p keep && echo keep >keep/k.txt && rm -rf dst3 && mkdir dst3 && ln -s "$work/keep" dst3/dir
"$xfer" sync "file://$work/empty/" dst3 --delete --allow-empty-source -q
[ -f keep/k.txt ] || fail "a sync deleted through a link in its destination"
echo "sync_guards_test: ok"
