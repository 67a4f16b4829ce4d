"""nubo's GPU-hours for published training runs, against what their authors published.

Each run of validation_runs.csv (its model size, tokens, GPU type and count, and batch) becomes a
workload estimated on an instance of its GPU from the fixed test catalog (8 GPUs a node), with
nothing pinned: the efficiency is the one nubo calibrates for the GPU and model size. nubo's
GPU-hours are the run's time x its GPUs; the published figure is the run's GPU-hours, else its
days x 24 x its GPUs.

    validation.py RUNS.csv CATALOG.csv                 the table, as Markdown
    validation.py RUNS.csv CATALOG.csv --check LO HI   exit 1 when a ratio falls outside [LO, HI]
"""

from __future__ import annotations

import csv
import statistics
import sys

from nubo import cost

# The instance each GPU type is estimated on, from the fixed catalog: 8 GPUs a node.
INSTANCES = {"A100-SXM4-80GB": "p4de.24xlarge", "A100-SXM4-40GB": "p4d.24xlarge",
             "H100-SXM5-80GB": "p5.48xlarge", "H800": "p5.48xlarge"}
DEFAULT_GPUS = 1024


def runs(path: str) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def published_gpu_hours(run: dict[str, str], gpus: int) -> float:
    if run["published_gpu_hours"]:
        return float(run["published_gpu_hours"])
    return float(run["published_days"]) * 24 * gpus


def nubo_gpu_hours(catalog: cost.Catalog, run: dict[str, str], gpus: int) -> float:
    params = float(run["active_params"] or run["params"])
    seq = float(run["seq_len"] or 2048)
    batch_tokens = float(run["global_batch_tokens"] or 4e6)
    workload = cost.Workload(parameters=params, tokens=float(run["tokens"]),
                             sequence_length=seq, global_batch=max(1.0, batch_tokens / seq),
                             dtype="bf16")
    e = cost.estimate(catalog, workload, INSTANCES[run["gpu"]], nodes=max(1, gpus // 8))
    return e.gpu_hours


def main() -> int:
    runs_csv, catalog_csv = sys.argv[1], sys.argv[2]
    check = sys.argv[4:6] if len(sys.argv) == 6 and sys.argv[3] == "--check" else None
    catalog = cost.Catalog()
    catalog.load(catalog_csv, replace=True)
    rows, ratios, outside = [], [], []
    for run in runs(runs_csv):
        gpus = int(run["gpus"] or DEFAULT_GPUS)
        ours = nubo_gpu_hours(catalog, run, gpus)
        theirs = published_gpu_hours(run, gpus)
        ratio = ours / theirs
        ratios.append(ratio)
        rows.append((run, gpus, ours, theirs, ratio))
        if check and not float(check[0]) <= ratio <= float(check[1]):
            outside.append(f"{run['name']}: nubo {ours:,.0f} GPU-hours against {theirs:,.0f} "
                           f"published, ratio {ratio:.2f}")
    if check:
        for line in outside:
            print(line, file=sys.stderr)
        print(f"{len(rows) - len(outside)} of {len(rows)} runs within [{check[0]}, {check[1]}];"
              f" median ratio {statistics.median(ratios):.2f}")
        return 1 if outside else 0
    print("| run | GPU | GPUs | tokens | nubo GPU-h | published GPU-h | nubo / published | "
          "source | assumed |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for run, _gpus, ours, theirs, ratio in rows:
        given = run["gpus"] or f"{DEFAULT_GPUS} (assumed)"
        print(f"| {run['name']} | {run['gpu']} | {given} | {float(run['tokens']):.3g} | "
              f"{ours:,.0f} | {theirs:,.0f} | {ratio:.2f} | {run['source_url'].split(' ; ')[0]} | "
              f"{run['note']} |")
    inside = sum(1 for r in ratios if 0.67 <= r <= 1.5)
    print(f"\n{inside} of {len(ratios)} within 0.67-1.5; median ratio "
          f"{statistics.median(ratios):.2f} (goal: every run within 0.67-1.5, median 0.85-1.15).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
