#!/usr/bin/env bash
# nubo-xfer against a broken or hostile S3 endpoint (hostile_s3_server.py): truncated bodies, a
# wrong length, 10 GB declared, XML that is not XML, endless 503s and a slowloris. Each ends in
# a clear error within a bounded time (AWS_MAX_ATTEMPTS and NUBO_S3_TIMEOUT keep it short), and
# nothing lands under the destination's name.
# Usage: hostile_test.sh NUBO_XFER PYTHON
set -euo pipefail
xfer=$(realpath "$1")
python=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
server_pid=
trap 'kill $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "hostile_test: $*" >&2; [ -f err ] && cat err >&2; exit 1; }

"$python" "$here/hostile_s3_server.py" > port &
server_pid=$!
for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
export AWS_ENDPOINT_URL="http://127.0.0.1:$(head -n1 port)"
export AWS_ACCESS_KEY_ID=AKIDHOSTILE AWS_SECRET_ACCESS_KEY=secret AWS_REGION=us-east-1
export AWS_MAX_ATTEMPTS=3 NUBO_S3_TIMEOUT=2
unset AWS_PROFILE

# expect WHAT SECONDS COMMAND...: fails (not 0), within SECONDS, with WHAT in its message.
expect() {
  local what=$1 limit=$2 start end
  shift 2
  start=$(date +%s)
  set +e
  timeout 120 "$@" >/dev/null 2>err
  status=$?
  set -e
  end=$(date +%s)
  [ "$status" -ne 0 ] || fail "'$*' succeeded against a hostile server"
  [ "$status" -ne 124 ] || fail "'$*' hung"
  [ $((end - start)) -le "$limit" ] || fail "'$*' took $((end - start)) s (bound $limit s)"
  grep -qi -- "$what" err || fail "'$*': the message does not say '$what'"
}

expect "truncated\|transfer closed\|partial" 30 "$xfer" cp s3://truncated/object.bin got.bin -q
[ ! -e got.bin ] || fail "a truncated download landed"
expect "bytes" 30 "$xfer" cp s3://shortrange/object.bin got.bin -q
[ ! -e got.bin ] || fail "a short download landed"
expect "limit\|too large\|bytes" 60 "$xfer" list s3://huge/a.nubo
expect "xml\|list" 30 "$xfer" cp s3://badxml/prefix/ tree -q
expect "503" 30 "$xfer" cp s3://unavailable/object.bin got.bin -q
grep -q "after 3 attempts" err || fail "the 503s' error does not say how often it tried"
# 501 is the server saying it never will: no retries.
expect "does not implement" 30 "$xfer" cp s3://unsupported/object.bin got.bin -q
! grep -q "attempts" err || fail "a 501 was retried: $(cat err)"
expect "stall\|timed out\|timeout" 30 "$xfer" cp s3://slow/object.bin got.bin -q
[ ! -e got.bin ] || fail "a slowloris download landed"
# Objects another client uploaded are checked against their ETag (whole, and multipart from the
# parts' MD5s): altered bytes are refused and nothing lands; intact ones land with no warning.
expect "does not match its ETag" 30 "$xfer" cp s3://altered/single got.bin -q
[ ! -e got.bin ] || fail "an object that does not match its ETag landed"
expect "does not match its ETag" 30 "$xfer" cp s3://altered/multi got.bin -q
[ ! -e got.bin ] || fail "a multipart object that does not match its ETag landed"
"$xfer" cp s3://altered/intact got.bin -q 2>err || fail "an intact multipart object was refused"
[ "$(cat got.bin)" = "hello, world" ] || fail "the intact object came back as '$(cat got.bin)'"
! grep -q "only its size" err || fail "an intact multipart object was not checked: $(cat err)"
rm got.bin
# Under SSE-KMS the ETag is no MD5: the object lands, and the warning says why it was not checked.
"$xfer" cp s3://altered/kms got.bin -q 2>err || fail "an SSE-KMS object was refused: $(cat err)"
grep -q "not an MD5 under SSE-KMS.*only its size was checked" err || fail "SSE-KMS: $(cat err)"
# Signatures checked by a server written from the specification: nubo's are accepted, and
# refused credentials are named by key id (never the secret) as a usage error (exit 2).
"$xfer" cp s3://signed/object.bin got.bin -q 2>err || fail "a good signature was refused"
[ "$(cat got.bin)" = "signed ok" ] || fail "the signed object came back as '$(cat got.bin)'"
rm -f got.bin
# An upload's body is signed as UNSIGNED-PAYLOAD with its Content-MD5 among the signed headers
# (not hashed a second time with SHA-256); the server checks both, as S3 does.
head -c 300000 /dev/urandom > up.bin
"$xfer" cp up.bin s3://signed/unsigned.bin -q 2>err || fail "a signed upload was refused: $(cat err)"
# A server that does not take UNSIGNED-PAYLOAD: refused once, the upload is sent again with its
# payload's SHA-256 and lands.
NUBO_LOG=info "$xfer" cp up.bin s3://signed/signedpayload.bin -q 2>err ||
  fail "no fallback to a signed payload: $(cat err)"
