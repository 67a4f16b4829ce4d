#!/usr/bin/env bash
# Importing the public catalogs at their real sizes: a cache of every SkyPilot vms.csv source
# grown to the size of the published file (AWS ~6 MB, GCP ~2.5 MB, the GPU clouds ~0.1-1 MB,
# with the CPU-only lines a real file has), read by `nubo-cost catalog --sources` (import,
# check every row, collapse zones, build the planner's index), against pandas.read_csv of the
# same files (what SkyPilot's own catalog code runs) in the same run. Interleaved; medians of
# RUNS; peak resident memory of each. Targets: under 1 s and under 200 MB.
# Writes benchmarks/results/catalog_import.md.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$here/results/catalog_import.md"
cost="$build/bin/nubo-cost"
[ -x "$cost" ] || { echo "bench_catalog_import: $cost is missing: build first" >&2; exit 1; }
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

venv="$build/bench-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >/dev/null 2>&1 || true
if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c "import pandas" 2>/dev/null; then
  "$venv/bin/pip" install -q pandas >/dev/null 2>&1 || true
fi
pandas=python3
[ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import pandas" 2>/dev/null && pandas="$venv/bin/python"

python3 - "$root/lib/cost/snapshot" "$work/cache" "$work/csv" <<'PY'
import csv, json, os, sys
snapshot, cache, flat = sys.argv[1:]
os.makedirs(cache); os.makedirs(flat)
# Published sizes (bytes) of catalogs/v8/<cloud>/vms.csv, rounded; others ~100 KB.
target = {"aws": 6_000_000, "gcp": 2_500_000, "azure": 1_500_000, "runpod": 1_000_000,
          "oci": 450_000, "shadeform": 300_000, "lambda": 70_000}
rows = [r for r in csv.DictReader(l for l in open(f"{snapshot}/sources.csv") if not l.startswith("#"))]
total = 0
for r in rows:
    if r["format"] != "skypilot" or not r["file"]:
        continue
    lines = open(f"{snapshot}/{r['file']}", newline="").read().splitlines()
    header, body = lines[0], lines[1:]
    want = target.get(r["provider"], 100_000)
    out, size, copy = [header], len(header), 0
    cols = next(csv.reader([header]))
    while size < want:
        for line in body:
            # Copies in further regions, so every key stays unique, and one CPU-only line for
            # each GPU line, as the real files have.
            fields = next(csv.reader([line]))
            row = dict(zip(cols, fields))
            row["Region"] = f"{row['Region']}-{copy}" if copy else row["Region"]
            if "AvailabilityZone" in row and row["AvailabilityZone"]:
                row["AvailabilityZone"] = f"{row['AvailabilityZone']}-{copy}" if copy else row["AvailabilityZone"]
            for variant in (row, {**row, "InstanceType": f"cpu-{copy}-{row['InstanceType']}",
                                  "AcceleratorName": "", "AcceleratorCount": "", "GpuInfo": ""}):
                buf = []
                w = csv.writer(_ := type("W", (), {"write": lambda self, s: buf.append(s)})(),
                               lineterminator="")
                w.writerow([variant.get(c, "") for c in cols])
                text = "".join(buf)
                out.append(text)
                size += len(text) + 1
        copy += 1
    body_text = "\n".join(out) + "\n"
    total += len(body_text)
    meta = {"url": r["url"], "fetched": "2099-01-01T00:00:00Z", "etag": "", "format": "skypilot",
            "provider": r["provider"]}
    open(f"{cache}/{r['name']}.source", "w").write(json.dumps(meta) + "\n" + body_text)
    open(f"{flat}/{r['name']}.csv", "w").write(body_text)
print(f"{total / 1e6:.1f} MB in {len(os.listdir(flat))} files", file=sys.stderr)
PY

# Seconds and peak resident MB of one command.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t0 = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
t = time.monotonic() - t0
print(f"{t:.4f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.1f}")
PY
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

read_pandas='import glob, sys, pandas; [pandas.read_csv(f) for f in glob.glob(sys.argv[1] + "/*.csv")]'
: >"$work/nubo" ; : >"$work/pandas"; : >"$work/embedded"
for ((i = 0; i < runs; i++)); do
  NUBO_CATALOG_CACHE=$work/cache HOME=$work measure "$cost" catalog --sources >>"$work/nubo"
  NUBO_CATALOG_CACHE=$work/none HOME=$work measure "$cost" catalog --sources >>"$work/embedded"
  measure "$pandas" -c "$read_pandas" "$work/csv" >>"$work/pandas"
done
size=$(du -sb "$work/csv" | cut -f1)
rows=$(NUBO_CATALOG_CACHE=$work/cache HOME=$work "$cost" catalog --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["instances"]))')
row() {
  local t m
  t=$(cut -d' ' -f1 "$2" | median); m=$(cut -d' ' -f2 "$2" | median)
  printf '| %s | %.3f s | %.0f MB |\n' "$1" "$t" "$m"
}
{
  echo "# Catalog import at the public catalogs' sizes"
  echo
  echo "Command: \`benchmarks/bench_catalog_import.sh $build\` (RUNS=$runs), $(date -u +%Y-%m-%d)"
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
    "(shared with other builds while it ran)"
  echo
  echo "$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1e6 }') MB of SkyPilot vms.csv files" \
    "(every source of the snapshot grown to its published size, CPU-only lines included);" \
    "$rows instance rows after zones collapse into regions."
  echo
  echo "| reader | median wall | median peak RSS |"
  echo "|---|---|---|"
  row "nubo-cost catalog --sources: every file imported, checked, indexed" "$work/nubo"
  row "nubo-cost catalog --sources, embedded snapshot only (no cache)" "$work/embedded"
  row "pandas.read_csv of the same files (parsing only)" "$work/pandas"
  echo
  echo "Targets: under 1 s and under 200 MB for the whole set. The nubo figures include"
  echo "process start, the embedded snapshot, the GPU table and the checks of every row;"
  echo "pandas only parses. $( [ "$pandas" = python3 ] && echo 'pandas was not installable here: its row is python3 failing to import it.')"
} | tee "$out"
