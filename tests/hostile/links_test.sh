#!/usr/bin/env bash
# Symlinks in the trees that cp and sync upload are never dropped silently (file:// store, no
# server): followed by default as `aws s3 cp` does, with dangling links, links leaving the tree
# and loops skipped with a warning; --follow-outside follows the ones leaving it; --links stores
# each as a link that a download with --links restores (its target checked); --no-follow skips
# them. Every summary counts links followed, stored and skipped. Once, a tree of 504 files and a
# link said "copied 504 files", and the link was gone.
# Usage: links_test.sh NUBO_XFER
set -euo pipefail
xfer=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "links_test: $*" >&2; [ -f err ] && cat err >&2; exit 1; }
source "$here/../transfer/store/s3/refused.sh"
field() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }

mkdir -p data/sub outside store
echo file >data/f.txt
echo deep >data/sub/deep.txt
echo away >outside/away.txt
ln -s f.txt data/rel            # relative, inside
ln -s "$work/data/f.txt" data/abs  # absolute, inside
ln -s sub data/dir              # a folder, inside
ln -s missing data/dangling     # nowhere
ln -s .. data/sub/loop          # back to a folder being copied
ln -s "$work/outside" data/out  # leaves the tree

# The default: followed, as aws s3 cp does; the others skipped and counted.
"$xfer" cp data/ "file://$work/store/a/" --json -q >a.json 2>a.err
[ "$(field a.json files)" = 5 ] || fail "followed: $(cat a.json)"
# The loop is met twice: under sub/ and under dir/, the link to sub that was followed.
[ "$(field a.json links_followed)" = 3 ] && [ "$(field a.json links_skipped)" = 4 ] &&
  [ "$(field a.json links_stored)" = 0 ] || fail "link counts: $(cat a.json)"
[ "$(cat store/a/data/rel)" = file ] && [ "$(cat store/a/data/abs)" = file ] &&
  [ "$(cat store/a/data/dir/deep.txt)" = deep ] || fail "a followed link's content is wrong"
[ ! -e store/a/data/out ] && [ ! -e store/a/data/dangling ] || fail "a skipped link was copied"
grep -q "leads nowhere" a.err && grep -q "outside the tree" a.err && grep -q "a loop" a.err ||
  fail "the skipped links are not named: $(cat a.err)"
# The text summary says it too.
"$xfer" cp data/ "file://$work/store/t/" 2>t.err
grep -q "symlinks: 3 followed, 0 stored as links, 4 skipped" t.err || fail "text: $(cat t.err)"

# --follow-outside takes the link that leaves the tree.
"$xfer" cp data/ "file://$work/store/b/" --follow-outside --json -q >b.json 2>/dev/null
[ "$(field b.json links_followed)" = 4 ] && [ "$(cat store/b/data/out/away.txt)" = away ] ||
  fail "--follow-outside: $(cat b.json)"

# --no-follow: none taken, each counted.
"$xfer" cp data/ "file://$work/store/c/" --no-follow --json -q >c.json
[ "$(field c.json links_skipped)" = 6 ] && [ "$(field c.json files)" = 2 ] || fail "--no-follow: $(cat c.json)"

# --links: stored as links, restored by a download that stores links too.
"$xfer" cp data/ "file://$work/store/d/" --links --json -q >d.json
[ "$(field d.json links_stored)" = 6 ] || fail "--links: $(cat d.json)"
"$xfer" cp "file://$work/store/d/" back/ --links --json -q >back.json 2>back.err
grep -q "absolute target" back.err || fail "the absolute link is not named: $(cat back.err)"
# Relative links inside the tree come back as links; an absolute one, or one leaving the tree,
# is refused as unpack refuses it, never created.
[ "$(readlink back/data/rel)" = f.txt ] && [ "$(readlink back/data/dir)" = sub ] ||
  fail "--links download: $(ls -la back/data 2>&1)"
[ ! -e back/data/abs ] && [ ! -L back/data/abs ] || fail "an absolute link was restored"
# Without --links, a stored link is skipped and counted, never written as a file.
"$xfer" cp "file://$work/store/d/" plain/ --json -q >plain.json 2>/dev/null
[ "$(field plain.json links_skipped)" = 6 ] || fail "stored links not counted: $(cat plain.json)"
[ ! -e plain/data/rel ] || fail "a stored link came back as a file"

# --links and --no-follow say different things.
refused "excludes" "$xfer" cp data/ "file://$work/store/e/" --links --no-follow

# sync counts them the same way.
"$xfer" sync data "file://$work/store/s/" --json -q >s.json 2>/dev/null
[ "$(field s.json links_followed)" = 3 ] && [ "$(field s.json links_skipped)" = 4 ] ||
  fail "sync: $(cat s.json)"
"$xfer" sync data "file://$work/store/s/" --json -q >s2.json 2>/dev/null
[ "$(field s2.json copied)" = 0 ] || fail "a second sync copied again: $(cat s2.json)"
echo "links_test: ok"
