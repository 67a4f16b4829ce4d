#!/usr/bin/env bash
# Encryption under an AWS KMS key (--encrypt kms:KEY) against moto's KMS on loopback (run by
# with_s3_server.py; moto's server answers S3 and KMS on one port):
#  - an archive packed under a key by its alias comes back whole with no key given (the archive
#    names its key), through list, verify, cat and unpack; an object copied up under a key by
#    ARN comes back the same; the KMS key never appears in either;
#  - another KMS key, a key file, or a key file's archive read with kms:KEY are refused, naming
#    the key needed;
#  - a wrapped key moved into another archive (or object) does not open: its encryption context
#    names the archive it was made for;
#  - a KMS endpoint that refuses (AccessDeniedException) is named with the key and the
#    permission missing; one that never answers times out with the attempts counted;
#  - bad input: malformed keys, an unknown alias.
# Usage: kms_test.sh NUBO_XFER PYTHON_WITH_BOTO3
set -euo pipefail
xfer=$(realpath "$1")
python=$2
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${NUBO_S3_TEST_SERVER:-}" ] || { echo "kms_test: run me through with_s3_server.py" >&2; exit 1; }
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "kms_test: $*" >&2; [ -f err ] && cat err >&2; exit 1; }
source "$here/refused.sh"
"$python" - >keys <<PY
import boto3
kms = boto3.client('kms', endpoint_url='$NUBO_S3_TEST_SERVER', region_name='us-east-1')
a = kms.create_key()['KeyMetadata']['Arn']
kms.create_alias(AliasName='alias/nubo-backups', TargetKeyId=a)
b = kms.create_key()['KeyMetadata']['Arn']
boto3.client('s3', endpoint_url='$NUBO_S3_TEST_SERVER').create_bucket(Bucket='kms')
print(a, b)
PY
read -r key_a key_b <keys

mkdir -p src/sub
head -c 3000000 /dev/urandom >src/big.bin
printf 'secret plans\n' >src/sub/plans.txt
"$xfer" pack src -o a.nubo --encrypt kms:alias/nubo-backups -q
grep -q "secret plans" a.nubo && fail "the archive holds its plaintext"
grep -q "$key_a" a.nubo || fail "the archive does not name its KMS key"
"$xfer" list a.nubo | grep -q "src/sub/plans.txt" || fail "list of a KMS archive"
"$xfer" verify a.nubo -q || fail "verify of a KMS archive"
[ "$("$xfer" cat a.nubo src/sub/plans.txt)" = "secret plans" ] || fail "cat of a KMS archive"
"$xfer" unpack a.nubo -C out -q
cmp src/big.bin out/src/big.bin || fail "the unpacked file differs"
"$xfer" unpack a.nubo -C out2 --key "kms:$key_a" -q || fail "unpack naming its own key"
# To S3 directly, and an object, under the key by ARN.
"$xfer" pack src -o s3://kms/a.nubo --encrypt "kms:$key_a" -q
"$xfer" unpack s3://kms/a.nubo -C out3 -q
cmp src/big.bin out3/src/big.bin || fail "the archive through S3 differs"
"$xfer" cp src/big.bin s3://kms/big.bin --encrypt "kms:$key_a" --part-size 5M -q
"$xfer" cp s3://kms/big.bin back.bin -q
cmp src/big.bin back.bin || fail "the object encrypted under KMS came back different"

# Another key, a key file, a key file's archive read under KMS.
exits 2 "$key_b" "$xfer" unpack a.nubo -C x --key "kms:$key_b"
grep -q "a.nubo is encrypted under KMS key $key_a" err || fail "another key: the archive's is not named"
"$xfer" keygen k.key
refused "encrypted under KMS key $key_a" "$xfer" unpack a.nubo -C x --key k.key
"$xfer" pack src -o f.nubo --encrypt k.key -q
refused "is encrypted with a key file" "$xfer" list f.nubo --key "kms:$key_a"
refused "give its key file" "$xfer" list f.nubo

