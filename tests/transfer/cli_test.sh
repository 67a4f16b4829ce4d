#!/usr/bin/env bash
# nubo-xfer's conventions from the command line: -o - to stdout, -f, --dry-run, --exclude and
# --include (bad patterns too), durations with units, and the exit statuses (2 usage, 5 retry).
# Usage: cli_test.sh NUBO_XFER
set -euo pipefail
xfer=$(realpath "$1")
serve_pid=
work=$(mktemp -d)
trap 'kill $serve_pid 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
fail() { echo "cli_test: $*" >&2; exit 1; }
status() { set +e; "$@" >/dev/null 2>"$work/err"; local s=$?; set -e; echo $s; }

mkdir -p src/sub src/logs
printf 'hello\n' > src/a.txt
printf 'scratch\n' > src/b.tmp
printf 'log\n' > src/logs/x.log
printf 'kept\n' > src/sub/keep.tmp
head -c 300000 /dev/urandom > src/sub/big.bin

# -o -: the archive on stdout reads back like any other.
"$xfer" pack src -o - -q > piped.nubo
"$xfer" verify piped.nubo -q
"$xfer" unpack piped.nubo -C out1 -q
cmp src/sub/big.bin out1/src/sub/big.bin || fail "-o - did not round-trip"
[ "$(status "$xfer" pack src -o - --json)" = 2 ] || fail "-o - with --json was not refused"

# An existing archive is kept unless -f.
"$xfer" pack src -o a.nubo -q
[ "$(status "$xfer" pack src -o a.nubo -q)" = 2 ] || fail "an existing archive was overwritten"
grep -q -- "-f" err || fail "the refusal does not mention -f"
"$xfer" pack src -o a.nubo -q -f

# Filters, and a dry run that writes nothing.
"$xfer" pack src -o f.nubo -n --exclude '*.tmp' --exclude 'logs/' --include 'sub/keep.tmp' \
  > listed.txt 2> summary.txt
[ ! -e f.nubo ] && [ ! -e f.nubo.part ] || fail "--dry-run wrote something"
diff <(printf 'src/\nsrc/a.txt\nsrc/sub/\nsrc/sub/big.bin\nsrc/sub/keep.tmp\n') listed.txt \
  || fail "--dry-run listed the wrong entries"
grep -q "would pack 5 entries, 3 files" summary.txt || fail "dry run summary: $(cat summary.txt)"
"$xfer" pack src -o f.nubo -q --exclude '*.tmp' --exclude 'logs/' --include 'sub/keep.tmp'
diff <(printf 'src\nsrc/a.txt\nsrc/sub\nsrc/sub/big.bin\nsrc/sub/keep.tmp\n') \
  <("$xfer" list f.nubo) || fail "the filters were not applied"
for bad in '' '[abc' 'x[' '/'; do
  [ "$(status "$xfer" pack src -o g.nubo --exclude "$bad")" = 2 ] \
    || fail "bad pattern '$bad' was accepted"
  grep -q -- "--exclude pattern" err || fail "the error does not name the pattern: $(cat err)"
done

# Durations take units; a bad one is a usage error naming the option.
[ "$(status "$xfer" send src 127.0.0.1:1 --timeout 2x)" = 2 ] || fail "--timeout 2x accepted"
grep -q -- "--timeout" err || fail "the duration error does not name --timeout"

# Retryable: nobody listening. Exit 5, as rclone's temporary errors.
export NUBO_TOKEN=cli-test-token-0123456789
[ "$(status "$xfer" send src 127.0.0.1:1 --timeout 2s -q)" = 5 ] \
  || fail "a refused connection is not exit 5: $(cat err)"

# serve: a missing --dest is an error naming it, unless --mkdir; --json reports at the end.
[ "$(status "$xfer" serve --dest "$work/no/such/dir" --listen 127.0.0.1:0)" != 0 ] \
  || fail "serve accepted a missing --dest"
grep -q "no/such/dir" err || fail "the error does not name the missing dest"
"$xfer" serve --dest "$work/recv/new" --mkdir --listen 127.0.0.1:0 --json \
  --handshake-timeout 5s --timeout 1m > served.txt 2> serve.err &
serve_pid=$!
for _ in $(seq 100); do [ -s served.txt ] && break; sleep 0.05; done
port=$(head -n1 served.txt)
"$xfer" send src "127.0.0.1:$port" -q --exclude '*.bin'
[ -f recv/new/src/a.txt ] && [ ! -e recv/new/src/sub/big.bin ] || fail "send --exclude"
"$xfer" send src "127.0.0.1:$port" -n > sent.txt 2>/dev/null
grep -q "src/sub/big.bin" sent.txt || fail "send --dry-run listing"
kill -TERM $serve_pid
wait $serve_pid
tail -n +2 served.txt | grep -q '"sessions": 1' || fail "serve --json: $(cat served.txt)"

# Encryption: keygen once; pack --encrypt; every reader takes --key, and refuses without it.
"$xfer" keygen k.key -q
[ "$(stat -c %a k.key)" = 600 ] || fail "keygen: mode $(stat -c %a k.key)"
[ "$(status "$xfer" keygen k.key)" = 2 ] || fail "keygen replaced a key file"
"$xfer" pack src -o sealed.nubo --encrypt k.key -q
! grep -q "sub/big.bin" sealed.nubo || fail "an encrypted archive holds a name in the clear"
[ "$(status "$xfer" list sealed.nubo)" = 2 ] || fail "list without the key"
grep -q "is encrypted: give its key file (--key), key [0-9a-f]\{32\}" err \
  || fail "list without the key: $(cat err)"
"$xfer" list sealed.nubo --key k.key | grep -q "src/sub/big.bin" || fail "list --key"
"$xfer" verify sealed.nubo --key k.key -q || fail "verify --key"
[ "$("$xfer" cat sealed.nubo src/a.txt --key k.key)" = "$(cat src/a.txt)" ] || fail "cat --key"
"$xfer" unpack sealed.nubo -C opened --key k.key -q
cmp src/sub/big.bin opened/src/sub/big.bin || fail "unpack --key"
[ "$(status "$xfer" pack src -o x.nubo --encrypt no-such.key)" = 1 ] || fail "a missing key file"
grep -q "no-such.key' does not exist" err || fail "a missing key file's message: $(cat err)"
echo "cli_test: ok"
