#!/usr/bin/env bash
# nubo-xfer cp between two stores (run by with_s3_server.py, whose moto server is "region a"):
#  - between two buckets of one server with the same keys: the store copies, no byte of the
#    objects goes through the client;
#  - between two servers ("two regions", --source-profile, --dest-profile): streamed, objects
#    put whole and in parts, by nubo (its XXH3-128) and by another client (their ETags);
#  - killed with SIGKILL at random points and run again until it completes, whole;
#  - a destination that alters what it stores, and a source whose bytes are not those its ETag
#    describes: refused;
#  - bad input: a source that is its own destination, overlapping prefixes, a key file, an
#    unknown profile.
# Usage: store_copy_test.sh NUBO_XFER PYTHON_WITH_MOTO
set -euo pipefail
xfer=$(realpath "$1")
python=$2
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${NUBO_S3_TEST_SERVER:-}" ] || { echo "store_copy_test: run me through with_s3_server.py" >&2; exit 1; }
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "store_copy_test: $*" >&2; [ -f err ] && cat err >&2; exit 1; }
source "$here/refused.sh"
json() { "$python" -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }

# Region b: a second moto server; and a hostile one (hostile_s3_server.py) as a third place.
port_b=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$python" -m moto.server -H 127.0.0.1 -p "$port_b" >moto_b.log 2>&1 &
pids+=($!)
"$python" "$here/hostile_s3_server.py" >hostile_port &
pids+=($!)
answers() {  # PORT: something listens there
  "$python" -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" \
    "$1" 2>/dev/null
}
for _ in $(seq 300); do
  answers "$port_b" && [ -s hostile_port ] && break
  sleep 0.1
done
answers "$port_b" || fail "the second moto server did not start: $(tail -5 moto_b.log)"
cat >config <<EOF
[profile a]
endpoint_url = $NUBO_S3_TEST_SERVER
[profile b]
endpoint_url = http://127.0.0.1:$port_b
[profile h]
endpoint_url = http://127.0.0.1:$(head -n1 hostile_port)
EOF
export AWS_CONFIG_FILE=$work/config AWS_PROFILE=a AWS_MAX_ATTEMPTS=3
unset AWS_ENDPOINT_URL
"$python" - "$NUBO_S3_TEST_SERVER" "http://127.0.0.1:$port_b" <<'EOF'
import sys, boto3
from boto3.s3.transfer import TransferConfig
a, b = (boto3.client("s3", endpoint_url=e) for e in sys.argv[1:3])
for bucket in ("src", "dst"):
    a.create_bucket(Bucket=bucket)
b.create_bucket(Bucket="dst")
# Objects another client made: one put whole, one in 5 MiB parts (its ETag "<md5>-3").
a.put_object(Bucket="src", Key="files/other.bin", Body=bytes(range(256)) * 4000)
with open("/dev/urandom", "rb") as r:
    open("mp.bin", "wb").write(r.read(12 << 20))
a.upload_file("mp.bin", "src", "files/multipart.bin",
              Config=TransferConfig(multipart_threshold=5 << 20, multipart_chunksize=5 << 20))
assert a.head_object(Bucket="src", Key="files/multipart.bin")["ETag"].endswith('-3"')
EOF
head -c 100000 /dev/urandom >small.bin
head -c 11000000 /dev/urandom >big.bin
"$xfer" cp small.bin s3://src/files/ -q
"$xfer" cp big.bin s3://src/files/ -q --part-size 5M
total=$((100000 + 11000000 + 1024000 + (12 << 20)))