# A wrapped key moved into another archive of the same KMS key: both records are the same size
# and carry their own checks, so the move is a splice; KMS refuses the context.
"$xfer" pack src -o b.nubo --encrypt kms:alias/nubo-backups -q
"$python" - <<'PY'
import struct
a, b = bytearray(open('a.nubo', 'rb').read()), open('b.nubo', 'rb').read()
size = struct.unpack_from('<I', a, 12)[0]
assert size == struct.unpack_from('<I', b, 12)[0] and size > 168
a[168:size] = b[168:size]
open('moved.nubo', 'wb').write(a)
PY
exits 3 "encryption context" "$xfer" list moved.nubo
# The same for an object: another object's KMS record in its metadata.
"$xfer" cp src/sub/plans.txt s3://kms/other.txt --encrypt "kms:$key_a" -q
"$python" - <<PY
import boto3
s3 = boto3.client('s3', endpoint_url='$NUBO_S3_TEST_SERVER')
mine = s3.head_object(Bucket='kms', Key='big.bin')['Metadata']
other = s3.head_object(Bucket='kms', Key='other.txt')['Metadata']
assert 'nubo-kms-record' in mine, mine
mine['nubo-kms-record'] = other['nubo-kms-record']
s3.copy_object(Bucket='kms', Key='moved.bin', CopySource={'Bucket': 'kms', 'Key': 'big.bin'},
               Metadata=mine, MetadataDirective='REPLACE')
PY
exits 3 "encryption context" "$xfer" cp s3://kms/moved.bin moved.bin
[ ! -e moved.bin ] || fail "a refused object left a file behind"

# A KMS endpoint that refuses Decrypt, and one that never answers.
"$python" - >port <<'PY' &
import json, socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Refuse(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length') or 0))
        target = self.headers.get('X-Amz-Target', '')
        body = json.dumps({'__type': 'AccessDeniedException', 'message':
                           'User is not authorized to perform: kms:Decrypt'}).encode()
        self.send_response(400)
        self.send_header('Content-Type', 'application/x-amz-json-1.1')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
refuse = ThreadingHTTPServer(('127.0.0.1', 0), Refuse)
silent = socket.socket()
silent.bind(('127.0.0.1', 0))
silent.listen(16)  # accepted by the kernel, never answered
print(refuse.server_address[1], silent.getsockname()[1], flush=True)
refuse.serve_forever()
PY
server=$!
for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
read -r refusing silent <port
AWS_ENDPOINT_URL_KMS=http://127.0.0.1:$refusing exits 2 "may not use key" \
  "$xfer" unpack a.nubo -C x --key "kms:$key_a"
grep -q "kms:Decrypt" err && grep -q "$key_a" err || fail "the refusal names no key or permission"
started=$(date +%s)
AWS_ENDPOINT_URL_KMS=http://127.0.0.1:$silent NUBO_S3_TIMEOUT=1 AWS_MAX_ATTEMPTS=2 \
  exits 5 "still after 2 attempts" "$xfer" list a.nubo
grep -q "KMS Decrypt" err || fail "the timeout does not name KMS: $(cat err)"
[ $(($(date +%s) - started)) -lt 30 ] || fail "the KMS timeout took more than 30 s"

# Bad input.
refused "is not a KMS key: it is empty" "$xfer" pack src -o x.nubo --encrypt kms:
refused "the ARN is of service 's3'" "$xfer" pack src -o x.nubo --encrypt kms:arn:aws:s3:::b/k
refused "account is not 12 digits" "$xfer" pack src -o x.nubo \
  --encrypt kms:arn:aws:kms:us-east-1:12:key/abc
refused "an alias's name" "$xfer" cp src/big.bin s3://kms/x --encrypt "kms:alias/no spaces"
exits 1 "alias/missing" "$xfer" pack src -o x.nubo --encrypt kms:alias/missing
[ ! -e x.nubo ] || fail "a refused pack left an archive"
echo "kms_test: ok"
