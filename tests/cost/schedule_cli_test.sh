#!/usr/bin/env bash
# nubo-cost schedule end to end: a queue file over a catalog of round numbers, its table and
# JSON, --reserve, --emit (SkyPilot, Slurm and Kubernetes), --update, and bad input named by job
# and field.
# Usage: schedule_cli_test.sh NUBO_COST
set -euo pipefail
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export HOME=$work/home NUBO_CATALOG_CACHE=$work/cache
fail() { echo "schedule_cli_test: $*" >&2; exit 1; }
# expect STATUS NEEDLE ARGS...: nubo-cost ARGS exits with STATUS and says NEEDLE.
expect() {
  local want=$1 needle=$2 status
  shift 2
  set +e
  "$bin" "$@" >out 2>&1
  status=$?
  set -e
  [ "$status" = "$want" ] || fail "nubo-cost $* exited $status, not $want: $(cat out)"
  grep -qF -- "$needle" out || fail "nubo-cost $*: no '$needle' in: $(cat out)"
}
field() { python3 -c "import json, sys; d = json.load(open('$1')); print($2)"; }

cat >box.csv <<'CSV'
provider,instance,region,gpu_model,gpus,interconnect,vcpus,memory_gib,network_gbps,on_demand,spot
aws,box,r1,A100-SXM4-80GB,8,nvswitch,96,1152,400,10,1
CSV
catalog=(--catalog box.csv --replace-catalog)
# One box does 998.4 TFLOP/s: 3.594e18 FLOPs an hour.
cat >queue.json <<'JSON'
{
  "horizon": "2d",
  "reservations": [{"instance": "box", "region": "r1", "count": 1, "hourly": 6, "until": "5h"}],
  "jobs": [
    {"name": "a", "workload": {"flops": 1.4377e19}, "deadline": "5h", "tag": "prod",
     "command": "python a.py", "nubo": true},
    {"name": "b", "workload": {"flops": 1.0783e19}, "deadline": "5h", "tag": "research",
     "command": "python b.py"},
    {"name": "c", "workload": {"flops": 3.594e18, "checkpoint_size": "1G"}, "release": "6h",
     "deadline": "30h", "interruptible": true, "command": "python c.py"}
  ]
}
JSON
expect 0 "exact, optimal" schedule queue.json "${catalog[@]}" --slot 1h
grep -q "taken by a" out || fail "b's reason: $(cat out)"
grep -q "Fleet" out && grep -q "box r1 reserved" out || fail "no fleet: $(cat out)"

"$bin" schedule queue.json "${catalog[@]}" --slot 1h --json >s.json
[ "$(field s.json "d['jobs'][0]['placement']")" = reserved ] || fail "a: $(cat s.json)"
[ "$(field s.json "d['jobs'][1]['placement']")" = on-demand ] || fail "b: $(cat s.json)"
[ "$(field s.json "round(d['costs']['on_demand'])")" = 30 ] || fail "costs: $(cat s.json)"
[ "$(field s.json "d['optimal']")" = True ] || fail "not optimal: $(cat s.json)"

# What if: a second box for the two days costs $288 and takes b ($30) and c: it costs more.
expect 0 "What if +1 box" schedule queue.json "${catalog[@]}" --slot 1h --reserve box@r1=1:1y
grep -q "costing" out || fail "the what-if: $(cat out)"
"$bin" schedule queue.json "${catalog[@]}" --slot 1h --reserve box@r1=1:1y --json >w.json
[ "$(field w.json "d['what_if'][0]['region']")" = r1 ] &&
  [ "$(field w.json "d['what_if'][0]['saving'] < 0")" = True ] || fail "what-if JSON: $(cat w.json)"

# Job files.
expect 0 "wrote 5 files" schedule queue.json "${catalog[@]}" --slot 1h --emit slurm jobs
for f in a b c; do
  grep -q "^#SBATCH --job-name=$f$" "jobs/$f.sbatch" && grep -q "^#SBATCH --time=" "jobs/$f.sbatch" &&
    grep -q "^#SBATCH --gpus-per-node=a100:8$" "jobs/$f.sbatch" || fail "$f.sbatch: $(cat jobs/$f.sbatch)"
