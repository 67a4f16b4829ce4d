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

# --codec and --level's help is the library's codec table, for pack and send alike.
for cmd in pack send; do
  help=$("$xfer" "$cmd" --help)
  for want in "lz4 1 to 12, default 1" "zstd -7 to 22, default 3" "float (zstd over the byte planes" \
      "auto (the highest zstd level it may use) 1 to 19, default 12" " or none"; do
    grep -qF -- "$want" <<<"$help" || fail "$cmd --help does not say '$want'"
  done
done

# -o -: the archive on stdout reads back like any other.
"$xfer" pack src -o - -q > piped.nubo
"$xfer" verify piped.nubo -q
"$xfer" unpack piped.nubo -C out1 -q
cmp src/sub/big.bin out1/src/sub/big.bin || fail "-o - did not round-trip"
[ "$(status "$xfer" pack src -o - --json)" = 2 ] || fail "-o - with --json was not refused"

# An existing archive is kept unless -f. The same pack run again after it completed has
# nothing to do (exit 0, as rsync), so that a wrapper retrying until success ends; once the
# sources changed it is refused, naming what changed.
"$xfer" pack src -o a.nubo -q
"$xfer" pack src -o a.nubo 2> err || fail "a rerun of a completed pack failed: $(cat err)"
grep -q "a.nubo is up to date with its sources" err || fail "the rerun: $(cat err)"
until "$xfer" pack src -o a.nubo -q; do fail "a retry loop would not end"; done
printf 'hello, again\n' > src/a.txt
[ "$(status "$xfer" pack src -o a.nubo -q)" = 2 ] || fail "an existing archive was overwritten"
grep -q "differs from the sources: 'src/a.txt': its size changed; pass -f" err \
  || fail "the refusal: $(cat err)"
touch src/new.txt
[ "$(status "$xfer" pack src -o a.nubo -q)" = 2 ] || fail "a new source file went unnoticed"
rm src/new.txt
printf 'not an archive' > b.nubo
[ "$(status "$xfer" pack src -o b.nubo -q)" = 2 ] || fail "a file that is no archive was overwritten"
grep -q "not a complete archive" err || fail "the refusal: $(cat err)"
"$xfer" pack src -o a.nubo -q -f
"$xfer" pack src -o a.nubo -q || fail "a rerun after -f"
printf 'hello\n' > src/a.txt

# Filters, and a dry run that writes nothing.
"$xfer" pack src -o f.nubo -n --exclude '*.tmp' --exclude 'logs/' --include 'sub/keep.tmp' \
  > listed.txt 2> summary.txt
[ ! -e f.nubo ] && [ ! -e f.nubo.part ] || fail "--dry-run wrote something"
diff <(printf 'src/\nsrc/a.txt\nsrc/sub/\nsrc/sub/big.bin\nsrc/sub/keep.tmp\n') listed.txt \
  || fail "--dry-run listed the wrong entries"
grep -q "would pack 5 entries, 3 files" summary.txt || fail "dry run summary: $(cat summary.txt)"
# One of a thing is said in the singular ("copied 1 files" once read oddly).
"$xfer" pack src/a.txt -o one.nubo 2> one.txt || fail "packing one file"
grep -q "packed 1 file," one.txt || fail "one file's summary: $(cat one.txt)"
"$xfer" pack src/a.txt -o one.nubo -f -n > /dev/null 2> one.txt
grep -q "would pack 1 entry, 1 file," one.txt || fail "one file's dry run: $(cat one.txt)"
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
# Names that would drive a terminal are listed escaped, one a line; JSON keeps them exact.
mkdir -p odd
printf 'x' > "odd/$(printf 'evil\033[2J\nforged')"
"$xfer" pack odd -o odd.nubo -q
"$xfer" list odd.nubo > listed.txt
[ "$(wc -l < listed.txt)" = 2 ] || fail "an escaped name took more than one line: $(cat -v listed.txt)"
! grep -q "$(printf '\033')" listed.txt || fail "list printed an escape character raw"
grep -qF 'odd/evil\x1b[2J\nforged' listed.txt || fail "list: $(cat -v listed.txt)"
"$xfer" list odd.nubo --json | grep -qF '"path": "odd/evil\u001b[2J\nforged"' \
  || fail "list --json changed the name"
