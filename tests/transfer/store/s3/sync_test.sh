#!/usr/bin/env bash
# nubo-xfer sync against the loopback S3 server (run by with_s3_server.py):
#  - a local tree to a prefix: a second run moves nothing; a file changed in place (same size)
#    moves alone; --delete with --dry-run lists and changes nothing, then deletes;
#  - a prefix to another bucket (the store copies) and back to a local tree, idempotent;
#  - a destination error halfway: nothing is deleted, and a rerun completes without sending
#    again what the first run copied;
#  - bad input: overlapping places, two local trees, an object where a prefix is needed.
# Usage: sync_test.sh NUBO_XFER PYTHON_WITH_BOTO3
set -euo pipefail
xfer=$(realpath "$1")
python=$2
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${NUBO_S3_TEST_SERVER:-}" ] || { echo "sync_test: run me through with_s3_server.py" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "sync_test: $*" >&2; [ -f err ] && cat err >&2; exit 1; }
source "$here/refused.sh"
field() { "$python" -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
"$python" -c "
import boto3
c = boto3.client('s3', endpoint_url='$NUBO_S3_TEST_SERVER')
for b in ('sync', 'sync-dr'):
    c.create_bucket(Bucket=b)"

mkdir -p tree/sub
for i in 1 2 3 4 5; do head -c $((i * 30000)) /dev/urandom >"tree/f$i.bin"; done
head -c 7000000 /dev/urandom >tree/sub/big.bin
"$xfer" sync tree s3://sync/backup/ --json -q >first.json
[ "$(field first.json copied)" = 6 ] || fail "first sync: $(cat first.json)"
"$xfer" sync tree s3://sync/backup/ --json -q >second.json
[ "$(field second.json copied)" = 0 ] && [ "$(field second.json unchanged)" = 6 ] &&
  [ "$(field second.json bytes_sent)" = 0 ] || fail "a second sync moved something: $(cat second.json)"

# Changed in place, same size: found by its checksum, and moved alone.
head -c 90000 /dev/urandom >tree/f3.bin
touch -r tree/f1.bin tree/f3.bin  # and the same time: the content is what tells
"$xfer" sync tree s3://sync/backup/ --json -q >changed.json
[ "$(field changed.json copied)" = 1 ] && [ "$(field changed.json bytes_sent)" = 90000 ] ||
  fail "one changed file: $(cat changed.json)"
"$xfer" cp s3://sync/backup/f3.bin f3.back -q && cmp -s f3.back tree/f3.bin ||
  fail "the changed file did not arrive"

# A file gone and one new: --dry-run says so and changes nothing; --delete then does it.
rm tree/f5.bin
head -c 1000 /dev/urandom >tree/new.bin
"$xfer" sync tree s3://sync/backup/ --delete --dry-run >dry.txt 2>err
grep -qx "(dry run) copy new.bin" dry.txt && grep -qx "(dry run) delete f5.bin" dry.txt ||
  fail "the dry run: $(cat dry.txt)"
"$xfer" cp s3://sync/backup/f5.bin f5.back -q || fail "the dry run deleted f5.bin"
"$xfer" sync tree s3://sync/backup/ --delete --json -q >delete.json
[ "$(field delete.json copied)" = 1 ] && [ "$(field delete.json deleted)" = 1 ] ||
  fail "sync --delete: $(cat delete.json)"
set +e
"$xfer" cp s3://sync/backup/f5.bin f5.again -q 2>/dev/null
[ $? -ne 0 ] || fail "--delete left f5.bin"
set -e

# To another bucket: the store copies; then back to a local tree; both idempotent.
"$xfer" sync s3://sync/backup/ s3://sync-dr/backup/ --json -q >dr.json
[ "$(field dr.json copied)" = 6 ] && [ "$(field dr.json bytes_sent)" = 0 ] ||
  fail "a sync within one store went through the client: $(cat dr.json)"
"$xfer" sync s3://sync/backup/ s3://sync-dr/backup/ --json -q >dr2.json
[ "$(field dr2.json copied)" = 0 ] || fail "a second sync between buckets: $(cat dr2.json)"
"$xfer" sync s3://sync-dr/backup/ restored --json -q >restore.json
diff -r tree restored >/dev/null || fail "the restored tree differs"
"$xfer" sync s3://sync-dr/backup/ restored --json -q >restore2.json
[ "$(field restore2.json copied)" = 0 ] || fail "a second restore: $(cat restore2.json)"

# A destination error halfway (a file where a directory must go): nothing is deleted; removed,
# a rerun completes and does not send again what the first copied.
mkdir -p dest
head -c 500 /dev/urandom >dest/zz-old.bin
touch dest/sub  # blocks sub/big.bin
set +e
"$xfer" sync s3://sync-dr/backup/ dest --delete -q 2>err
status=$?
set -e
[ "$status" -ne 0 ] || fail "a sync into a blocked destination succeeded"
[ -f dest/zz-old.bin ] || fail "a failed sync deleted before its copies succeeded"
[ -f dest/f1.bin ] || fail "the copies before the error were not made"
rm dest/sub
"$xfer" sync s3://sync-dr/backup/ dest --delete --json -q >rerun.json
[ "$(field rerun.json deleted)" = 1 ] && [ ! -e dest/zz-old.bin ] || fail "the rerun: $(cat rerun.json)"
[ "$(field rerun.json unchanged)" -ge 1 ] || fail "the rerun sent everything again: $(cat rerun.json)"
diff -r tree dest >/dev/null || fail "the tree after the rerun differs"

# Objects another client put (no nubo checksum: their ETags are the MD5s) against local files:
# compared by MD5, so a second sync moves nothing and a change of the same size moves alone.
"$python" -c "
import boto3
c = boto3.client('s3', endpoint_url='$NUBO_S3_TEST_SERVER')
for k in ('a', 'b'):
    c.put_object(Bucket='sync', Key='foreign/' + k + '.bin', Body=k.encode() * 5000)"
"$xfer" sync s3://sync/foreign/ foreign --json -q >foreign.json
"$xfer" sync s3://sync/foreign/ foreign --json -q >foreign2.json
[ "$(field foreign2.json copied)" = 0 ] && [ "$(field foreign2.json unchanged)" = 2 ] ||
  fail "a second sync of foreign objects: $(cat foreign2.json)"
printf 'c%.0s' $(seq 5000) >foreign/a.bin
"$xfer" sync s3://sync/foreign/ foreign --json -q >foreign3.json
[ "$(field foreign3.json copied)" = 1 ] && [ "$(head -c 1 foreign/a.bin)" = a ] ||
  fail "a changed local file was not restored from a foreign object: $(cat foreign3.json)"

# Bad input, each named.
refused "overlap" "$xfer" sync s3://sync/backup/ s3://sync/backup/sub/
refused "is its own destination" "$xfer" sync s3://sync/backup/ s3://sync/backup/
refused "rsync" "$xfer" sync tree other
refused "names an object" "$xfer" sync tree s3://sync/backup
echo "sync_test: ok"