done
grep -q "nubo-run --nnodes" jobs/a.sbatch || fail "a uses nubo: $(cat jobs/a.sbatch)"
grep -q "^srun bash -c 'python b.py'$" jobs/b.sbatch || fail "b: $(cat jobs/b.sbatch)"
grep -q "| 1 | a |" jobs/README.md || fail "the order: $(cat jobs/README.md)"
grep -q "^sbatch 'a.sbatch'$" jobs/submit.sh && [ -x jobs/submit.sh ] || fail "submit.sh: $(cat jobs/submit.sh)"
expect 0 "wrote 5 files" schedule queue.json "${catalog[@]}" --slot 1h --emit skypilot sky
grep -q "use_spot: true" sky/c.yaml && grep -q "job_recovery" sky/c.yaml || fail "c: $(cat sky/c.yaml)"

# Bad grids and files, refused before any count becomes an int or a read hangs.
expect 1 "1 min to 8766 h" schedule queue.json "${catalog[@]}" --slot 0.0001s
expect 1 "1 min to 8766 h" schedule queue.json "${catalog[@]}" --slot 1e-12h
expect 1 "not a regular file" schedule queue.json "${catalog[@]}" --update /dev/zero

# Re-planned at 1 h: a finished, b failed and starts again now (it still makes its 5 h).
cat >update.json <<'JSON'
{"now": "1h", "jobs": [{"name": "a", "state": "finished", "runtime": "1h"},
                       {"name": "b", "state": "failed", "runtime": "1h"}]}
JSON
"$bin" schedule queue.json "${catalog[@]}" --slot 1h --update update.json --json >u.json
[ "$(field u.json "len(d['jobs'])")" = 2 ] || fail "the update: $(cat u.json)"
[ "$(field u.json "d['jobs'][0]['start_h'] >= 1")" = True ] &&
  [ "$(field u.json "d['unplaced']")" = 0 ] || fail "b restarts now: $(cat u.json)"

# Nothing finishes in time: exit 3, the job named with the reason.
cat >late.json <<'JSON'
{"jobs": [{"name": "late", "workload": {"flops": 1e20}, "deadline": "1h"}]}
JSON
expect 3 "nothing finishes by its deadline" schedule late.json "${catalog[@]}"

# Bad input, each named.
bad() { printf '%s' "$2" >bad.json; expect 1 "$1" schedule bad.json "${catalog[@]}"; }
bad "job 'x': deadline" '{"jobs": [{"name": "x", "workload": {"flops": 1e18}, "release": 9, "deadline": 3}]}'
bad "reservations[0] (box): count" '{"jobs": [{"name": "x", "workload": {"flops": 1e18}}], "reservations": [{"instance": "box", "count": -2}]}'
bad "reservations[0] (p9z.huge)" '{"jobs": [{"name": "x", "workload": {"flops": 1e18}}], "reservations": [{"instance": "p9z.huge"}]}'
bad "not valid JSON" '{"jobs": [{"name": "x", "workload": {"flops": NaN}}]}'
bad "job 'x': deadline" '{"jobs": [{"name": "x", "workload": {"flops": 1e18}, "deadline": 1e308}]}'
expect 1 "1y or 3y" schedule queue.json "${catalog[@]}" --reserve box=1:5y
expect 1 "skypilot, slurm or kubernetes" schedule queue.json "${catalog[@]}" --emit nomad jobs-nomad
# Kubernetes needs each job's container image, and says which job lacks one.
expect 1 "job 'a': give its container image" schedule queue.json "${catalog[@]}" --slot 1h --emit kubernetes k8s
sed 's/"command": "python \([abc]\).py"/"command": "python \1.py", "image": "nvcr.io\/nvidia\/pytorch:24.10-py3"/' \
  queue.json >queue-k8s.json
expect 0 "wrote 5 files" schedule queue-k8s.json "${catalog[@]}" --slot 1h --emit kubernetes k8s
grep -q '^kind: "Job"$' k8s/a.yaml && grep -q 'nvidia.com/gpu: 8' k8s/a.yaml &&
  grep -q 'node.kubernetes.io/instance-type: "box"' k8s/a.yaml || fail "a.yaml: $(cat k8s/a.yaml)"
grep -q "kubectl apply -f 'c.yaml'" k8s/apply.sh || fail "apply.sh: $(cat k8s/apply.sh)"
echo "schedule_cli_test: ok"