same() {  # PROFILE URL FILE: the object at URL holds FILE's bytes
  "$xfer" cp "$2" got.bin -q --profile "$1" && cmp -s got.bin "$3" || fail "$2 differs from $3"
  rm -f got.bin
}
fetch_expected() { "$xfer" cp s3://src/files/other.bin other.bin -q; cp mp.bin multipart.bin; }
fetch_expected

# In one store: copied by the store itself, nothing through the client.
"$xfer" cp s3://src/files/ s3://dst/copy/ --json -q >in_store.json
[ "$(json in_store.json bytes_sent)" = 0 ] || fail "a copy within one store went through the client: $(cat in_store.json)"
[ "$(json in_store.json bytes_server_side)" = "$total" ] || fail "in-store bytes: $(cat in_store.json)"
for f in small.bin big.bin other.bin multipart.bin; do same a "s3://dst/copy/$f" "$f"; done

# Between two regions: streamed, every object checked against what its source says.
"$xfer" cp s3://src/files/ s3://dst/copy/ --source-profile a --dest-profile b --part-size 5M \
  --json -q >streamed.json
[ "$(json streamed.json bytes_sent)" = "$total" ] || fail "streamed bytes: $(cat streamed.json)"
[ "$(json streamed.json bytes_server_side)" = 0 ] || fail "two servers copied server-side?"
for f in small.bin big.bin other.bin multipart.bin; do same b "s3://dst/copy/$f" "$f"; done
# One object, to a key, and to a prefix.
"$xfer" cp s3://src/files/big.bin s3://dst/one.bin --source-profile a --dest-profile b -q
same b s3://dst/one.bin big.bin

# Killed with SIGKILL (first after 1.8 s, with some parts in, then at random points), then run
# again until it completes: whole, and what earlier runs sent is not sent again.
head -c 40000000 /dev/urandom >huge.bin
"$xfer" cp huge.bin s3://src/files/huge.bin -q --part-size 5M
copied=""
for attempt in $(seq 1 30); do
  after=$([ "$attempt" = 1 ] && echo 1.8 || echo "0.$((RANDOM % 9 + 3))")
  set +e
  (timeout -s KILL "$after" "$xfer" cp s3://src/files/huge.bin s3://dst/huge.bin \
    --source-profile a --dest-profile b --part-size 5M --streams 2 --rate 20M --json -q \
    >resumed.json 2>/dev/null; exit $?)  # not exec'd: the subshell reports the kill quietly
  status=$?
  set -e
  if [ "$status" = 0 ]; then copied=$attempt; break; fi
done
[ -n "$copied" ] || copied=$("$xfer" cp s3://src/files/huge.bin s3://dst/huge.bin --source-profile a \
  --dest-profile b --part-size 5M --json -q >resumed.json && echo last)
[ "$copied" != 1 ] || fail "the first attempt was not interrupted: the test tested nothing"
[ "$(json resumed.json bytes_resumed)" -gt 0 ] || fail "nothing was resumed: $(cat resumed.json)"
same b s3://dst/huge.bin huge.bin

# A destination that alters what it stores, and a source whose bytes are not its ETag's.
set +e
"$xfer" cp s3://src/files/big.bin s3://flipping/big.bin --source-profile a --dest-profile h \
  --part-size 5M -q 2>err
status=$?
set -e
[ "$status" = 3 ] || fail "an altering destination was not refused (status $status)"
set +e
"$xfer" cp s3://altered/single s3://dst/altered --source-profile h --dest-profile b -q 2>err
status=$?
set -e
[ "$status" = 3 ] || fail "a source whose bytes are not its ETag's was copied (status $status)"
grep -q "not those the source describes" err || fail "the refusal does not say why"
"$python" -c "
import boto3, botocore, sys
try:
    boto3.client('s3', endpoint_url=sys.argv[1]).head_object(Bucket='dst', Key='altered')
    sys.exit('store_copy_test: the altered object landed')
except botocore.exceptions.ClientError:
    pass" "http://127.0.0.1:$port_b"

# Bad input, each named.
refused "is its own destination" "$xfer" cp s3://src/files/big.bin s3://src/files/big.bin
refused "overlap" "$xfer" cp s3://src/files/ s3://src/files/again/
refused "a key file is for copies to or from this machine" \
  "$xfer" cp s3://src/files/big.bin s3://dst/x --encrypt small.bin
refused "nosuch" "$xfer" cp s3://src/files/big.bin s3://dst/x --dest-profile nosuch
echo "store_copy_test: ok"
