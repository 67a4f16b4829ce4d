#!/bin/sh
# nubo::s3 from Rust against the loopback S3 server that with_s3_server.py started: the crate's
# s3 tests, then the copy example up and back, to the bucket and to a file:// store, compared
# with the original.
#   rust_s3_test.sh CARGO CRATE PYTHON_WITH_BOTO3 WORKDIR
set -eu
cargo=$1 crate=$2 python=$3 work=$4
"$cargo" test --offline --quiet --manifest-path "$crate/Cargo.toml" --test s3
"$python" -c "import boto3; boto3.client('s3', endpoint_url='$NUBO_S3_TEST_SERVER').create_bucket(Bucket='rust-example')"
rm -rf "$work"
"$cargo" run --offline --quiet --manifest-path "$crate/Cargo.toml" --example copy -- \
  "$crate/examples" s3://rust-example/copy/ "$work"
diff -r "$crate/examples" "$work/examples"
rm -rf "$work"
mkdir -p "$work"
"$cargo" run --offline --quiet --manifest-path "$crate/Cargo.toml" --example copy -- \
  "$crate/examples" "file://$work/store/" "$work/back"
diff -r "$crate/examples" "$work/back/examples"
rm -rf "$work"
echo "rust s3: tests and example passed"
