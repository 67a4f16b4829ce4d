# Sourced by the S3 shell tests: `refused WANT COMMAND...` runs COMMAND, which must exit with
# status 2 (bad usage) and say WANT on stderr (kept in ./err); the caller's `fail` reports.
refused() {
  local want=$1 status
  shift
  set +e
  "$@" >/dev/null 2>err
  status=$?
  set -e
  [ "$status" = 2 ] || fail "$* exited with $status, not 2: $(cat err)"
  grep -q -- "$want" err || fail "$*: the error does not say '$want': $(cat err)"
}
