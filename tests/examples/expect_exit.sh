#!/usr/bin/env bash
# expect_exit.sh <status> <regex or ""> <command> [args...]
# Runs the command; passes when it exits with <status> and (if given) its output matches.
set -u
want=$1 pattern=$2
shift 2
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
if [ "$got" -ne "$want" ]; then
  echo "expect_exit: '$*' exited with $got, expected $want" >&2
  exit 1
fi
if [ -n "$pattern" ] && ! grep -Ezq -- "$pattern" <<<"$out"; then
  echo "expect_exit: output of '$*' does not match: $pattern" >&2
  exit 1
fi
exit 0
