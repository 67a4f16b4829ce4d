#!/usr/bin/env bash
# nubo-cost end to end: each command, its --json and --svg output, and the answers to bad flags.
# Usage: cli_test.sh NUBO_COST TESTS_DATA_DIR WORK_DIR
set -uo pipefail
bin=$1 data=$2 work=$3
mkdir -p "$work"
# A cache of our own, so a user's `catalog update` cannot change the answers, and no SkyPilot.
export NUBO_CATALOG_CACHE=$work/cache HOME=$work/home
rm -rf "$work/cache" "$work/home"
fixed=(--catalog "$data/fixed_instances.csv" --replace-catalog)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect RC NEEDLE -- ARGS...: runs nubo-cost ARGS, checks the exit status and that stdout+stderr
# contains NEEDLE.
expect() {
  local rc=$1 needle=$2
  shift 3
  local out status
  out=$("$bin" "$@" 2>&1)
  status=$?
  [ "$status" -eq "$rc" ] || fail "nubo-cost $* exited $status, expected $rc: $out"
  grep -qF -- "$needle" <<<"$out" || fail "nubo-cost $*: no '$needle' in: $out"
}

json_ok() { python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null; }

# catalog: the embedded snapshot, every row with its source and date
expect 0 "p4d.24xlarge" -- catalog
expect 0 "* derived" -- catalog --gpu A100
"$bin" catalog --gpu H100 | grep -q "p3.2xlarge" && fail "--gpu H100 still lists p3.2xlarge"
"$bin" catalog --provider azure --json | json_ok || fail "catalog --json is not JSON"
expect 0 '"source"' -- catalog --json
# H200 offers from several providers; GH200 is another GPU
out=$("$bin" catalog --gpu H200 2>&1)
for p in aws gcp lambda; do grep -qE "^$p .*H200-SXM-141GB" <<<"$out" || true; done
n=$(grep -cE "H200-SXM-141GB" <<<"$out")
[ "$n" -ge 10 ] || fail "catalog --gpu H200 lists $n offers: $out"
grep -q "GH200" <<<"$out" && fail "catalog --gpu H200 lists GH200: $out"
providers=$(grep -E "H200-SXM-141GB" <<<"$out" | awk '{print $1}' | sort -u | wc -l)
[ "$providers" -ge 4 ] || fail "H200 offers from only $providers providers"
expect 0 "Prices from" -- catalog --gpu H200
expect 1 "no offer matches --gpu Z9000; GPU models with offers there: A10" -- catalog --gpu Z9000
# the sources, their dates and what they skipped, with reasons
expect 0 "skypilot-aws" -- catalog --sources
expect 0 "skipped" -- catalog --sources
"$bin" catalog --sources --json | json_ok || fail "catalog --sources --json is not JSON"
# prices older than --max-age are named, with the command that refreshes them
expect 0 "past --max-age 1d" -- catalog --gpu H200 --max-age 1d
"$bin" catalog --gpu H200 --max-age 100w 2>&1 | grep -q "warning" && fail "--max-age 100w still warns"
expect 0 "past --max-age 1d" -- plan --params 7B --tokens 2e9 --max-age 1d

# plan by the model: the issue's 7B fine-tune answers from ten providers and more, never on a GPU
# that cannot hold it, with each spot option's interruption band
out=$("$bin" plan --params 7B --tokens 2e9 --deadline 48h --budget 2000 --spot --limit 0 2>&1)
grep -q "Best: " <<<"$out" || fail "plan --params 7B found nothing: $out"
grep -E "^[0-9]+ " <<<"$out" | grep -qE "A10G|T4|L4 |V100|RTX4090" &&
  fail "a 7B model planned on a GPU too small for plain data parallelism: $out"
n=$(grep -E "^[0-9]+ " <<<"$out" | awk '{print $2}' | sort -u | wc -l)
[ "$n" -ge 3 ] || fail "plan --params 7B ranks offers from $n providers: $out"
grep -q "interrupts" <<<"$out" || fail "no interruption column: $out"
grep -q "needs .* of GPU memory per GPU .*A10G has" <<<"$("$bin" plan --params 7B --tokens 2e9 --explain 2>&1)" ||
  fail "the A10G's exclusion does not say why"
