#!/usr/bin/env bash
# nubo-xfer cp against the loopback S3 server (run by with_s3_server.py): a file and a tree up
# and back, filters, a prefix download, and errors with their exit statuses.
# Usage: cli_test.sh NUBO_XFER PYTHON_WITH_BOTO3
set -euo pipefail
xfer=$(realpath "$1")
python=$2
[ -n "${NUBO_S3_TEST_SERVER:-}" ] || { echo "cli_test: run me through with_s3_server.py" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "cli_test: $*" >&2; exit 1; }
status() { set +e; "$@" >/dev/null 2>"$work/err"; local s=$?; set -e; echo $s; }
"$python" -c "import boto3; boto3.client('s3', endpoint_url='$NUBO_S3_TEST_SERVER').create_bucket(Bucket='cli-bucket')"

mkdir -p tree/sub
head -c 9000000 /dev/urandom > tree/big.bin
printf 'hello\n' > tree/sub/a.txt
printf 'scratch\n' > tree/sub/b.tmp

"$xfer" cp tree/big.bin s3://cli-bucket/files/ -q --part-size 5M
"$xfer" cp s3://cli-bucket/files/big.bin back.bin -q
cmp tree/big.bin back.bin || fail "a file did not come back identical"

"$xfer" cp tree s3://cli-bucket/trees/ -q --exclude '*.tmp' --json > up.json
grep -q '"files": 2' up.json || fail "tree upload summary: $(cat up.json)"
mkdir out
"$xfer" cp s3://cli-bucket/trees/ out -q
cmp tree/big.bin out/tree/big.bin && cmp tree/sub/a.txt out/tree/sub/a.txt \
  || fail "the tree did not come back identical"
[ ! -e out/tree/sub/b.tmp ] || fail "--exclude was not applied"

