#!/usr/bin/env bash
# The printed IAM policy against what nubo does. Every request of each operation goes through a
# recording proxy in front of the loopback S3 server (recording_proxy.py names each request's
# action from AWS's documentation, not from nubo's table):
#  - pack: an archive up, a pack killed with SIGKILL and run again (ListParts), a pack cancelled
#    with SIGINT (its upload aborted);
#  - unpack: list, cat, verify and unpack of that archive;
#  - cp: a file up in parts, killed and resumed, one cancelled, a file and a prefix down;
#  - sync: a tree up, again with a file gone (--delete), and back down;
#  - checkpoint: nubo-train writing checkpoints to the bucket, pruning them, and resuming;
#  - and pack, unpack and cp of archives and objects encrypted under a KMS key (moto's KMS,
#    through the same proxy): the KMS actions they issue are in the policy with kms:KEY.
# The actions each operation issued must all be in `nubo-xfer policy --ops OP`, and every action
# the policy of all of them prints must have been issued by one. Each request's object, and each
# listing's prefix, must also lie inside the resources the policy of the place it was made in
# prints, and a place must grant nothing beside it (s3://b/a never b/ab). Then bad input.
# Usage: policy_test.sh NUBO_XFER NUBO_TRAIN PYTHON_WITH_BOTO3 (run by with_s3_server.py)
set -euo pipefail
xfer=$(realpath "$1")
train=$(realpath "$2")
python=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${NUBO_S3_TEST_SERVER:-}" ] || { echo "policy_test: run me through with_s3_server.py" >&2; exit 1; }
work=$(mktemp -d)
proxy=""
trap '[ -n "$proxy" ] && kill "$proxy" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "policy_test: $*" >&2; exit 1; }
source "$here/refused.sh"
kms_arn=$("$python" -c "
import boto3
boto3.client('s3', endpoint_url='$NUBO_S3_TEST_SERVER').create_bucket(Bucket='pol')
kms = boto3.client('kms', endpoint_url='$NUBO_S3_TEST_SERVER', region_name='us-east-1')
print(kms.create_key()['KeyMetadata']['Arn'])")

# Parts are answered 1 s late, so that a kill or a cancel finds some in and some in flight.
: >actions.log
"$python" "$here/recording_proxy.py" "$NUBO_S3_TEST_SERVER" "$work/actions.log" 1 >port &
proxy=$!
for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
[ -s port ] || fail "the recording proxy did not start"
export AWS_ENDPOINT_URL="http://127.0.0.1:$(cat port)"

# Runs a command as part of operation OP; the actions it issued are added to used.OP.
as() {
  local op=$1 before
  shift
  before=$(wc -l <actions.log)
  "$@" || true
  sed -n "$((before + 1)),\$p" actions.log | cut -d' ' -f1 >>"used.$op"
  sed -n "$((before + 1)),\$p" actions.log >>"calls.$op"
}
# Starts a command as part of OP, and stops it with SIGNAL after SECONDS.
interrupted() {
  local op=$1 signal=$2 seconds=$3 before pid
  shift 3
  before=$(wc -l <actions.log)
  "$@" >/dev/null 2>&1 &
  pid=$!
  sleep "$seconds"
  kill "-$signal" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  sleep 0.5  # the proxy may still be answering a request the command made
  sed -n "$((before + 1)),\$p" actions.log | cut -d' ' -f1 >>"used.$op"
  sed -n "$((before + 1)),\$p" actions.log >>"calls.$op"
}

mkdir -p src
head -c 30000000 /dev/urandom >src/big.bin
printf 'hello\n' >src/a.txt
as pack "$xfer" pack src -o s3://pol/archives/a.nubo -q
interrupted pack KILL 1.5 "$xfer" pack src -o s3://pol/archives/k.nubo -q
as pack "$xfer" pack src -o s3://pol/archives/k.nubo -q
interrupted pack INT 1.5 "$xfer" pack src -o s3://pol/archives/c.nubo -q

as unpack "$xfer" list s3://pol/archives/a.nubo
as unpack "$xfer" cat s3://pol/archives/a.nubo src/a.txt
as unpack "$xfer" verify s3://pol/archives/a.nubo -q
as unpack "$xfer" unpack s3://pol/archives/a.nubo -C out -q
cmp src/big.bin out/src/big.bin || fail "the unpack through the proxy differs"
mkdir -p small && printf 'plans\n' >small/p.txt
as pack "$xfer" pack small -o s3://pol/archives/kms.nubo --encrypt "kms:$kms_arn" -q
as unpack "$xfer" unpack s3://pol/archives/kms.nubo -C kms-out -q
[ -f kms-out/small/p.txt ] || fail "the KMS archive did not come back through the proxy"
as cp "$xfer" cp small/p.txt s3://pol/files/kms.txt --encrypt "kms:$kms_arn" -q
as cp "$xfer" cp s3://pol/files/kms.txt kms.txt -q
cmp small/p.txt kms.txt || fail "the KMS object came back different"
grep -q "^kms:GenerateDataKey" used.pack && grep -q "^kms:Decrypt" used.unpack &&
  grep -q "^kms:Decrypt" used.cp || fail "the proxy saw no KMS request"

as cp "$xfer" cp src/big.bin s3://pol/files/ -q --part-size 5M
interrupted cp KILL 1.5 "$xfer" cp src/big.bin s3://pol/files/k.bin -q --part-size 5M
as cp "$xfer" cp src/big.bin s3://pol/files/k.bin -q --part-size 5M
interrupted cp INT 1.5 "$xfer" cp src/big.bin s3://pol/files/c.bin -q --part-size 5M
as cp "$xfer" cp s3://pol/files/k.bin back.bin -q
cmp src/big.bin back.bin || fail "a resumed copy through the proxy differs"
as cp "$xfer" cp s3://pol/files/ down -q

as sync "$xfer" sync src s3://pol/mirror/ -q
rm src/a.txt
as sync "$xfer" sync src s3://pol/mirror/ --delete -q
as sync "$xfer" sync s3://pol/mirror/ mirror -q

data=/usr/share/datasets/fashion-mnist
if [ -r "$data/train-images-idx3-ubyte.gz" ]; then
  run_train() {
    "$train" --devices cpu --subset 512 --batch 128 --hidden 16 --checkpoint s3://pol/ckpt/ \
      --checkpoint-every 1 --sync-checkpoints --quiet --epochs "$1"
  }
  as checkpoint run_train 2 >/dev/null
  as checkpoint run_train 3 >/dev/null
  grep -q "^s3:DeleteObject" used.checkpoint || fail "the trainer pruned no checkpoint"
  ops=pack,unpack,cp,sync,checkpoint
else
  echo "policy_test: no Fashion-MNIST ($data): the checkpoint operation is not checked" >&2
  ops=pack,unpack,cp,sync
fi

# What each operation issued is in its policy.
granted() { "$xfer" policy s3://pol/ --ops "$1,kms:$kms_arn" | "$python" -c '
import json, sys
for s in json.load(sys.stdin)["Statement"]:
    for a in s["Action"]:
        print(a)' | sort -u; }
for op in ${ops//,/ }; do
  sort -u "used.$op" >"used.$op.sorted"
  [ -s "used.$op.sorted" ] || fail "$op issued no request: the test tested nothing"
  extra=$(comm -23 "used.$op.sorted" <(granted "$op"))
  [ -z "$extra" ] || fail "$op issued $(echo $extra) outside its printed policy"
done
# Every action printed is issued by some operation: the policy grants nothing unused.
cat used.*.sorted | sort -u >used.all
unused=$(comm -13 used.all <(granted "$ops"))
[ -z "$unused" ] || fail "the policy of $ops grants $(echo $unused), which no operation issued"

# Each request inside the resources of its place's policy: pack and unpack in archives/, cp in
# files/, sync in mirror/, checkpoints in ckpt/ (IAM's '*' matches any run of characters).
inside() {  # OP PLACE
  "$xfer" policy "$2" --ops "$1,kms:$kms_arn" >"policy.$1.json"
  "$python" - "policy.$1.json" "calls.$1" "$1" <<'PY'
import fnmatch, json, sys
p = json.load(open(sys.argv[1]))
objects, prefixes = [], []
for s in p["Statement"]:
    if s["Action"] == ["s3:ListBucket"]:
        prefixes += s["Condition"]["StringLike"]["s3:prefix"]
    elif not s["Sid"] == "NuboKms":
        objects += s["Resource"]
def granted(value, patterns):
    return any(fnmatch.fnmatchcase(value, q.replace("[", "[[]")) for q in patterns)
for line in open(sys.argv[2]):
    act, method, path, prefix = line.split()
    if act.startswith("kms:"):
        continue
    if act == "s3:ListBucket":
        want = "" if prefix == "<empty>" else prefix
        assert granted(want, prefixes), f"{sys.argv[3]}: a listing of {want!r} outside {prefixes}"
    else:
        arn = "arn:aws:s3:::" + path.lstrip("/")
        assert granted(arn, objects), f"{sys.argv[3]}: {method} {path} outside {objects}"
PY
}
inside pack s3://pol/archives/ || fail "pack reached outside its place's policy"
inside unpack s3://pol/archives/ || fail "unpack reached outside its place's policy"
inside cp s3://pol/files/ || fail "cp reached outside its place's policy"
inside sync s3://pol/mirror/ || fail "sync reached outside its place's policy"
[ ! -s calls.checkpoint ] || inside checkpoint s3://pol/ckpt/ ||
  fail "checkpoints reached outside their place's policy"
# A place grants nothing that only starts like it.
"$xfer" policy s3://pol/a --ops cp >narrow.json
"$python" - narrow.json <<'PY' || fail "s3://pol/a grants more than pol/a and pol/a/"
import fnmatch, json, sys
p = json.load(open(sys.argv[1]))
res = [r for s in p["Statement"] if s["Sid"] == "NuboObjects" for r in s["Resource"]]
cond = [c for s in p["Statement"] if "Condition" in s for c in s["Condition"]["StringLike"]["s3:prefix"]]
for bad in ("arn:aws:s3:::pol/ab/x", "arn:aws:s3:::pol/a-secrets/k", "arn:aws:s3:::pol/ab"):
    assert not any(fnmatch.fnmatchcase(bad, r) for r in res), (bad, res)
assert any(fnmatch.fnmatchcase("arn:aws:s3:::pol/a/x", r) for r in res), res
assert any(fnmatch.fnmatchcase("arn:aws:s3:::pol/a", r) for r in res), res
assert not any(fnmatch.fnmatchcase("ab/", c) for c in cond), cond
PY
refused "may not hold" "$xfer" policy 's3://pol/*/' --ops cp

# The document's shape: objects under the prefix, the listing limited to it, KMS keys.
arn=arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab
"$xfer" policy s3://pol/backups/ --ops cp,kms:$arn >policy.json
"$python" - policy.json "$arn" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["Version"] == "2012-10-17", p
by_sid = {s["Sid"]: s for s in p["Statement"]}
assert by_sid["NuboObjects"]["Resource"] == ["arn:aws:s3:::pol/backups/*"], p
lists = [s for s in p["Statement"] if s["Action"] == ["s3:ListBucket"]]
assert lists and lists[0]["Resource"] == ["arn:aws:s3:::pol"], p
assert lists[0]["Condition"] == {"StringLike": {"s3:prefix": ["backups/*"]}}, p
assert by_sid["NuboKms"]["Resource"] == [sys.argv[2]], p
assert sorted(by_sid["NuboKms"]["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey"], p
EOF
[ "$(AWS_REGION=cn-north-1 "$xfer" policy s3://pol/x --ops unpack | grep -c 'arn:aws-cn:s3')" = 2 ] ||
  fail "a China region's ARNs are not in the aws-cn partition"

# Bad input is refused, naming what is wrong (status 2: usage).
refused "unknown operation 'frobnicate'" "$xfer" policy s3://pol/x --ops pack,frobnicate
refused "'kms-key' is not a KMS key ARN" "$xfer" policy s3://pol/x --ops kms:kms-key
refused "s3://" "$xfer" policy gs://pol/x --ops pack
refused "needs operations" "$xfer" policy s3://pol/x --ops kms:$arn
echo "policy_test: ok"
