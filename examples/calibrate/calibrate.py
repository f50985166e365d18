#!/usr/bin/env python3
"""Measure training memory and speed on this GPU and write rows for rigfit's validation dataset.

Every configuration trains a randomly initialised decoder built from a Hugging Face style config (GPT-2 or
Llama layout; nothing is downloaded) for a few optimizer steps in a fresh child process, then records

  * torch.cuda.max_memory_allocated()  -> metric "max_memory_allocated"
  * torch.cuda.max_memory_reserved()   -> metric "max_memory_reserved"
  * the process's memory in nvidia-smi -> metric "nvidia-smi"  (reserved + CUDA context)
  * tokens per second after warm-up    -> metric "tokens_per_second"

as JSON lines in the format of packages/core/validation/*.jsonl (see the ValidationRow schema). PyTorch only.

    python examples/calibrate/calibrate.py --out calibrate-h100.jsonl            # the default grid
    python examples/calibrate/calibrate.py --grid quick --out quick.jsonl        # a few minutes
    python examples/calibrate/calibrate.py --list                                # show the grid
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict

import torch

from decoder import Config, Decoder, add_lora, make_optimizer

# Spec-sheet numbers (dense FP16/BF16 tensor TFLOPS with FP32 accumulate, FP32 TFLOPS, memory GB/s, bf16, tf32)
# for the GPUs rows are usually measured on; the same figures as rigfit's GPU catalogs. Other GPUs: pass
# --fp16-tflops, --fp32-tflops and --bandwidth-gbs.
GPU_SPECS = {
    "H200": (989, 67, 4800, True, True),
    "H100 80GB HBM3": (989, 67, 3350, True, True),
    "H100 PCIe": (756, 51, 2000, True, True),
    "A100-SXM4-80GB": (312, 19.5, 2039, True, True),
    "A100-SXM4-40GB": (312, 19.5, 1555, True, True),
    "A100 80GB PCIe": (312, 19.5, 1935, True, True),
    "A100-PCIE-40GB": (312, 19.5, 1555, True, True),
    "L40S": (362, 91.6, 864, True, True),
    "L4": (121, 30.3, 300, True, True),
    "A10G": (70, 35, 600, True, True),
    "A10": (125, 31.2, 600, True, True),
    "RTX 6000 Ada": (364.2, 91.1, 960, True, True),
    "RTX A6000": (154.8, 38.7, 768, True, True),
    "RTX 4090": (165.2, 82.6, 1008, True, True),
    "RTX 3090": (71.0, 35.6, 936.2, True, True),
    "Tesla T4": (65, 8.1, 320, False, False),
    "V100": (125, 15.7, 900, False, False),
}


def process_memory_mib() -> int | None:
    """This process's memory as nvidia-smi lists it, or None without nvidia-smi."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        pid, _, used = line.partition(",")
        if pid.strip() == str(os.getpid()):
            return int(used.strip())
    return None


def measure(cfg: Config, warmup: int, steps: int) -> dict:
    """Trains `cfg` on this process's GPU; returns the four measurements."""
    device = torch.device("cuda")
    torch.manual_seed(0)
    dtype = {"bf16-true": torch.bfloat16, "fp16-true": torch.float16}.get(cfg.precision, torch.float32)
    model = Decoder(cfg).to(device=device, dtype=dtype)
    if cfg.lora_rank:
        add_lora(model, cfg.lora_rank, cfg.lora_targets)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer(cfg, params)
    autocast_dtype = {"bf16-mixed": torch.bfloat16, "fp16-mixed": torch.float16}.get(cfg.precision)
    scaler = torch.amp.GradScaler("cuda") if cfg.precision == "fp16-mixed" else None
    ids = torch.randint(0, cfg.vocab, (cfg.microBatch, cfg.seq), device=device)
    targets = torch.randint(0, cfg.vocab, (cfg.microBatch, cfg.seq), device=device)

    def step():
        for _ in range(cfg.gradAccum):
            ctx = torch.autocast("cuda", dtype=autocast_dtype) if autocast_dtype else contextlib.nullcontext()
            with ctx:
                loss = model(ids, targets) / cfg.gradAccum
            (scaler.scale(loss) if scaler else loss).backward()
        if scaler:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    return {
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "nvidia-smi": process_memory_mib(),
        "tokens_per_second": steps * cfg.gradAccum * cfg.microBatch * cfg.seq / elapsed,
    }


# ---------------------------------------------------------------------------------------------------------------
# The grid and the rows.


def grid(name: str) -> list[Config]:
    gpt2_small = dict(family="gpt2", hidden=768, layers=12, heads=12, kv_heads=12, vocab=50257)
    llama_350m = dict(family="llama", hidden=1024, layers=24, heads=16, kv_heads=4, vocab=32000)
    llama_1b = dict(family="llama", hidden=2048, layers=16, heads=32, kv_heads=8, vocab=32000)
    quick = [
        Config(**gpt2_small, seq=1024, microBatch=4),
        Config(**gpt2_small, seq=1024, microBatch=4, attention="eager"),
        Config(**llama_350m, seq=2048, microBatch=2, gradCheckpointing=True),
        Config(**llama_350m, seq=2048, microBatch=2, precision="bf16-true", lora_rank=16),
    ]
    if name == "quick":
        return quick
    full = list(quick)
    for base in (gpt2_small, llama_350m, llama_1b):
        for precision in ("fp32", "bf16-mixed", "bf16-true"):
            for ckpt in (False, True):
                full.append(Config(**base, seq=1024, microBatch=4, precision=precision, gradCheckpointing=ckpt))
        full.append(Config(**base, seq=2048, microBatch=1, gradAccum=4))
        full.append(Config(**base, seq=512, microBatch=8, optimizer="sgd-momentum"))
        full.append(Config(**base, seq=1024, microBatch=4, optimizerImpl="fused"))
        full.append(Config(**base, seq=1024, microBatch=2, precision="bf16-true", lora_rank=16, lora_targets=["q", "k", "v", "o"]))
    return full


