# Sourced by the shell tests of object storage and of hostile input: `exits STATUS WANT
# COMMAND...` runs COMMAND, which must exit with STATUS and say WANT on stderr (kept in ./err);
# `refused WANT COMMAND...` is the same for status 2 (bad usage). The caller's `fail` reports.
exits() {
  local expected=$1 want=$2 status
  shift 2
  set +e
  "$@" >/dev/null 2>err
  status=$?
  set -e
  [ "$status" = "$expected" ] || fail "$* exited with $status, not $expected: $(cat err)"
  grep -q -- "$want" err || fail "$*: the error does not say '$want': $(cat err)"
}
refused() { exits 2 "$@"; }
