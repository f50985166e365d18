#!/usr/bin/env python3
"""Time a vocabulary head's three GEMMs (forward, input gradient, weight gradient) at a vocabulary size and at the
same size padded to a multiple of 64, and print their rates as JSON: what an unaligned vocabulary costs.

    python examples/calibrate/gemm_alignment.py --tokens 8192 --hidden 768 --vocab 50257 --dtype bf16
"""

from __future__ import annotations

import argparse
import json

import torch


def head_seconds(tokens: int, hidden: int, vocab: int, dtype: torch.dtype, repeats: int) -> float:
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype)
    w = torch.randn(vocab, hidden, device="cuda", dtype=dtype)
    g = torch.randn(tokens, vocab, device="cuda", dtype=dtype)

    def gemms():
        torch.matmul(x, w.t())  # logits
        torch.matmul(g, w)  # gradient of the head's input
        torch.matmul(g.t(), x)  # gradient of the head's weight

    for _ in range(3):
        gemms()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        gemms()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1000 / repeats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    padded = -(-args.vocab // 64) * 64
    flops = lambda vocab: 3 * 2 * args.tokens * args.hidden * vocab  # noqa: E731
    rates = {}
    for vocab in (args.vocab, padded):
        seconds = head_seconds(args.tokens, args.hidden, vocab, dtype, args.repeats)
        rates[vocab] = flops(vocab) / seconds / 1e12
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "dtype": args.dtype,
                      "tokens": args.tokens, "hidden": args.hidden, "vocab": args.vocab, "padded": padded,
                      "tflops": round(rates[args.vocab], 1), "paddedTflops": round(rates[padded], 1),
                      "share": round(rates[args.vocab] / rates[padded], 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