expect 0 "fits with ZeRO-" -- plan --params 7B --tokens 2e9 --zero auto --gpu A10G
expect 2 "--zero" -- plan --params 7B --tokens 2e9 --zero 4
expect 2 "--params: '7Q' has an unknown unit" -- plan --params 7Q --tokens 2e9
expect 0 '"price_date"' -- plan --params 7B --tokens 2e9 --json

# serving: a single T4 is enough for a small model in f16; the rest say why not
expect 0 "tokens/s each" -- plan --inference --params 1B --rate 100 --latency 100ms --dtype f16 --gpu T4
expect 3 "no bf16 support" -- plan --inference --params 1B --rate 100 --gpu T4 --explain
expect 1 "--inference: give the model's size" -- plan --inference --rate 100
"$bin" plan --inference --params 7B --rate 2000 --json | json_ok || fail "plan --inference --json is not JSON"

# plan, analytic
expect 0 "Best: " -- plan --flops 3e18 --mfu 0.4 --deadline 24h --budget 500 --spot --nodes 1-4
"$bin" plan --flops 3e18 --deadline 24h --spot --nodes 1-4 --json | json_ok || fail "plan --json is not JSON"
expect 0 '"frontier"' -- plan --flops 3e18 --spot --json
expect 0 "reserved-1y*" -- plan --flops 3e18 --pricing reserved-1y --rank time
expect 0 "Chart: $work/plan.svg" -- plan --flops 3e20 --deadline 3d --pricing all --nodes 1-4 \
  --checkpoint-size 20G --svg "$work/plan.svg"
if command -v python3 >/dev/null; then
  python3 - "$work/plan.svg" <<'PY' || fail "plan.svg is not a well-formed SVG with the frontier and the best three"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
text = "".join(root.itertext())
assert "Pareto frontier" in text and "Best by cost" in text
PY
fi
[ -e "$work/plan.svg.tmp" ] && fail "the temporary SVG was left behind"

# plan, measured
expect 0 "profile $data/sample_profile.json" -- plan --profile "$data/sample_profile.json" --epochs 90
expect 2 "--flops excludes --profile" -- plan --profile "$data/sample_profile.json" --flops 1e18
# a small job reads as what it takes and costs, never "0 s" and "$0.00"
out=$("$bin" plan --profile "$data/sample_profile.json" --epochs 0.001 2>&1)
grep -q "0.001 epochs" <<<"$out" || fail "the epochs of a small plan are not shown as given: $out"
grep -E "^1 " <<<"$out" | grep -qE ' 0 s +\$0\.00 ' && fail "a small plan prints 0 s, \$0.00: $out"
# a profile measured on simulated GPUs predicts nothing about a GPU
sed 's/"backend": "cpu"/"backend": "sim"/' "$data/sample_profile.json" >"$work/sim_profile.json"
expect 1 "measured on simulated" -- plan --profile "$work/sim_profile.json" --epochs 1

# scale: a CPU profile's run with more workers on the same host
sed 's/"peak_tflops": 1.0}/"peak_tflops": 1.0, "host_threads": 2, "host_cpus": 2}/; s/"compute_s": 0.012,/"compute_s": 0.012, "gemm_s": 0.008,/' \
  "$data/sample_profile.json" >"$work/host_profile.json"
expect 0 "threads each" -- scale --profile "$work/host_profile.json" --workers 1 2
expect 0 '"samples_per_s"' -- scale --profile "$work/host_profile.json" --workers 2 --json
expect 1 "lacks devices.host_threads" -- scale --profile "$data/sample_profile.json"
sed 's/"backend": "cpu"/"backend": "sim"/' "$work/host_profile.json" >"$work/sim_host_profile.json"
expect 1 "measured on simulated GPUs" -- scale --profile "$work/sim_host_profile.json"
expect 2 "--workers" -- scale --profile "$work/host_profile.json" --workers 0

