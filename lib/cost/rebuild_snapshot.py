#!/usr/bin/env python3
"""Rebuilds the embedded catalog snapshot (lib/cost/snapshot) from full public catalogs.

    nubo-cost catalog update                       # fetches every source into the cache
    lib/cost/rebuild_snapshot.py [CACHE_DIR]       # default: $XDG_CACHE_HOME/nubo/catalog

For each source of snapshot/sources.csv that has a snapshot file, it keeps the GPU offers of the
cached version, as published (lines are copied, never edited): the lines of a SkyPilot vms.csv
with an accelerator, and the GCP machine types that GPUs attach to; the Spot Advisor's entries
for the instance types those lines name. Each source's `fetched` becomes the cached version's.
"""

import csv
import io
import json
import os
import sys
from pathlib import Path

SNAPSHOT = Path(__file__).resolve().parent / "snapshot"
# GCP machine types a GPU line is priced with (lib/cost/sources/skypilot.cpp, gcp_host_for).
GCP_HOSTS = ("a2-", "a3-", "a4-", "g2-standard-", "n1-highmem-8", "n1-highmem-64")
NOT_GPUS = ("tpu", "inferentia", "trainium", "gaudi", "radeon", "mi", "qualcomm")


def read_cached(path: Path) -> tuple[dict, str]:
    # Bytes as published: CRLF line ends stay.
    meta, _, body = path.read_bytes().decode("utf-8").partition("\n")
    return json.loads(meta), body


def gpu_lines(body: str) -> str:
    lines = body.splitlines(keepends=True)
    header = next(csv.reader([lines[0]]))
    kept = [lines[0]]
    for line in lines[1:]:
        row = dict(zip(header, next(csv.reader([line]), [])))
        accelerator = (row.get("AcceleratorName") or "").lower()
        instance = row.get("InstanceType") or ""
        if accelerator and not accelerator.startswith(NOT_GPUS):
            kept.append(line)
        elif not accelerator and instance.startswith(GCP_HOSTS):
            kept.append(line)
    return "".join(kept)


def advisor_for(body: str, instance_types: set[str]) -> str:
    doc = json.loads(body)
    for region in doc.get("spot_advisor", {}).values():
        for os_name in list(region):
            region[os_name] = {k: v for k, v in region[os_name].items() if k in instance_types}
    doc["instance_types"] = {k: v for k, v in doc.get("instance_types", {}).items()
                             if k in instance_types}
    return json.dumps(doc, indent=1) + "\n"


def main() -> int:
    if len(sys.argv) > 1:
        cache = Path(sys.argv[1])
    elif os.environ.get("NUBO_CATALOG_CACHE"):
        cache = Path(os.environ["NUBO_CATALOG_CACHE"])
    else:
        home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        cache = Path(home) / "nubo" / "catalog"
    manifest = (SNAPSHOT / "sources.csv").read_text(encoding="utf-8")
    comments = "".join(line for line in manifest.splitlines(keepends=True) if line.startswith("#"))
    rows = list(csv.DictReader(line for line in manifest.splitlines() if not line.startswith("#")))
    aws_types: set[str] = set()
    for row in sorted(rows, key=lambda r: r["format"] != "skypilot"):
        cached = cache / f"{row['name']}.source"
        if not row["file"] or not cached.exists():
            continue
        meta, body = read_cached(cached)
        if row["format"] == "skypilot":
            body = gpu_lines(body)
            if row["provider"] == "aws":
                aws_types = {line.split(",", 1)[0] for line in body.splitlines()[1:]}
        elif row["format"] == "spot-advisor":
            body = advisor_for(body, aws_types)
        (SNAPSHOT / row["file"]).write_bytes(body.encode("utf-8"))
        row["fetched"] = meta["fetched"]
        print(f"{row['name']}: {len(body.splitlines())} lines, fetched {meta['fetched']}")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (SNAPSHOT / "sources.csv").write_text(comments + out.getvalue(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
