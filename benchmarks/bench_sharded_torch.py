"""PyTorch's peer of `bench_sharded step` on a GPU: the optimizer step of a flat parameter of the
same size, with torch.optim.AdamW (fused where this PyTorch has it); with 2 or more GPUs, DDP's
ZeroRedundancyOptimizer (stage 1) across them in one process group. Prints one JSON line per run,
or a line saying why it could not run (no PyTorch, no CUDA).

    python3 benchmarks/bench_sharded_torch.py PARAMS STEPS
"""

import json
import os
import statistics
import sys
import time


def timed_steps(step, steps: int, sync) -> float:
    times = []
    for i in range(steps + 2):
        sync()
        t0 = time.perf_counter()
        step()
        sync()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def single(params: int, steps: int) -> None:
    import torch
    p = torch.nn.Parameter(torch.full((params,), 0.01, device="cuda"))
    p.grad = torch.full_like(p, 0.001)
    try:
        opt = torch.optim.AdamW([p], lr=1e-3, fused=True)
        kind = "AdamW fused"
    except (TypeError, RuntimeError):
        opt = torch.optim.AdamW([p], lr=1e-3)
        kind = "AdamW"
    ms = timed_steps(opt.step, steps, torch.cuda.synchronize)
    print(json.dumps({"peer": f"torch {kind}", "gpus": 1, "params": params, "step_ms": ms}))


def zero_worker(rank: int, world: int, params: int, steps: int, port: int) -> None:
    import torch
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("nccl", rank=rank, world_size=world)
    torch.cuda.set_device(rank)
    p = torch.nn.Parameter(torch.full((params,), 0.01, device="cuda"))
    p.grad = torch.full_like(p, 0.001)

    def step() -> None:
        dist.all_reduce(p.grad)
        opt.step()
    opt = ZeroRedundancyOptimizer([p], optimizer_class=torch.optim.AdamW, lr=1e-3)
    ms = timed_steps(step, steps, torch.cuda.synchronize)
    if rank == 0:
        print(json.dumps({"peer": "torch DDP all-reduce + ZeroRedundancyOptimizer(AdamW)",
                          "gpus": world, "params": params, "step_ms": ms}), flush=True)
    dist.destroy_process_group()


def main() -> None:
    params, steps = int(sys.argv[1]), int(sys.argv[2])
    try:
        import torch
    except ImportError:
        print("torch peer: PyTorch is not installed")
        return
    if not torch.cuda.is_available():
        print("torch peer: this PyTorch has no CUDA")
        return
    single(params, steps)
    world = torch.cuda.device_count()
    if world >= 2:
        import torch.multiprocessing as mp
        mp.spawn(zero_worker, args=(world, params, steps, 29517), nprocs=world)


if __name__ == "__main__":
    main()