# An archive in the bucket: listed, verified and unpacked where it is.
"$xfer" pack tree -o tree.nubo -q
"$xfer" cp tree.nubo s3://cli-bucket/archives/ -q
"$xfer" list s3://cli-bucket/archives/tree.nubo | grep -q "tree/sub/a.txt" || fail "list of s3://"
"$xfer" verify s3://cli-bucket/archives/tree.nubo -q
"$xfer" unpack s3://cli-bucket/archives/tree.nubo -C unpacked -q
cmp tree/big.bin unpacked/tree/big.bin || fail "unpack of s3://"
[ "$("$xfer" cat s3://cli-bucket/archives/tree.nubo tree/sub/a.txt)" = hello ] || fail "cat of s3://"
"$xfer" pack tree -o s3://cli-bucket/archives/direct.nubo -q --json > packed.json
"$xfer" list s3://cli-bucket/archives/direct.nubo | grep -q "tree/big.bin" || fail "pack -o s3://"
# Summaries count the bytes moved over the network: a pack uploads the whole archive, unpack
# and verify fetch it, and cat of a small file reads the index and its bundle (in 1 MiB blocks:
# 2 MiB at most here), not the 9 MB.
json_field() { "$python" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
stored=$(json_field packed.json bytes_stored)
[ "$(json_field packed.json bytes_transferred)" = "$stored" ] || fail "pack's bytes sent: $(cat packed.json)"
"$xfer" verify s3://cli-bucket/archives/direct.nubo -q --json > verified.json
[ "$(json_field verified.json bytes_transferred)" -ge "$stored" ] || fail "verify's bytes fetched"
"$xfer" cat -v s3://cli-bucket/archives/direct.nubo tree/sub/a.txt >/dev/null 2>cat.err
grep -q "read .* over the network" cat.err || fail "cat -v: $(cat cat.err)"
grep -Eq "read ([0-9.]+ (B|KiB)|[01]\.[0-9]+ MiB|2\.00 MiB) " cat.err ||
  fail "cat of a small file read too much: $(cat cat.err)"
# Encrypted in the bucket: what leaves the machine is sealed, and is read back with the key.
"$xfer" keygen k.key -q
"$xfer" pack tree -o s3://cli-bucket/archives/sealed.nubo --encrypt k.key -q
[ "$("$xfer" cat s3://cli-bucket/archives/sealed.nubo tree/sub/a.txt --key k.key)" = hello ] \
  || fail "cat --key of an encrypted s3:// archive"
[ "$(status "$xfer" list s3://cli-bucket/archives/sealed.nubo)" = 2 ] || fail "list without the key"
"$xfer" unpack s3://cli-bucket/archives/sealed.nubo -C sealed --key k.key -q
cmp tree/big.bin sealed/tree/big.bin || fail "unpack --key of an encrypted s3:// archive"
# Plain objects too: a tree up with --encrypt, back with --key; without it, exit 2 naming --key.
"$xfer" cp tree s3://cli-bucket/sealed-tree/ -q --encrypt k.key --part-size 5M
"$xfer" cp s3://cli-bucket/sealed-tree/ sealed-out -q --key k.key
diff -r tree sealed-out/tree > /dev/null || fail "an encrypted tree did not come back identical"
[ "$(status "$xfer" cp s3://cli-bucket/sealed-tree/tree/sub/a.txt x.txt)" = 2 ] \
  || fail "an encrypted object was read without its key"
grep -q -- "--key" err || fail "no key: $(cat err)"
[ "$(status "$xfer" cp s3://cli-bucket/sealed-tree/tree/sub/a.txt x.txt --encrypt k.key)" = 2 ] \
  || fail "--encrypt was accepted on a download"
[ "$(status "$xfer" cp tree/sub/a.txt s3://cli-bucket/x --key k.key)" = 2 ] \
  || fail "--key was accepted on an upload"
"$xfer" pack tree -o local.nubo -q --json > local.json
[ "$(json_field local.json bytes_transferred)" = 0 ] || fail "a local pack counted network bytes"

# --rate: paced (not timed here: the loopback server sets the pace), and a bad one refused.
"$xfer" cp tree/big.bin s3://cli-bucket/paced/ -q --rate 50M --part-size 5M
"$xfer" cp s3://cli-bucket/paced/big.bin paced.bin -q --rate 50M
cmp tree/big.bin paced.bin || fail "a paced copy did not come back identical"
[ "$(status "$xfer" cp tree/big.bin s3://cli-bucket/paced/ --rate fast)" = 2 ] || fail "--rate fast"
grep -q -- "--rate" err || fail "a bad --rate is not named: $(cat err)"

[ "$(status "$xfer" cp a b)" = 2 ] || fail "two local paths were accepted"
[ "$(status "$xfer" cp s3://cli-bucket/nope x -q)" = 1 ] || fail "a missing object: $(cat err)"
grep -q "does not exist" err || fail "a missing object's message: $(cat err)"
[ "$(status "$xfer" cp x.txt s3://Bad_Bucket/k)" = 2 ] || fail "a bad bucket name was accepted"
# A malformed URL is named as such, not taken for an archive already there.
[ "$(status "$xfer" pack tree -o s3://Bad_Bucket/x.nubo -q)" = 2 ] || fail "pack to a bad bucket"
grep -q "not a bucket name" err && ! grep -q "already exists" err \
  || fail "a bad bucket name read as another archive: $(cat err)"

# The other stores take the same commands: gs:// (the same server, through GCS's variables)
# and file:// (a directory, as a shared file system).
"$xfer" cp tree gs://cli-bucket/gs-tree/ -q --part-size 5M
"$xfer" cp gs://cli-bucket/gs-tree/ gs-out -q
diff -r tree gs-out/tree > /dev/null || fail "a tree through gs:// did not come back identical"
"$xfer" pack tree -o "file://$work/shared/t.nubo" -q
"$xfer" unpack "file://$work/shared/t.nubo" -C file-out -q
cmp tree/big.bin file-out/tree/big.bin || fail "an archive through file:// did not come back"
[ -z "$(find "$work/shared" -name '.nubo-*')" ] || fail "file:// left its staging: $(ls -a "$work/shared")"
echo "cli_test: ok"
