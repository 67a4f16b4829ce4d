#!/usr/bin/env bash
# Interoperability with an independent client, Debian's AWS CLI, on the loopback S3 server (run
# by with_s3_server.py): what nubo uploads (an archive, a multipart file) the AWS CLI downloads
# byte-identical, and what the AWS CLI uploads (one PUT, and a multipart upload of 70 MiB) nubo
# downloads and checks against the ETag, with no "only its size was checked" warning.
# Usage: awscli_test.sh NUBO_XFER AWS_CLI
set -euo pipefail
xfer=$(realpath "$1")
aws=$2
[ -n "${NUBO_S3_TEST_SERVER:-}" ] || { echo "awscli_test: run me through with_s3_server.py" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "awscli_test: $*" >&2; exit 1; }
s3() { "$aws" --endpoint-url "$NUBO_S3_TEST_SERVER" s3 "$@"; }

s3 mb s3://interop >/dev/null
mkdir -p tree/sub
head -c 3000000 /dev/urandom > tree/sub/random.bin
seq 1 200000 > tree/numbers.txt
head -c 20000000 /dev/urandom > big.bin

# nubo uploads, the AWS CLI downloads.
"$xfer" pack tree -o s3://interop/tree.nubo -q
s3 cp s3://interop/tree.nubo by-aws.nubo --only-show-errors
"$xfer" cp s3://interop/tree.nubo by-nubo.nubo -q
cmp by-aws.nubo by-nubo.nubo || fail "the AWS CLI and nubo read different archives"
"$xfer" verify by-aws.nubo -q || fail "the archive the AWS CLI downloaded does not verify"
"$xfer" unpack by-aws.nubo -C out -q
cmp tree/sub/random.bin out/tree/sub/random.bin && cmp tree/numbers.txt out/tree/numbers.txt \
  || fail "the archive the AWS CLI downloaded does not unpack to the tree"
"$xfer" cp big.bin s3://interop/nubo/ -q --part-size 5M
s3 cp s3://interop/nubo/big.bin big.by-aws --only-show-errors
cmp big.bin big.by-aws || fail "a multipart upload by nubo came back different through the AWS CLI"

# The AWS CLI uploads (multipart above its 8 MiB threshold, one PUT below), nubo downloads.
head -c $((70 << 20)) /dev/urandom > large.bin
s3 cp large.bin s3://interop/aws/large.bin --only-show-errors
s3 cp tree/numbers.txt s3://interop/aws/numbers.txt --only-show-errors
etag=$("$aws" --endpoint-url "$NUBO_S3_TEST_SERVER" s3api head-object --bucket interop \
  --key aws/large.bin --query ETag --output text)
case $etag in *-*) ;; *) fail "the AWS CLI did not upload 70 MiB in parts (ETag $etag)" ;; esac
for name in large.bin numbers.txt; do
  "$xfer" cp "s3://interop/aws/$name" "$name.by-nubo" -q 2>err || { cat err >&2; fail "$name"; }
  ! grep -q "only its size" err || fail "$name was not checked against its ETag: $(cat err)"
done
cmp large.bin large.bin.by-nubo || fail "a multipart upload by the AWS CLI came back different"
cmp tree/numbers.txt numbers.txt.by-nubo || fail "a PUT by the AWS CLI came back different"
echo "awscli_test: ok"
