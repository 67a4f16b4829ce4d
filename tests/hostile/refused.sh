# Sourced by the hostile-input shell tests: `refused WANT COMMAND...` runs COMMAND, which must exit
# with status 2 (bad usage) and say WANT on stderr (kept in ./err); the caller's `fail` reports.
# `exits STATUS WANT COMMAND...` is the same for another status.
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
