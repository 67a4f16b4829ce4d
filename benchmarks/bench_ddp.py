"""PyTorch DDP with nubo's communication hooks against DDP over its own Gloo process group, 2
processes on this machine under nubo-run, on the same model and data (examples/python/
torch_ddp.py); and nubo.init() with an all-reduce from the main thread against the same
all-reduce through Team.run. Runs are interleaved round by round and medians reported.

The share of a step spent communicating is 1 - (samples/s with the hook) / (samples/s with no
communication at all, the "local" hook): the time a step takes beyond its compute.

    benchmarks/bench_ddp.sh [BUILD_DIR]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "python", "torch_ddp.py")
HOOKS = ["ddp", "nubo", "ddp-fp16", "nubo-fp16", "nubo-bf16", "local"]
LABELS = {
    "ddp": "DDP, its own Gloo all-reduce",
    "nubo": "DDP + nubo.torch.allreduce_hook",
    "ddp-fp16": "DDP + PyTorch's fp16_compress_hook (Gloo)",
    "nubo-fp16": "DDP + nubo.torch.fp16_compress_hook",
    "nubo-bf16": "DDP + nubo.torch.bf16_compress_hook",
    "local": "no communication (compute only)",
}
# (hidden width, rows per rank per step): a small model, where a step is mostly communication
# and per-call overhead, and a larger one, where compute dominates.
MODELS = [(256, 256), (1024, 64)]
ALLREDUCE_FLOATS = 4 << 20  # 16 MiB
ALLREDUCE_CALLS = 20


HANGS = []  # runs that hung and were run again


def run(runner: str, args: list, attempts: int = 3) -> str:
    """The job's output. A job still running after 120 s is stopped (SIGTERM to nubo-run, which
    passes it on, then kills) and run again: PyTorch 1.13 can deadlock at interpreter exit
    when a Python comm hook ran on its Gloo threads (~ProcessGroupGloo joins a thread that waits
    for the GIL the exiting thread holds)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for _ in range(attempts):
        job = subprocess.Popen([runner, "--nproc", "2", "--grace", "2", "--", sys.executable,
                                *args], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = job.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            job.terminate()
            out, _ = job.communicate()
            HANGS.append(" ".join(os.path.basename(a) for a in args))
            continue
        if job.returncode != 0:
            raise SystemExit(f"bench_ddp: {args} failed:\n{out}")
        return out
    raise SystemExit(f"bench_ddp: {args} hung {attempts} times")


def ddp_rate(runner: str, hook: str, width: int, batch: int, steps: int) -> float:
    out = run(runner, [EXAMPLE, "--hook", hook, "--steps", str(steps), "--width", str(width),
                       "--batch", str(batch)])
    rates = [float(r) for r in re.findall(r"\] rank \d of 2: .* (\d+) samples/s", out)]
    return min(rates)  # the slower rank sets the pace


def child(mode: str) -> None:
    """One process of the init-vs-run comparison: seconds per all-reduce of 16 MiB."""
    import numpy as np
    import nubo

    grad = np.ones(ALLREDUCE_FLOATS, dtype=np.float32)
    result = []

    def loop(w: "nubo.Worker") -> None:
        w.all_reduce(grad, "avg")  # warm-up: first touch of the pages
        w.barrier()
        t0 = time.perf_counter()
        for _ in range(ALLREDUCE_CALLS):
            w.all_reduce(grad, "avg")
        if w.rank == 0:
            result.append((time.perf_counter() - t0) / ALLREDUCE_CALLS)

    if mode == "init":
        loop(nubo.init())
        nubo.shutdown()
    else:
        with nubo.Team.from_env() as team:
            team.run(loop)
    if result:
        print(f"seconds {result[0]:.6f}", flush=True)


def allreduce_seconds(runner: str, mode: str) -> float:
    out = run(runner, [os.path.abspath(__file__), "--child", mode])
    return float(re.search(r"seconds ([0-9.]+)", out).group(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", help="nubo-run")
    parser.add_argument("--out")
    parser.add_argument("--command", default="benchmarks/bench_ddp.sh")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--child", choices=["init", "run"])
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return

    import torch
    lines = [
        "# PyTorch DDP over nubo's communication hooks",
        "",
        f"Command: `{args.command}`",
        "",
        f"2 processes under nubo-run on this machine ({os.cpu_count()} CPUs, one thread each),"
        f" PyTorch {torch.__version__}, the model and data of examples/python/torch_ddp.py"
        f" (a 4-layer MLP), {args.steps} steps, the first not timed; median of {args.rounds}"
        " interleaved rounds. Samples/s are the slower rank's; the communication share is"
        " 1 - samples/s / (samples/s with no communication). PyTorch 1.13's own"
        " bf16_compress_hook runs only on CUDA with NCCL, so its CPU peer here is its"
        " fp16_compress_hook.",
        "",
    ]
    for width, batch in MODELS:
        params = 64 * width + width + 2 * (width * width + width) + width + 1
        rates = {h: [] for h in HOOKS}
        for _ in range(args.rounds):
            for hook in HOOKS:
                rates[hook].append(ddp_rate(args.runner, hook, width, batch, args.steps))
        median = {h: statistics.median(v) for h, v in rates.items()}
        lines += [
            f"## Hidden width {width}: {params:,} parameters ({params * 4 / 2**20:.1f} MiB of"
            f" float32 gradients a step), {batch} rows per rank per step",
            "",
            "| communication | samples/s | vs DDP's own | share of a step communicating |",
            "|---|---:|---:|---:|",
        ]
        for hook in HOOKS:
            share = 1 - median[hook] / median["local"]
            lines.append(f"| {LABELS[hook]} | {median[hook]:,.0f} |"
                         f" {median[hook] / median['ddp']:.2f}x |"
                         f" {'-' if hook == 'local' else f'{100 * share:.0f}%'} |")
        lines.append("")
        print("\n".join(lines[-len(HOOKS) - 5:]), flush=True)

    init, through_run = [], []
    for _ in range(args.rounds):
        init.append(allreduce_seconds(args.runner, "init"))
        through_run.append(allreduce_seconds(args.runner, "run"))
    a, b = statistics.median(init), statistics.median(through_run)
    lines += [
        "## nubo.init() from the main thread against Team.run",
        "",
        f"All-reduce (avg) of a {ALLREDUCE_FLOATS * 4 >> 20} MiB NumPy array between the 2"
        f" processes, {ALLREDUCE_CALLS} calls, median of {args.rounds} interleaved rounds.",
        "",
        "| how | ms per all-reduce | vs Team.run |",
        "|---|---:|---:|",
        f"| `w = nubo.init()`, then `w.all_reduce` on the main thread | {1e3 * a:.2f} |"
        f" {a / b:.2f}x |",
        f"| `Team.from_env().run(fn)`, fn on a worker thread | {1e3 * b:.2f} | 1.00x |",
        "",
    ]
    if HANGS:
        lines += [f"Runs stopped after 120 s and run again (PyTorch's exit deadlock, see"
                  f" bench_ddp.py): {'; '.join(HANGS)}.", ""]
    print("\n".join(lines[-8:]))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
