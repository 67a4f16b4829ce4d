"""The table of bench_float_codec.sh: each input packed by `zstd -3` (the peer, one thread, as
a user would run it on the file: -T0 uses every core), nubo's zstd, nubo's float codec and nubo's
auto, interleaved round by round; medians of the size ratio and the packing speed."""

import argparse
import os
import statistics
import subprocess
import time

LABELS = {
    "fp32": "PyTorch state dict, fp32 (MLP 784-2048-2048-10, 50 Adam steps)",
    "bf16": "the same, bf16",
    "fp16": "the same, fp16",
    "train": "nubo-train checkpoint (parameters, momentum, meta)",
}


def size_of(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)


def run(command: list) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--xfer", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--inputs", nargs="+", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    ways = {
        "zstd -3 -T0 (tar of the folder)": None,
        "nubo zstd (level 3)": "zstd",
        "nubo float (level 3)": "float",
        "nubo auto": "auto",
    }
    lines = [
        "# The float codec on model weights", "",
        f"Command: `{a.command}`", "",
        f"{os.cpu_count()} CPUs; each input packed by every way, interleaved, median of"
        f" {a.rounds} rounds. Ratio: stored / raw bytes (smaller is better). Speed: raw MB/s of"
        " the whole command (nubo: pack with every core; zstd: `tar c | zstd -3 -T0`).", "",
    ]
    for name in a.inputs:
        folder = os.path.join(a.work, f"in-{name}")
        raw = size_of(folder)
        ratio = {w: [] for w in ways}
        speed = {w: [] for w in ways}
        for _ in range(a.rounds):
            for way, codec in ways.items():
                out = os.path.join(a.work, "out")
                if codec is None:
                    seconds = run(["sh", "-c", f"tar -C '{folder}' -cf - . | zstd -3 -T0 -q -c >"
                                               f" '{out}'"])
                else:
                    seconds = run([a.xfer, "pack", folder, "-o", out, "--codec", codec, "-f",
                                   "-q"])
                ratio[way].append(os.path.getsize(out) / raw)
                speed[way].append(raw / seconds / 1e6)
                os.remove(out)
        lines += [f"## {LABELS.get(name, name)}: {raw / 2**20:.1f} MiB", "",
                  "| way | ratio | vs zstd -3 | MB/s |", "|---|---:|---:|---:|"]
        base = statistics.median(ratio["zstd -3 -T0 (tar of the folder)"])
        for way in ways:
            r = statistics.median(ratio[way])
            lines.append(f"| {way} | {r:.3f} | {r / base:.2f}x | {statistics.median(speed[way]):.0f} |")
        lines.append("")
        print("\n".join(lines[-8:]), flush=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
