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

from decoder import Config, Decoder, add_lora, keep_frozen_in, make_optimizer

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


def device_memory_used_mib() -> int | None:
    """The GPU's used memory as nvidia-smi reports it (all processes), or None without nvidia-smi."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "--id=0"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
        return int(out.strip().splitlines()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def measure(cfg: Config, warmup: int, steps: int, min_seconds: float, idle_mib: int | None) -> dict:
    """Trains `cfg` on this process's GPU; returns the four measurements.

    At least `steps` optimizer steps are timed, and more until `min_seconds` have passed, so that the short
    steps of small models are not timed by a handful of kernel launches."""
    device = torch.device("cuda")
    torch.manual_seed(0)
    dtype = {"bf16-true": torch.bfloat16, "fp16-true": torch.float16}.get(cfg.precision, torch.float32)
    # Built on the GPU: initialising a billion parameters on the CPU first takes longer than the measurement.
    with torch.device(device):
        model = Decoder(cfg).to(dtype=dtype)
    autocast_dtype = {"bf16-mixed": torch.bfloat16, "fp16-mixed": torch.float16}.get(cfg.precision)
    if cfg.lora_rank:
        add_lora(model, cfg.lora_rank, cfg.lora_targets, cfg.adapter_dtype)
        if autocast_dtype:
            keep_frozen_in(model, autocast_dtype)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer(cfg, params)
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
    timed = 0
    while timed < steps or time.perf_counter() - start < min_seconds:
        step()
        timed += 1
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    smi = process_memory_mib()
    if smi is None and idle_mib is not None:
        # In a container nvidia-smi may list no processes (another PID namespace): with this process alone on
        # the GPU, its memory is the device's used memory less what the idle device showed.
        used = device_memory_used_mib()
        smi = used - idle_mib if used is not None else None
    return {
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "nvidia-smi": smi,
        "tokens_per_second": timed * cfg.gradAccum * cfg.microBatch * cfg.seq / elapsed,
    }


# ---------------------------------------------------------------------------------------------------------------
# The grid and the rows.


GPT2_SMALL = dict(family="gpt2", hidden=768, layers=12, heads=12, kv_heads=12, vocab=50257)
LLAMA_350M = dict(family="llama", hidden=1024, layers=24, heads=16, kv_heads=4, vocab=32000)
LLAMA_1B = dict(family="llama", hidden=2048, layers=16, heads=32, kv_heads=8, vocab=32000)
# Llama 3.2 3B's layout with its 128k vocabulary (head untied), where the logits weigh as much as a few layers.
LLAMA_3B = dict(family="llama", hidden=3072, layers=28, heads=24, kv_heads=8, vocab=128256)
# A small Mixtral layout: eight SwiGLU experts, two per token, Hugging Face's routing loop.
MOE_1B = dict(family="llama", hidden=1024, layers=16, heads=16, kv_heads=4, vocab=32000, experts=8, top_k=2)


def grid(name: str) -> list[Config]:
    """The configurations to measure, the most telling first (a time limit may end the list early)."""
    quick = [
        Config(**GPT2_SMALL, seq=1024, microBatch=4),
        Config(**GPT2_SMALL, seq=1024, microBatch=4, attention="eager"),
        Config(**LLAMA_350M, seq=2048, microBatch=2, gradCheckpointing=True),
        Config(**LLAMA_350M, seq=2048, microBatch=2, precision="bf16-true", lora_rank=16),
    ]
    if name == "quick":
        return quick
    full = list(quick)
    # Micro-batch by sequence: how activations and logits grow, up to the out-of-memory boundary.
    for seq in (1024, 4096):
        for micro in (1, 2, 4, 8):
            full.append(Config(**LLAMA_1B, seq=seq, microBatch=micro))
    for micro in (1, 2, 4):
        full.append(Config(**LLAMA_3B, seq=1024, microBatch=micro))
    for micro in (4, 8):
        full.append(Config(**LLAMA_3B, seq=2048, microBatch=micro, gradCheckpointing=True))
    # LoRA on a 16-bit base and on an fp32 base under autocast; with and without checkpointing.
    qkvo = ["q", "k", "v", "o"]
    full.append(Config(**LLAMA_1B, seq=2048, microBatch=4, precision="bf16-true", lora_rank=16, lora_targets=qkvo))
    full.append(Config(**LLAMA_1B, seq=2048, microBatch=4, precision="bf16-mixed", lora_rank=16, lora_targets=qkvo))
    full.append(Config(**LLAMA_3B, seq=2048, microBatch=1, precision="bf16-true", lora_rank=16, lora_targets=qkvo))
    full.append(Config(**LLAMA_3B, seq=2048, microBatch=4, precision="bf16-true", lora_rank=16, lora_targets=qkvo))
    full.append(Config(**LLAMA_3B, seq=2048, microBatch=8, precision="bf16-true", lora_rank=16, lora_targets=qkvo, gradCheckpointing=True))
    # Precision by checkpointing at one shape, for three sizes.
    for base in (GPT2_SMALL, LLAMA_350M, LLAMA_1B):
        for precision in ("fp32", "bf16-mixed", "bf16-true"):
            for ckpt in (False, True):
                full.append(Config(**base, seq=1024, microBatch=4, precision=precision, gradCheckpointing=ckpt))
    # One change at a time from the 1B's default: fp16 with a loss scaler, eager attention, other optimizers, accumulation.
    full.append(Config(**LLAMA_1B, seq=1024, microBatch=4, precision="fp16-mixed"))
    full.append(Config(**LLAMA_1B, seq=2048, microBatch=2, attention="eager"))
    full.append(Config(**LLAMA_1B, seq=1024, microBatch=4, optimizerImpl="fused"))
    full.append(Config(**LLAMA_1B, seq=512, microBatch=8, optimizer="sgd-momentum"))
    full.append(Config(**LLAMA_1B, seq=2048, microBatch=1, gradAccum=4))
    # PEFT's fp32 adapters on a bf16 base: an fp32 copy of the input per adapted layer, fp32 states.
    full.append(Config(**LLAMA_1B, seq=2048, microBatch=4, precision="bf16-true", lora_rank=16, lora_targets=qkvo, adapter_dtype="fp32"))
    full.append(Config(**LLAMA_3B, seq=2048, microBatch=1, precision="bf16-true", lora_rank=16, lora_targets=qkvo, adapter_dtype="fp32"))
    full.append(Config(**LLAMA_3B, seq=2048, microBatch=8, precision="bf16-true", lora_rank=16, lora_targets=qkvo, gradCheckpointing=True, adapter_dtype="fp32"))
    # A mixture of experts: routing, gathered expert inputs and one small matmul per expert.
    full.append(Config(**MOE_1B, seq=1024, microBatch=4))
    full.append(Config(**MOE_1B, seq=1024, microBatch=4, gradCheckpointing=True))
    full.append(Config(**MOE_1B, seq=2048, microBatch=2, precision="bf16-true", lora_rank=16, lora_targets=qkvo, adapter_dtype="fp32"))
    unique = {cfg.slug(): cfg for cfg in full}
    return list(unique.values())


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
    # Only what a user types: the harness is a hand-written PyTorch loop, the `plain` stack, which decides the rest
    # (the loss upcasts the logits, no compile, PyTorch's TF32 and optimizer defaults).
    settings = {
        "seq": cfg.seq, "microBatch": cfg.microBatch, "gradAccum": cfg.gradAccum, "precision": cfg.precision,
        "optimizer": cfg.optimizer, "gradCheckpointing": cfg.gradCheckpointing, "attention": cfg.attention,
    }
    if cfg.optimizerImpl == "fused":
        settings["fusedOptimizer"] = True
    if cfg.lora_rank:
        settings["lora"] = {"rank": cfg.lora_rank, "targets": cfg.lora_targets, "dropout": 0}
    torch_release = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    gpu_slug = re.sub(r"[^a-z0-9]+", "-", gpu["name"].lower()).strip("-")
    rows = []
    for metric, value in result.items():
        if value is None:
            continue
        unit = {"nvidia-smi": "MiB", "tokens_per_second": "tokens/s/device", "oom": "GiB"}.get(metric, "B")
        shown = f"{value:.0f} tokens/s" if metric == "tokens_per_second" else f"{value} {unit}"
        if metric == "oom":
            shown = f"torch.OutOfMemoryError on {value} {unit}"
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
            "stack": f"plain@{torch_release}",
            "stackSays": env,
        })
    return rows


def driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "--id=0"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        return out.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", choices=["quick", "full"], default="full")
    parser.add_argument("--out", default="calibrate.jsonl", help="JSON lines file to append to; configurations it holds are skipped")
    parser.add_argument("--warmup", type=int, default=3, help="optimizer steps before measuring")
    parser.add_argument("--steps", type=int, default=5, help="optimizer steps measured for tokens/s (at least)")
    parser.add_argument("--min-seconds", type=float, default=1.0, help="time measured for tokens/s (at least)")
    parser.add_argument("--time-limit", type=float, help="start no configuration after this many seconds")
    parser.add_argument("--idle-mib", type=int, help=argparse.SUPPRESS)  # internal: the idle GPU's used memory
    parser.add_argument("--list", action="store_true", help="print the grid and exit")
    parser.add_argument("--fp16-tflops", type=float)
    parser.add_argument("--fp32-tflops", type=float)
    parser.add_argument("--bandwidth-gbs", type=float)
    parser.add_argument("--source-url", default="file:examples/calibrate/calibrate.py", help="URL recorded as each row's source")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one JSON config in this process
    args = parser.parse_args()

    if args.one:
        print(json.dumps(measure(Config(**json.loads(args.one)), args.warmup, args.steps, args.min_seconds, args.idle_mib)))
        return
    configs = grid(args.grid)
    if args.list:
        for cfg in configs:
            print(cfg.slug())
        return
    if not torch.cuda.is_available():
        raise SystemExit("calibrate.py measures a CUDA GPU; none is visible to PyTorch")
    gpu = gpu_description(args)
    env = f"PyTorch {torch.__version__}, CUDA {torch.version.cuda}, driver {driver_version()}"
    # Read before any child holds the GPU: the baseline for nvidia-smi figures when processes are not listed.
    idle = device_memory_used_mib()
    # A second run with the same --out measures only what the first did not reach (a time limit, a crash).
    done = set()
    if os.path.exists(args.out):
        with open(args.out, encoding="utf-8") as existing:
            done = {json.loads(line)["source"]["says"].rsplit(" for ", 1)[-1] for line in existing if line.strip()}
    configs = [cfg for cfg in configs if cfg.slug() not in done]
    started = time.monotonic()
    written = 0
    with open(args.out, "a", encoding="utf-8") as out:
        for index, cfg in enumerate(configs):
            if args.time_limit is not None and time.monotonic() - started > args.time_limit:
                print(f"time limit: {len(configs) - index} configurations not measured", file=sys.stderr)
                break
            # A fresh process per configuration: the caching allocator and nvidia-smi start from zero.
            command = [sys.executable, __file__, "--one", json.dumps(asdict(cfg)), "--warmup", str(args.warmup),
                       "--steps", str(args.steps), "--min-seconds", str(args.min_seconds)]
            if idle is not None:
                command += ["--idle-mib", str(idle)]
            try:
                child = subprocess.run(command, capture_output=True, text=True, timeout=180)
            except subprocess.TimeoutExpired:
                print(f"skip {cfg.slug()}: no result within 180 s", file=sys.stderr)
                continue
            if child.returncode != 0:
                if "OutOfMemoryError" in child.stderr or "CUDA out of memory" in child.stderr:
                    result = {"oom": gpu["vramGB"]}
                    print(f"{cfg.slug()}: out of memory", file=sys.stderr)
                else:
                    lines = child.stderr.strip().splitlines()
                    print(f"skip {cfg.slug()}: {lines[-1] if lines else f'exit {child.returncode}'}", file=sys.stderr)
                    continue
            else:
                result = json.loads(child.stdout.strip().splitlines()[-1])
            for row in rows_for(cfg, result, gpu, env, args.source_url):
                out.write(json.dumps(row) + "\n")
                written += 1
            out.flush()
            if "oom" not in result:
                print(f"{cfg.slug()}: {result['max_memory_allocated'] / 2**30:.2f} GiB allocated, "
                      f"{result['tokens_per_second']:.0f} tokens/s", file=sys.stderr)
    print(f"wrote {written} rows to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
