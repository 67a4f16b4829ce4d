"""A PyTorch model trained with nubo's sharded optimizer: its parameters and gradients live in one
flat tensor each (views, no copies), and nubo.ShardedOptimizer keeps only this process's shard of
the fp32 master weights and Adam's state (ZeRO stage 1), reduces the gradients and gathers the
updated parameters back into the model. Run it under any launcher:

    nubo-run -n 2 -- python3 examples/python/sharded_torch.py [--precision bf16] [--stage 2]

Each rank prints its last loss, what its optimizer keeps, and a SHA-256 of the parameters (the
same on every rank).
"""

import argparse
import hashlib

import torch

import nubo


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default="bf16", choices=["f32", "bf16"])
    parser.add_argument("--stage", type=int, default=1, choices=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32

    w = nubo.init()                                   # this process's worker, from any launcher
    torch.manual_seed(0)                              # every rank builds the same model
    model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 1)).to(dtype)
    params = list(model.parameters())
    sizes = [p.numel() for p in params]
    options = dict(optimizer="adamw", lr=3e-3, stage=args.stage, precision=args.precision)

    # One flat tensor each for the parameters and the gradients, in the optimizer's layout; the
    # model's parameters and gradients become views into them.
    padded = nubo.ShardedOptimizer.padded_size(w.size, sizes, **options)
    flat = torch.zeros(padded, dtype=dtype)
    grads = torch.zeros(padded, dtype=dtype)
    # Where each slice lives: the layout of an optimizer over the (still empty) flat tensor.
    with nubo.ShardedOptimizer(w, flat, slices=sizes, **options) as probe:
        layout = probe.slices
    for p, s in zip(params, layout):
        flat[s.offset:s.offset + s.size].copy_(p.data.reshape(-1))
        p.data = flat[s.offset:s.offset + s.size].view_as(p)
        p.grad = grads[s.offset:s.offset + s.size].view_as(p)
    # Rank 0's values are broadcast.
    opt = nubo.ShardedOptimizer(w, flat, slices=sizes, **options)

    g = torch.Generator().manual_seed(1 + w.rank)     # each rank its own rows of the data
    x = torch.randn(4096, 32, generator=g)
    y = torch.sin(x.sum(dim=1, keepdim=True))
    for step in range(args.steps):
        rows = slice((step * 64) % 4096, (step * 64) % 4096 + 64)
        grads.zero_()
        loss = torch.nn.functional.mse_loss(model(x[rows].to(dtype)).float(), y[rows])
        (loss * opt.loss_scale).backward()            # into the flat gradient tensor
        opt.step(grads)                               # reduce, update this rank's shard, gather
    digest = hashlib.sha256(flat.float().numpy().tobytes()).hexdigest()[:16]
    mem = nubo.sharded_memory(sum(sizes), args.stage, "adamw", args.precision, w.size)
    print(f"rank {w.rank} of {w.size}: ZeRO {args.stage}, {args.precision}, last loss "
          f"{loss.item():.4f}, optimizer state {mem.optimizer / 1e3:.0f} kB a worker, "
          f"parameters {digest}", flush=True)
    opt.close()
    nubo.shutdown()


if __name__ == "__main__":
    main()
