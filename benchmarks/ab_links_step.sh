#!/usr/bin/env bash
# Interleaved A/B of the all-reduce between 2 processes (shared memory, and nubo over Gloo):
# two builds of bench_allreduce and nubo-run, 5 rounds, old then new in each round; prints each
# run's table rows, tagged. Usage: benchmarks/ab_links_step.sh OLD_BUILD NEW_BUILD
set -u
old_build=$1 new_build=$2
for round in 1 2 3 4 5; do
  for who in old new; do
    if [ $who = old ]; then b=$old_build; else b=$new_build; fi
    MAX_BYTES=16777216 NUBO_SIM_DEVICES= timeout 300 "$b/bin/nubo-run" --nproc 2 -- \
      "$b/bin/bench_allreduce" processes --out "${TMPDIR:-/tmp}/ab-$who.md" >/dev/null 2>&1
    tail -8 "${TMPDIR:-/tmp}/ab-$who.md" | sed "s/^/$who $round /"
  done
done
