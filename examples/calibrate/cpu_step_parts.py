"""What a CPU training step pays outside its matmuls, measured on this machine (no GPU, no model download).

A CPU has no caching allocator: a tensor PyTorch frees goes back to the C library, and a large one (above glibc's
mmap threshold, 32 MiB at most; above about 0.5 MiB on Windows) goes back to the operating system, so the next
step's tensor of that size is fresh pages that the kernel zero-fills on first touch. PyTorch's default AdamW on the
CPU loops over the parameters and builds two such temporaries per tensor (`exp_avg_sq.sqrt() / bias_correction`).
This times, on GPT-2 124M's parameter shapes:

- `adamwStepSeconds`: one step of `torch.optim.AdamW` as PyTorch runs it on the CPU (one tensor at a time);
- `inPlaceGBs`: an in-place element-wise op (`mul_`), bytes read and written per second;
- `freshGBs`: the same op writing a new tensor (`sqrt`), which allocates (and faults in) its output each time;

and prints one JSON object. rigfit prices the optimizer step as memory traffic at the profile's bandwidth; this shows
how far a machine's allocator moves it.

    python3 examples/calibrate/cpu_step_parts.py --threads 2
"""

from __future__ import annotations

import argparse
import json
import time

import torch


def gpt2_small_shapes(blocks: int) -> list[tuple[int, ...]]:
    """GPT-2 small's parameter tensors: embeddings, the blocks (norms, fused QKV, projections, MLP), final norm."""
    block = [(768,), (768,), (768, 2304), (2304,), (768, 768), (768,), (768,), (768,), (768, 3072), (3072,), (3072, 768), (768,)]
    return [(50257, 768), (1024, 768), *block * blocks, (768,), (768,)]


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--blocks", type=int, default=12, help="GPT-2 blocks (12: the 124M model)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    params = [torch.nn.Parameter(torch.randn(shape) * 0.02) for shape in gpt2_small_shapes(args.blocks)]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    count = sum(p.numel() for p in params)
    optimizer = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.1)
    for _ in range(2):  # the first steps create the moments
        optimizer.step()
    step = median_seconds(optimizer.step, args.repeats)

    x = torch.rand(count)
    in_place = median_seconds(lambda: x.mul_(1.0), args.repeats)
    fresh = median_seconds(lambda: torch.sqrt(x), args.repeats)
    bytes_moved = 2 * 4 * count  # one fp32 read and one write per element
    print(
        json.dumps(
            {
                "torch": torch.__version__,
                "threads": args.threads,
                "blocks": args.blocks,
                "parameters": count,
                "adamwStepSeconds": round(step, 4),
                "inPlaceGBs": round(bytes_moved / in_place / 1e9, 2),
                "freshGBs": round(bytes_moved / fresh / 1e9, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