grep -q "refused an unsigned payload (NotImplemented)" err || fail "the fallback was not taken: $(cat err)"
rm -f up.bin
for wrong in "AWS_SECRET_ACCESS_KEY=not-the-secret" "AWS_ACCESS_KEY_ID=AKIDUNKNOWN"; do
  set +e
  env "$wrong" timeout 60 "$xfer" cp s3://signed/object.bin got.bin -q 2>err
  status=$?
  set -e
  [ "$status" = 2 ] || fail "refused credentials ($wrong) exit $status"
  grep -q "refused the credentials of key id" err || fail "refused credentials: $(cat err)"
  ! grep -q "not-the-secret" err || fail "the secret appears in the message"
  [ ! -e got.bin ] || fail "a refused download landed"
done
# No credentials at all: a usage error too (exit 2), never "temporary" (5), which a retry
# wrapper would run again forever.
set +e
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_PROFILE HOME="$PWD/nohome" \
  AWS_SHARED_CREDENTIALS_FILE="$PWD/nohome/none" AWS_CONFIG_FILE="$PWD/nohome/none" \
  timeout 60 "$xfer" cp s3://signed/object.bin got.bin -q 2>err
status=$?
set -e
[ "$status" = 2 ] || fail "missing credentials exit $status: $(cat err)"
grep -q "no S3 credentials: set AWS_ACCESS_KEY_ID" err || fail "missing credentials: $(cat err)"
# A proxy that flips a byte of every PUT body and strips its Content-MD5: the server's ETag tells,
# and the upload fails (exit 3), whole, in parts, and packed; never a success.
head -c 100000 /dev/urandom > small.bin
expect "altered on the way" 30 "$xfer" cp small.bin s3://flipping/small.bin -q
head -c 20000000 /dev/urandom > big.bin  # three parts of 8 MiB
expect "altered on the way" 60 "$xfer" cp big.bin s3://flipping/big.bin -q
[ "$status" = 3 ] || fail "an altered upload exited $status"
mkdir -p src && cp small.bin src/
expect "altered on the way" 30 "$xfer" pack src -o s3://flipping/a.nubo -q
# A connection that drops in the middle of a range read ahead: that range is fetched again, alone
# (the bytes fetched are the archive's, as in a clean read), and the unpack is whole.
mkdir -p drop && head -c 6000000 /dev/urandom > drop/big.bin && cp small.bin drop/
"$xfer" pack drop -o s3://dropmid/d.nubo -q || fail "pack to dropmid failed"
"$xfer" unpack s3://dropmid/d.nubo -C dropped --json >drop.json 2>err ||
  fail "a range cut in the middle was not fetched again: $(cat err)"
diff -r drop dropped/drop >/dev/null || fail "the unpack after a cut range differs"
"$xfer" cp s3://dropmid/_dropped cuts -q || fail "the server's count of cut ranges"
[ "$(cat cuts)" -ge 1 ] || fail "no range was cut: the test tested nothing"
size=$("$python" -c "import json; print(json.load(open('drop.json'))['bytes_stored'])")
fetched=$("$python" -c "import json; print(json.load(open('drop.json'))['bytes_transferred'])")
[ "$fetched" -lt $((size * 3 / 2)) ] || fail "a cut range refetched $fetched bytes of $size"
# A range whose response stalls (headers, then nothing) is asked for again once it is late for
# the link, on another connection, rather than waited for until the stall times out (here
# 100 s, longer than the unpack is given); the stalled request is abandoned at the end.
mkdir -p stallsrc && head -c 6000000 /dev/urandom > stallsrc/big.bin && cp small.bin stallsrc/
"$xfer" pack stallsrc -o s3://stall/s.nubo -q || fail "pack to stall failed"
NUBO_S3_TIMEOUT=100 timeout 60 "$xfer" unpack s3://stall/s.nubo -C stalled -q 2>err ||
  fail "a stalled range held the unpack: $(cat err)"
diff -r stallsrc stalled/stallsrc >/dev/null || fail "the unpack after a stalled range differs"
"$xfer" cp s3://stall/_stalled stalls -q && "$xfer" cp s3://stall/_asked_again again -q ||
  fail "the server's counts of stalled ranges"
[ "$(cat stalls)" -ge 1 ] || fail "no range was stalled: the test tested nothing"
[ "$(cat again)" -ge 1 ] || fail "no stalled range was asked for again"
# Under SSE-KMS the ETag says nothing of the content: the CRC-32C a checking server answers
# with still does, whole and in parts.
expect "received bytes whose CRC-32C is" 30 "$xfer" cp small.bin s3://kmsflip/small.bin -q
expect "received bytes whose CRC-32C is" 30 "$xfer" pack src -o s3://kmsflip/a.nubo -q
# A completion that names other parts than those sent is refused too.
expect "not the 3 parts sent" 60 "$xfer" cp big.bin s3://badcomplete/big.bin -q
# A redirect says where to and why it was not followed.
expect "redirected the request to https://redirect.s3.eu-west-3" 30 \
  "$xfer" cp s3://redirect/object.bin got.bin -q
grep -q "does not follow redirects with credentials" err || fail "redirect: $(cat err)"
# Bad knobs are refused, naming them.
expect "AWS_MAX_ATTEMPTS" 10 env AWS_MAX_ATTEMPTS=zero "$xfer" cp s3://unavailable/x got.bin -q
expect "NUBO_S3_TIMEOUT" 10 env NUBO_S3_TIMEOUT=-1 "$xfer" cp s3://unavailable/x got.bin -q
echo "hostile_test: ok"
