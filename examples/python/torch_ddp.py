"""An ordinary PyTorch DistributedDataParallel script, whose gradients nubo reduces: the one line
that changes is register_comm_hook. Run it under any launcher:

    nubo-run -n 2 -- python3 examples/python/torch_ddp.py
    torchrun --nproc-per-node 2 examples/python/torch_ddp.py

--hook picks who reduces the gradients, to compare them on the same model and data:
  nubo       nubo.torch.allreduce_hook (the default)
  nubo-bf16  nubo.torch.bf16_compress_hook (nubo-fp16: fp16_compress_hook)
  ddp        DDP's own communication over its Gloo process group
  ddp-fp16   PyTorch's own fp16_compress_hook, over the Gloo group (ddp-bf16: its
             bf16_compress_hook, which PyTorch 1.13 runs only on CUDA with NCCL)
  local      no communication at all: each rank keeps its own gradients (a step's compute time,
             for measuring the share of a step spent communicating)

Each rank prints its last loss, a SHA-256 of its parameters (equal on every rank when they ended
bit-identical) and its samples per second.
"""

import argparse
import hashlib
import os
import time

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

import nubo.torch


def make_data(rank: int, world: int, rows: int, features: int) -> tuple[torch.Tensor, ...]:
    """A synthetic regression task, the same on every rank; each rank takes its own rows."""
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(rows * world, features, generator=g)
    w_true = torch.randn(features, 1, generator=g)
    y = torch.tanh(x @ w_true) + 0.05 * torch.randn(rows * world, 1, generator=g)
    return x[rank * rows:(rank + 1) * rows], y[rank * rows:(rank + 1) * rows]


def local_hook(_state: object, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    future: torch.futures.Future = torch.futures.Future()
    future.set_result(bucket.buffer())
    return future


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hook", default="nubo",
                        choices=["nubo", "nubo-bf16", "nubo-fp16", "ddp", "ddp-bf16", "ddp-fp16",
                                 "local"])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256, help="rows per rank per step")
    parser.add_argument("--width", type=int, default=256, help="hidden units per layer")
    parser.add_argument("--bucket-mb", type=float, default=25.0, help="DDP's bucket_cap_mb")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    features = 64
    model = torch.nn.Sequential(
        torch.nn.Linear(features, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, 1))
    model = DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb)
    hooks = {"nubo": nubo.torch.allreduce_hook, "nubo-bf16": nubo.torch.bf16_compress_hook,
             "nubo-fp16": nubo.torch.fp16_compress_hook,
             "ddp-bf16": default_hooks.bf16_compress_hook,
             "ddp-fp16": default_hooks.fp16_compress_hook, "local": local_hook}
    if args.hook in hooks:
        model.register_comm_hook(None, hooks[args.hook])  # the one line nubo adds
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    x, y = make_data(rank, world, args.batch * 4, features)
    loss = torch.zeros(())
    started = 0.0
    for step in range(args.steps):
        if step == 1:  # the first step builds DDP's buckets: time the rest
            started = time.perf_counter()
        rows = slice((step % 4) * args.batch, (step % 4 + 1) * args.batch)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x[rows]), y[rows])
        loss.backward()
        optimizer.step()
    elapsed = time.perf_counter() - started
    digest = hashlib.sha256()
    for p in model.parameters():
        digest.update(p.detach().numpy().tobytes())
    samples = args.batch * world * (args.steps - 1)
    print(f"rank {rank} of {world}: hook {args.hook}, loss {loss.item():.6f}, "
          f"params {digest.hexdigest()[:16]}, {samples / elapsed:.0f} samples/s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
