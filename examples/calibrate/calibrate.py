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
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

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


@dataclass
class Config:
    """One measured configuration; field names follow rigfit's EstimateInput."""

    family: str  # "gpt2" or "llama"
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    seq: int
    microBatch: int
    precision: str = "bf16-mixed"
    optimizer: str = "adamw"
    optimizerImpl: str = "foreach"
    gradCheckpointing: bool = False
    attention: str = "sdpa"
    gradAccum: int = 1
    lora_rank: int = 0
    lora_targets: list[str] = field(default_factory=lambda: ["q", "v"])

    def slug(self) -> str:
        parts = [f"{self.family}-{self.layers}x{self.hidden}", f"s{self.seq}", f"b{self.microBatch}", self.precision, self.optimizer, self.attention]
        if self.optimizerImpl != "foreach":
            parts.append(self.optimizerImpl)
        if self.gradCheckpointing:
            parts.append("ckpt")
        if self.gradAccum > 1:
            parts.append(f"ga{self.gradAccum}")
        if self.lora_rank:
            parts.append(f"lora{self.lora_rank}-{''.join(self.lora_targets)}")
        return "-".join(parts).lower()

    def hf_config(self) -> dict:
        """The model as a Hugging Face config.json, which rigfit reads with modelSpecFromHfConfig."""
        if self.family == "gpt2":
            return {
                "model_type": "gpt2", "n_embd": self.hidden, "n_layer": self.layers, "n_head": self.heads,
                "n_inner": 4 * self.hidden, "vocab_size": self.vocab, "n_positions": self.seq,
                "attn_pdrop": 0.0, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "tie_word_embeddings": True,
            }
        return {
            "model_type": "llama", "hidden_size": self.hidden, "num_hidden_layers": self.layers,
            "num_attention_heads": self.heads, "num_key_value_heads": self.kv_heads,
            "intermediate_size": swiglu_width(self.hidden), "vocab_size": self.vocab,
            "max_position_embeddings": self.seq, "hidden_act": "silu", "rms_norm_eps": 1e-5,
            "tie_word_embeddings": False,
        }


def swiglu_width(hidden: int) -> int:
    return int(math.ceil(8 * hidden / 3 / 256) * 256)


# ---------------------------------------------------------------------------------------------------------------
# The model: the layouts rigfit's estimate describes (pre-norm blocks, fp32 RMSNorm as Hugging Face computes it).


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


class LoRALinear(nn.Module):
    """A frozen linear layer plus a trainable low-rank update (PEFT's layout, dropout 0)."""

    def __init__(self, base: nn.Linear, rank: int):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        self.lora_a = nn.Linear(base.in_features, rank, bias=False, device=base.weight.device, dtype=base.weight.dtype)
        self.lora_b = nn.Linear(rank, base.out_features, bias=False, device=base.weight.device, dtype=base.weight.dtype)
        nn.init.zeros_(self.lora_b.weight)

    def forward(self, x):
        return self.base(x) + self.lora_b(self.lora_a(x))


def rope(x, positions):
    half = x.shape[-1] // 2
    freqs = 1.0 / (10000 ** (torch.arange(0, half, device=x.device, dtype=torch.float32) / half))
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        h, self.heads, self.kv_heads = cfg.hidden, cfg.heads, cfg.kv_heads
        self.head_dim = h // cfg.heads
        llama = cfg.family == "llama"
        bias = not llama
        self.llama = llama
        self.attention = cfg.attention
        self.norm1 = RMSNorm(h) if llama else nn.LayerNorm(h)
        self.norm2 = RMSNorm(h) if llama else nn.LayerNorm(h)
        self.q = nn.Linear(h, cfg.heads * self.head_dim, bias=bias)
        self.k = nn.Linear(h, cfg.kv_heads * self.head_dim, bias=bias)
        self.v = nn.Linear(h, cfg.kv_heads * self.head_dim, bias=bias)
        self.o = nn.Linear(cfg.heads * self.head_dim, h, bias=bias)
        if llama:
            f = swiglu_width(h)
            self.gate = nn.Linear(h, f, bias=False)
            self.up = nn.Linear(h, f, bias=False)
            self.down = nn.Linear(f, h, bias=False)
        else:
            self.up = nn.Linear(h, 4 * h)
            self.down = nn.Linear(4 * h, h)

    def attend(self, x):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.llama:
            positions = torch.arange(s, device=x.device)
            q, k = rope(q, positions), rope(k, positions)
        groups = self.heads // self.kv_heads
        if self.attention == "eager":
            if groups > 1:
                k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            mask = torch.ones(s, s, device=x.device, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
            probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            out = probs @ v
        else:
            if groups > 1:
                k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, s, -1))

    def forward(self, x):
        x = x + self.attend(self.norm1(x))
        y = self.norm2(x)
        y = self.down(F.silu(self.gate(y)) * self.up(y)) if self.llama else self.down(F.gelu(self.up(y), approximate="tanh"))
        return x + y


class Decoder(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.positions = nn.Embedding(cfg.seq, cfg.hidden) if cfg.family == "gpt2" else None
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.hidden) if cfg.family == "llama" else nn.LayerNorm(cfg.hidden)
        self.head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        if cfg.family == "gpt2":
            self.head.weight = self.embed.weight

    def forward(self, ids, targets):
        x = self.embed(ids)
        if self.positions is not None:
            x = x + self.positions(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.cfg.gradCheckpointing and self.training else block(x)
        logits = self.head(self.norm(x))
        # Upcast before the loss, as Hugging Face models do.
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def add_lora(model: Decoder, rank: int, targets: list[str]):
    model.requires_grad_(False)
    for block in model.blocks:
        for name in targets:
            if hasattr(block, name):
                setattr(block, name, LoRALinear(getattr(block, name), rank))


def make_optimizer(cfg: Config, params):
    if cfg.optimizer == "adamw":
        kwargs = {"fused": True} if cfg.optimizerImpl == "fused" else {"foreach": cfg.optimizerImpl == "foreach"}
        return torch.optim.AdamW(params, lr=1e-4, **kwargs)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=1e-4)
    if cfg.optimizer == "sgd-momentum":
        return torch.optim.SGD(params, lr=1e-4, momentum=0.9)
    if cfg.optimizer == "adafactor" and hasattr(torch.optim, "Adafactor"):
        return torch.optim.Adafactor(params, lr=1e-2)
    raise SystemExit(f"optimizer {cfg.optimizer} is not available in this PyTorch (adamw-8bit needs bitsandbytes)")


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
            "source": {
                "title": "rigfit examples/calibrate/calibrate.py",
                "url": source_url,
                "where": f"{gpu['name']}, {env}",
                "says": f"{metric} = {shown} for {cfg.slug()}",
            },
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