# an infeasible deadline is explained, with its own exit status
expect 3 "No option meets the request." -- plan --flops 3e18 --deadline 1m
expect 3 "past the 60 s deadline" -- plan --flops 3e18 --deadline 1m --explain

# bad flags and files
expect 2 "--deadline: '5x' has an unknown unit 'x'" -- plan --flops 3e18 --deadline 5x
expect 2 "--budget: 'lots' is not a finite number" -- plan --flops 3e18 --budget lots
expect 1 "--nodes: 4-1 counts down" -- plan --flops 3e18 --nodes 4-1
expect 1 "--nodes: expected N or MIN-MAX" -- plan --flops 3e18 --nodes 0
expect 1 "describe the workload" -- plan --deadline 24h
expect 1 "unknown pricing 'cheap'" -- plan --flops 3e18 --pricing cheap
expect 1 "unknown dtype 'int3'" -- plan --flops 3e18 --dtype int3
expect 1 "--tag: expected KEY=VALUE" -- plan --flops 3e18 --tag oops
expect 1 "--reserved-discount" -- plan --flops 3e18 --reserved-discount 2y=0.5
printf 'provider,instance,region,gpu_model,gpus,on_demand,spot\naws,x,r,T4,1,1.0,2.0\n' > "$work/bad.csv"
expect 1 "$work/bad.csv:2: spot" -- plan --flops 3e18 --catalog "$work/bad.csv"
printf 'provider,instance,region,gpu_model,gpus,on_demand\naws,x,r,T4,0,1.0\n' > "$work/zero.csv"
expect 1 "$work/zero.csv:2: gpus: an instance needs at least one GPU" -- catalog --catalog "$work/zero.csv"
printf 'provider,instance,region,gpu_model,gpus,on_demand\naws,mine.big,r,A100-SXM4-80GB,8,9.5\n' > "$work/mine.csv"
expect 0 "mine.big" -- catalog --catalog "$work/mine.csv" --replace-catalog
# A source whose every record is refused (here SkyPilot's local copy of a provider's catalog) is
# a warning on every command, not only a line in `catalog --sources`.
mkdir -p "$HOME/.sky/catalogs/v8/lambda"
printf 'InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,Region,SpotPrice\n' \
  > "$HOME/.sky/catalogs/v8/lambda/vms.csv"
for i in 1 2 3; do
  printf 'gpu_%s,A100,1,8,64,"{broken",1.0,us-east-1,\n' "$i" >> "$HOME/.sky/catalogs/v8/lambda/vms.csv"
done
expect 0 "warning: skypilot-lambda ($HOME/.sky/catalogs/v8/lambda/vms.csv) gave no offers: all 3 records refused" \
  -- plan --flops 3e18 --limit 1
expect 0 "gave no offers" -- catalog --provider aws
rm -r "$HOME/.sky"
expect 1 "nope" -- own --price 1000 --power-kw 1 --instance nope
expect 2 "--write-rate is required" -- checkpoint --size 20G
expect 2 "The following argument was not expected: --bogus" -- catalog --bogus

# checkpoint: 20 GB at 1 GB/s is 20 s; Young sqrt(2 x 20 x 21600) = 929.5 s = 15 min
expect 0 "Young (1974): checkpoint every 15 min" -- checkpoint --size 20G --write-rate 1G --mtbi 6h
expect 0 "overhead" -- checkpoint --size 20G --write-rate 1G --mtbi 6h --work 100h
"$bin" checkpoint --size 20G --write-rate 1G --json | json_ok || fail "checkpoint --json is not JSON"
expect 2 "--write-rate: '1Gbps' has an unknown unit" -- checkpoint --size 20G --write-rate 1Gbps

# own: 250000 / (26280 x (32.77 - 1.17)) = 30%
expect 0 "Break-even utilisation: 30%" -- own --price 250000 --power-kw 6.5 --years 3 "${fixed[@]}"
expect 0 '"break_even_utilisation"' -- own --price 250000 --power-kw 6.5 --json

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "nubo-cost CLI: all checks passed"