def gpu_description(args) -> dict:
    props = torch.cuda.get_device_properties(0)
    name = torch.cuda.get_device_name(0)
    spec = next((v for k, v in GPU_SPECS.items() if k.lower() in name.lower()), None)
    if args.fp16_tflops and args.fp32_tflops and args.bandwidth_gbs:
        spec = (args.fp16_tflops, args.fp32_tflops, args.bandwidth_gbs, props.major >= 8, props.major >= 8)
    if spec is None:
        raise SystemExit(f"no spec-sheet numbers for {name}; pass --fp16-tflops, --fp32-tflops and --bandwidth-gbs")
    return {
        "name": name, "kind": "cuda", "vramGB": round(props.total_memory / 2**30, 2),
        "fp16TensorTflops": spec[0], "fp32Tflops": spec[1], "memoryBandwidthGBs": spec[2],
        "bf16": spec[3], "tf32": spec[4], "computeCapability": f"{props.major}.{props.minor}",
    }


def rows_for(cfg: Config, result: dict, gpu: dict, env: str, source_url: str) -> list[dict]:
    settings = {
        "seq": cfg.seq, "microBatch": cfg.microBatch, "gradAccum": cfg.gradAccum, "precision": cfg.precision,
        "optimizer": cfg.optimizer, "optimizerImpl": cfg.optimizerImpl, "gradCheckpointing": cfg.gradCheckpointing,
        "attention": cfg.attention,
    }
    if cfg.lora_rank:
        settings["lora"] = {"rank": cfg.lora_rank, "targets": cfg.lora_targets, "dropout": 0}
    gpu_slug = re.sub(r"[^a-z0-9]+", "-", gpu["name"].lower()).strip("-")
    rows = []
    for metric, value in result.items():
        if value is None:
            continue
        unit = "MiB" if metric == "nvidia-smi" else "tokens/s/device" if metric == "tokens_per_second" else "B"
        shown = f"{value:.0f} tokens/s" if metric == "tokens_per_second" else f"{value} {unit}"
        rows.append({
            "id": f"calibrate-{gpu_slug}-{cfg.slug()}-{metric.replace('_', '-')}",
            "model": {"config": cfg.hf_config()},
            "settings": settings,
            "gpu": gpu,
            "metric": metric,
            "value": round(value, 1) if metric == "tokens_per_second" else value,
            "unit": unit,
            "origin": "calibrate",
            # Each GPU's runs are one source: leave-one-source-out holds a whole machine out at a time.
            "source": {
                "id": f"calibrate-{gpu_slug}",
                "title": "rigfit examples/calibrate/calibrate.py",
                "url": source_url,
                "where": f"{gpu['name']}, {env}",
                "says": f"{metric} = {shown} for {cfg.slug()}",
            },
            "stack": env,
        })
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", choices=["quick", "full"], default="full")
    parser.add_argument("--out", default="calibrate.jsonl", help="JSON lines file to write (appends)")
    parser.add_argument("--warmup", type=int, default=3, help="optimizer steps before measuring")
    parser.add_argument("--steps", type=int, default=5, help="optimizer steps measured for tokens/s")
    parser.add_argument("--list", action="store_true", help="print the grid and exit")
    parser.add_argument("--fp16-tflops", type=float)
    parser.add_argument("--fp32-tflops", type=float)
    parser.add_argument("--bandwidth-gbs", type=float)
    parser.add_argument("--source-url", default="file:examples/calibrate/calibrate.py", help="URL recorded as each row's source")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one JSON config in this process
    args = parser.parse_args()

    if args.one:
        print(json.dumps(measure(Config(**json.loads(args.one)), args.warmup, args.steps)))
        return
    configs = grid(args.grid)
    if args.list:
        for cfg in configs:
            print(cfg.slug())
        return
    if not torch.cuda.is_available():
        raise SystemExit("calibrate.py measures a CUDA GPU; none is visible to PyTorch")
    gpu = gpu_description(args)
    env = f"PyTorch {torch.__version__}, CUDA {torch.version.cuda}"
    written = 0
    with open(args.out, "a", encoding="utf-8") as out:
        for cfg in configs:
            # A fresh process per configuration: the caching allocator and nvidia-smi start from zero.
            child = subprocess.run(
                [sys.executable, __file__, "--one", json.dumps(asdict(cfg)), "--warmup", str(args.warmup), "--steps", str(args.steps)],
                capture_output=True, text=True,
            )
            if child.returncode != 0:
                lines = child.stderr.strip().splitlines()
                reason = "out of memory" if "OutOfMemoryError" in child.stderr else lines[-1] if lines else f"exit {child.returncode}"
                print(f"skip {cfg.slug()}: {reason}", file=sys.stderr)
                continue
            result = json.loads(child.stdout.strip().splitlines()[-1])
            for row in rows_for(cfg, result, gpu, env, args.source_url):
                out.write(json.dumps(row) + "\n")
                written += 1
            out.flush()
            print(f"{cfg.slug()}: {result['max_memory_allocated'] / 2**30:.2f} GiB allocated, {result['tokens_per_second']:.0f} tokens/s", file=sys.stderr)
    print(f"wrote {written} rows to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
