#!/usr/bin/env python3
"""Where a Transformers training step's time goes: the host issuing ops, the GPU running them, the Trainer around them.

For each configuration of `hf_grid.py`'s grid named on the command line, it trains the same random-init model in
a plain PyTorch loop (forward with labels, backward, the Trainer's default optimizer, zero_grad), times steps with
the GPU synchronised after each, then records one step under torch.profiler and prints one JSON line:

  * stepSeconds: a plain-loop step, synchronised;
  * hostSeconds: the time the host took to issue that step's ops, up to the synchronisation;
  * kernelSeconds: the sum of the step's GPU kernel times, and kernels: how many it launched;
  * topKernels: the five kernels (by name) that took longest, with their share of kernelSeconds.

Set beside the Trainer's figure for the same configuration (`hf_stack.py --grid`), it splits a step into the
model's own host cost, the GPU's work and the Trainer's overhead:

    python examples/calibrate/hf_step_profile.py gpt2-s1024-b8 llama1b-s2048-b4 mixtral-small-s2048-b4
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from hf_grid import grid
from hf_stack import build_model

WARMUP, TIMED = 3, 10


def build(model_spec: dict, settings: dict):
    model = build_model(settings, model_spec, "cuda")
    if settings["gradCheckpointing"]:
        model.gradient_checkpointing_enable()
    model.train()
    return model


def step_function(model, settings: dict, vocab: int):
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-4, fused=True)
    ids = torch.randint(0, vocab, (settings["microBatch"], settings["seq"]), device="cuda")
    half = {"bf16-mixed": torch.bfloat16, "fp16-mixed": torch.float16}.get(settings["precision"])

    def step():
        for _ in range(settings["gradAccum"]):
            with torch.autocast("cuda", dtype=half, enabled=half is not None):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def measure(name: str, model_spec: dict, settings: dict) -> dict:
    model = build(model_spec, settings)
    step = step_function(model, settings, model_spec["vocab"])
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(TIMED):
        step()
        torch.cuda.synchronize()
    step_seconds = (time.perf_counter() - started) / TIMED
    # The host's share: how long issuing one step takes before the GPU is waited for (all of it when the host,
    # or a synchronisation inside the model, sets the pace).
    issued = time.perf_counter()
    step()
    host_seconds = time.perf_counter() - issued
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    by_name: dict[str, float] = defaultdict(float)
    kernels = 0
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            kernels += 1
            by_name[event.name] += getattr(event, "device_time_total", 0) * 1e-6
    kernel_seconds = sum(by_name.values())
    top = sorted(by_name.items(), key=lambda item: -item[1])[:5]
    return {"name": name, "stepSeconds": round(step_seconds, 5), "hostSeconds": round(host_seconds, 5),
            "kernelSeconds": round(kernel_seconds, 5), "kernels": kernels,
            "topKernels": [[kernel[:80], round(seconds / kernel_seconds, 3)] for kernel, seconds in top]}


def main() -> int:
    configs = {name: (model, settings) for name, model, settings in grid()}
    unknown = [name for name in sys.argv[1:] if name not in configs]
    if unknown or len(sys.argv) < 2:
        raise SystemExit(f"name configurations of hf_grid.py's grid: {', '.join(configs)}")
    for name in sys.argv[1:]:
        print(json.dumps(measure(name, *configs[name])), flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