[ "$(status "$xfer" cat odd.nubo "odd/$(printf 'evil\033[2J')")" = 1 ] || fail "cat of no entry"
! grep -q "$(printf '\033')" err || fail "an error printed an escape character raw"

# cat of a directory is refused, not an empty success.
[ "$(status "$xfer" cat odd.nubo odd)" = 2 ] || fail "cat of a directory: $(cat err)"
grep -q "'odd' is a directory, not a file" err || fail "cat of a directory: $(cat err)"

# list -l has a header line naming its columns; cat of a name without its folders suggests
# the entry it most likely meant.
"$xfer" list -l piped.nubo > long.txt
head -1 long.txt | grep -q '^MODE  *SIZE  *STORED MODIFIED  *PATH$' || fail "list -l header: $(head -1 long.txt)"
grep -q ' src/sub/big.bin$' long.txt || fail "list -l: $(cat long.txt)"
[ "$(status "$xfer" cat piped.nubo big.bin)" = 1 ] || fail "cat of a near miss"
grep -q "no entry 'big.bin'; did you mean 'src/sub/big.bin'?" err || fail "near miss: $(cat err)"
[ "$(status "$xfer" cat piped.nubo ./src/a.txt)" = 1 ] || fail "cat of ./src/a.txt"
grep -q "did you mean 'src/a.txt'?" err || fail "a leading ./: $(cat err)"

# An unpack over a file the user changed restores it, and counts as kept only the files that
# were intact; nothing is called resumed or "already done".
"$xfer" unpack piped.nubo -C again -q
printf 'X' | dd of=again/src/sub/big.bin bs=1 seek=10 conv=notrunc 2>/dev/null
"$xfer" unpack piped.nubo -C again 2> err
cmp src/sub/big.bin again/src/sub/big.bin || fail "the changed file was not restored"
# The four small files (23 bytes) were intact; the changed one is not among them.
grep -q ", 23 B already in place (verified, kept)" err || fail "the unpack report: $(cat err)"
! grep -q "already done\|resumed" err || fail "the unpack report: $(cat err)"

# Model weights: --codec float round-trips them exactly, and auto takes it for them.
mkdir -p weights
python3 -c 'import random, struct, sys
random.seed(1)
sys.stdout.buffer.write(struct.pack("<200000f", *(random.gauss(0, 0.02) for _ in range(200000))))' \
  > weights/layer.f32
"$xfer" pack weights -o w-float.nubo --codec float -q
"$xfer" unpack w-float.nubo -C w-out -q
cmp weights/layer.f32 w-out/weights/layer.f32 || fail "--codec float did not round-trip"
"$xfer" pack weights -o w-auto.nubo --codec auto --json > w-auto.json
grep -q '"float": [1-9]' w-auto.json || fail "auto did not take float for weights: $(cat w-auto.json)"
"$xfer" pack weights -o w-zstd.nubo -q
[ "$(stat -c %s w-float.nubo)" -lt "$(stat -c %s w-zstd.nubo)" ] || fail "float is no smaller than zstd"

# The first SIGTERM ends a command whose peer never answers (no second signal needed).
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(300)' > silent.port &
silent_pid=$!
for _ in $(seq 100); do [ -s silent.port ] && break; sleep 0.05; done
"$xfer" send src "127.0.0.1:$(cat silent.port)" --timeout 5m -q 2>/dev/null &
send_pid=$!
sleep 1
kill -TERM $send_pid
set +e; wait $send_pid; s=$?; set -e
kill $silent_pid
[ $s = 130 ] || fail "send after one SIGTERM exited $s"
echo "cli_test: ok"
