#!/usr/bin/env python3
"""A small, real GPT trainer that runs a rigfit plan.

Reads rigfit's plan JSON (rigfit-plan.json) or its `hf` export (training_args.json + config.json), applies the
RIGFIT_* overrides the monitor sets, and honours micro-batch, accumulation, precision, gradient checkpointing,
torch.compile, TF32 and the sharding strategy. Trains a randomly initialised model on a local text file (bytes as
tokens) or, without --data, on random tokens (for measuring speed and memory; the loss then stays near ln(vocab)).
Prints one JSON line per logged step:
  {"step": ..., "loss": ..., "tokens": ..., "tokens_per_s": ..., "max_memory_allocated": ...}
writes checkpoints atomically and resumes from the latest one. PyTorch only; nothing is downloaded.

  python train.py --plan rigfit-plan.json --data corpus.txt
  torchrun --standalone --nproc-per-node=4 train.py --plan rigfit-plan.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from rigfit_plan import PlanError, RunConfig, resolve

HALF = {"bf16": torch.bfloat16, "fp16": torch.float16}


def half_dtype(precision: str):
    return HALF.get(precision.split("-")[0])


# --------------------------------------------------------------------------------------------------- model


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x)


def make_norm(kind: str, dim: int) -> nn.Module:
    return RMSNorm(dim) if kind == "rmsnorm" else nn.LayerNorm(dim)


def rope_tables(seq: int, head_dim: int, device, base: float = 10000.0):
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    angles = torch.outer(torch.arange(seq, device=device).float(), inv)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin):
    a, b = x[..., 0::2].float(), x[..., 1::2].float()
    c, s = cos[: x.shape[-2]], sin[: x.shape[-2]]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2).type_as(x)


class Attention(nn.Module):
    def __init__(self, m, attention: str):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = m.heads, m.kv_heads, m.hidden // m.heads
        self.q = nn.Linear(m.hidden, m.heads * self.head_dim, bias=m.bias)
        self.kv = nn.Linear(m.hidden, 2 * m.kv_heads * self.head_dim, bias=m.bias)
        self.out = nn.Linear(m.heads * self.head_dim, m.hidden, bias=m.bias)
        self.rope = m.positions == "rope"
        self.eager = attention == "eager"

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.rope:
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.kv_heads != self.heads:
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        if self.eager:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            y = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.gated = m.mlp in ("swiglu", "geglu")
        self.act = F.silu if m.mlp == "swiglu" else F.gelu
        self.up = nn.Linear(m.hidden, m.ffn * (2 if self.gated else 1), bias=m.bias)
        self.down = nn.Linear(m.ffn, m.hidden, bias=m.bias)

    def forward(self, x):
        if self.gated:
            gate, up = self.up(x).chunk(2, dim=-1)
            return self.down(self.act(gate) * up)
        return self.down(self.act(self.up(x)))


class Block(nn.Module):
    def __init__(self, m, attention: str):
        super().__init__()
        self.norm1, self.attn = make_norm(m.norm, m.hidden), Attention(m, attention)
        self.norm2, self.mlp = make_norm(m.norm, m.hidden), MLP(m)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.norm1(x), cos, sin)
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, m, seq: int, attention: str, grad_ckpt: bool):
        super().__init__()
        self.grad_ckpt = grad_ckpt
        self.embed = nn.Embedding(m.vocab, m.hidden)
        self.pos = nn.Embedding(m.max_positions, m.hidden) if m.positions == "learned" else None
        self.blocks = nn.ModuleList(Block(m, attention) for _ in range(m.layers))
        self.norm = make_norm(m.norm, m.hidden)
        self.head = nn.Linear(m.hidden, m.vocab, bias=False)
        if m.tied:
            self.head.weight = self.embed.weight
        cos, sin = rope_tables(seq, m.hidden // m.heads, "cpu")
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.apply(self._init)

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets):
        x = self.embed(idx)
        if self.pos is not None:
            x = x + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            if self.grad_ckpt and self.training:
                x = checkpoint(block, x, self.cos, self.sin, use_reentrant=False)
            else:
                x = block(x, self.cos, self.sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


# ---------------------------------------------------------------------------------------------------- data


class Batches:
    """Random windows of a byte-tokenised text file, or random tokens; reproducible per (seed, rank, step)."""

    def __init__(self, path, vocab: int, seq: int, seed: int, rank: int):
        self.seq, self.vocab, self.seed, self.rank = seq, vocab, seed, rank
        self.data = None
        if path:
            raw = Path(path).read_bytes()
            if len(raw) <= seq + 1:
                raise PlanError(f"{path}: {len(raw)} bytes is shorter than one sequence of {seq + 1}")
            if vocab < 256:
                raise PlanError(f"the model's vocabulary ({vocab}) cannot hold byte tokens (256)")
            self.data = torch.frombuffer(bytearray(raw), dtype=torch.uint8).long()

    def get(self, batch: int, step: int, micro: int):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + self.rank * 10_007 + step * 131 + micro)
        if self.data is None:
            tokens = torch.randint(0, self.vocab, (batch, self.seq + 1), generator=g)
        else:
            starts = torch.randint(0, len(self.data) - self.seq - 1, (batch,), generator=g)
            tokens = torch.stack([self.data[s : s + self.seq + 1] for s in starts.tolist()])
        return tokens[:, :-1], tokens[:, 1:]


# ----------------------------------------------------------------------------------------------- checkpoints

CKPT = re.compile(r"^ckpt-(\d{8})\.pt$")


def checkpoints_in(directory: Path):
    found = [(int(m.group(1)), directory / m.group(0)) for p in directory.glob("ckpt-*.pt") if (m := CKPT.match(p.name))]
    return sorted(found)


def unwrap(model):
    """The GPT inside DDP and torch.compile wrappers, whose state_dict keys carry no wrapper prefixes."""
    from torch.nn.parallel import DistributedDataParallel

    while True:
        if isinstance(model, DistributedDataParallel):
            model = model.module
        elif isinstance(getattr(model, "_orig_mod", None), nn.Module):
            model = model._orig_mod
        else:
            return model


# --------------------------------------------------------------------------------------------------- setup


def setup(cfg: RunConfig, device_flag: str):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    kind = cfg.device if device_flag == "plan" else device_flag
    if kind == "cuda" and not torch.cuda.is_available():
        raise PlanError("the plan trains on CUDA/ROCm but torch sees no GPU (pass --device cpu to run anyway)")
    if kind == "mps" and not torch.backends.mps.is_available():
        raise PlanError("the plan trains on mps but this torch has no mps device (pass --device cpu to run anyway)")
    device = torch.device(f"cuda:{local_rank}" if kind == "cuda" else kind)
    if kind == "cuda":
        torch.cuda.set_device(device)
    if world > 1:
        dist.init_process_group(backend="nccl" if kind == "cuda" else "gloo")
    torch.set_num_threads(cfg.threads)
    torch.backends.cudnn.benchmark = cfg.cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = cfg.tf32
    torch.backends.cudnn.allow_tf32 = cfg.tf32
    torch.set_float32_matmul_precision("high" if cfg.tf32 else "highest")
    return device, rank, world


def make_autocast(device, half):
    try:
        return torch.autocast(device.type, dtype=half)
    except RuntimeError as error:  # older torch has no autocast for mps
        print(f"rigfit train: no autocast on {device.type} ({error}); computing in float32", file=sys.stderr)
        return nullcontext()


def build(cfg: RunConfig, device, world: int):
    """The model wrapped for the plan's strategy, its optimizer, the autocast context and the loss scaler."""
    model = GPT(cfg.model, cfg.seq, cfg.attention, cfg.grad_ckpt)
    half = half_dtype(cfg.precision)
    pure = cfg.precision.endswith("-true")
    sharded = cfg.strategy in ("zero2", "zero3", "fsdp") and world > 1
    if pure and half is not None:
        model = model.to(dtype=half)
    if sharded:
        from torch.distributed.fsdp import CPUOffload, MixedPrecision, ShardingStrategy
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy

        nodes = max(1, world // int(os.environ.get("LOCAL_WORLD_SIZE", world)))
        strategy = ShardingStrategy.SHARD_GRAD_OP if cfg.strategy == "zero2" else ShardingStrategy.FULL_SHARD
        if nodes > 1 and strategy == ShardingStrategy.FULL_SHARD:
            strategy = ShardingStrategy.HYBRID_SHARD  # shard inside a node, replicate across nodes
        model = FSDP(
            model,
            sharding_strategy=strategy,
            auto_wrap_policy=ModuleWrapPolicy({Block}),
            mixed_precision=MixedPrecision(param_dtype=half, reduce_dtype=half, buffer_dtype=half) if half and not pure else None,
            cpu_offload=CPUOffload(offload_params=cfg.offload != "none"),
            device_id=device if device.type == "cuda" else None,
            use_orig_params=True,
        )
    else:
        model = model.to(device)
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    adam = dict(lr=cfg.learning_rate, betas=(0.9, 0.95), eps=1e-8)
    if cfg.fused_optimizer and device.type == "cuda" and not sharded:
        adam["fused"] = True
    if cfg.strategy == "zero1" and world > 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer

        optimizer = ZeroRedundancyOptimizer(decay + no_decay, optimizer_class=torch.optim.AdamW, weight_decay=0.1, **adam)
    else:
        optimizer = torch.optim.AdamW(groups, **adam)
    if cfg.compile:
        model = torch.compile(model, mode=cfg.compile_mode)
    if world > 1 and not sharded:
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    autocast = make_autocast(device, half) if half is not None and not pure and not sharded else nullcontext()
    scaler = None
    if cfg.precision == "fp16-mixed" and device.type == "cuda":
        if sharded:
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler()
        elif hasattr(torch.amp, "GradScaler"):
            scaler = torch.amp.GradScaler("cuda")
        else:
            scaler = torch.cuda.amp.GradScaler()
    return model, optimizer, autocast, scaler, sharded


def fsdp_state_context(model, rank0_only: bool):
    from torch.distributed.fsdp import FullOptimStateDictConfig, FullStateDictConfig, StateDictType
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    return FSDP.state_dict_type(
        unwrap_compiled(model),
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=True, rank0_only=rank0_only),
        FullOptimStateDictConfig(offload_to_cpu=True, rank0_only=rank0_only),
    )


def unwrap_compiled(model):
    return getattr(model, "_orig_mod", model)


def save(directory: Path, step: int, tokens: int, model, optimizer, scaler, cfg: RunConfig, rank: int, sharded: bool):
    if sharded:
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        with fsdp_state_context(model, rank0_only=True):
            model_state = unwrap_compiled(model).state_dict()
            optim_state = FSDP.optim_state_dict(unwrap_compiled(model), optimizer)
    else:
        model_state = unwrap(model).state_dict()
        if hasattr(optimizer, "consolidate_state_dict"):
            optimizer.consolidate_state_dict(to=0)
            optim_state = optimizer.state_dict() if rank == 0 else None
        else:
            optim_state = optimizer.state_dict()
    if rank == 0:
        state = {
            "step": step,
            "tokens": tokens,
            "model": model_state,
            "optimizer": optim_state,
            "scaler": scaler.state_dict() if scaler else None,
            "rng": torch.get_rng_state(),
            "config": cfg.to_json(),
        }
        directory.mkdir(parents=True, exist_ok=True)
        final = directory / f"ckpt-{step:08d}.pt"
        temp = directory / f".{final.name}.tmp"
        torch.save(state, temp)
        os.replace(temp, final)  # a crash mid-write never leaves a truncated checkpoint behind
        for _, old in checkpoints_in(directory)[: -cfg.keep]:
            old.unlink(missing_ok=True)
    if dist.is_initialized():
        dist.barrier()


def resume(directory: Path, model, optimizer, scaler, sharded: bool):
    found = checkpoints_in(directory)
    if not found:
        return 0, 0
    step, path = found[-1]
    state = torch.load(path, map_location="cpu", weights_only=False)
    if sharded:
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        with fsdp_state_context(model, rank0_only=False):
            unwrap_compiled(model).load_state_dict(state["model"])
            optimizer.load_state_dict(FSDP.optim_state_dict_to_load(unwrap_compiled(model), optimizer, state["optimizer"]))
    else:
        unwrap(model).load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    if scaler and state.get("scaler"):
        scaler.load_state_dict(state["scaler"])
    torch.set_rng_state(state["rng"])
    print(f"resumed from {path} at step {step}", file=sys.stderr, flush=True)
    return step, state["tokens"]


# ---------------------------------------------------------------------------------------------------- train


def learning_rate(cfg: RunConfig, step: int) -> float:
    if step < cfg.warmup_steps:
        return cfg.learning_rate * (step + 1) / cfg.warmup_steps
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps))
    return cfg.learning_rate * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def peak_memory(device):
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device)
    if device.type == "mps" and hasattr(torch.mps, "current_allocated_memory"):
        return torch.mps.current_allocated_memory()  # mps keeps no peak counter; the current figure at log time
    return None


def train(args) -> int:
    cfg = resolve(args.plan)
    device, rank, world = setup(cfg, args.device)
    max_steps = args.max_steps or cfg.max_steps
    out = Path(args.out or cfg.output_dir)
    model, optimizer, autocast, scaler, sharded = build(cfg, device, world)
    step, tokens = (0, 0) if args.no_resume else resume(out, model, optimizer, scaler, sharded)
    batches = Batches(args.data, cfg.model.vocab, cfg.seq, args.seed, rank)
    tokens_per_step = cfg.micro_batch * cfg.grad_accum * world * cfg.seq
    if rank == 0:
        summary = {k: getattr(cfg, k) for k in ("source", "micro_batch", "grad_accum", "precision", "grad_ckpt", "compile", "strategy", "seq", "attempt")}
        print(f"rigfit train: {json.dumps(summary)} world={world} device={device}", file=sys.stderr, flush=True)
    model.train()
    interval_start, interval_tokens = time.perf_counter(), 0
    measured = []
    while step < max_steps:
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(cfg, step)
        loss_sum = torch.zeros((), device=device)
        for micro in range(cfg.grad_accum):
            x, y = batches.get(cfg.micro_batch, step, micro)
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            last = micro == cfg.grad_accum - 1
            sync = nullcontext() if last or world == 1 else model.no_sync()
            with sync, autocast:
                loss = model(x, y) / cfg.grad_accum
            (scaler.scale(loss) if scaler else loss).backward()
            loss_sum += loss.detach()
        if scaler:
            scaler.unscale_(optimizer)
        if sharded:
            unwrap_compiled(model).clip_grad_norm_(1.0)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if scaler:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        tokens += tokens_per_step
        interval_tokens += tokens_per_step
        if step % args.log_every == 0 or step == max_steps:
            if dist.is_initialized():
                dist.all_reduce(loss_sum)
                loss_sum /= world
            value = loss_sum.item()  # synchronises the device, so the interval time is real
            elapsed = time.perf_counter() - interval_start
            rate = interval_tokens / elapsed if elapsed > 0 else 0.0
            measured.append(rate)
            if rank == 0:
                line = {"step": step, "loss": round(value, 5), "tokens": tokens, "tokens_per_s": round(rate, 1),
                        "max_memory_allocated": peak_memory(device), "lr": learning_rate(cfg, step - 1), "attempt": cfg.attempt}
                print(json.dumps(line), flush=True)
            interval_start, interval_tokens = time.perf_counter(), 0
        if step % cfg.save_every == 0 or step == max_steps:
            save(out, step, tokens, model, optimizer, scaler, cfg, rank, sharded)
    if rank == 0 and measured:
        # The first interval includes compilation and warm-up; the steady rate is the later ones.
        steady = measured[1:] or measured
        report = {"measured_tokens_per_s": sum(steady) / len(steady), "predicted_tokens_per_s": cfg.predicted_tokens_per_s,
                  "measured_max_memory_allocated": peak_memory(device), "predicted_peak_allocated": cfg.predicted_peak_allocated}
        print(f"rigfit train: done {json.dumps(report)}", file=sys.stderr, flush=True)
    if dist.is_initialized():
        dist.destroy_process_group()
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", help="rigfit-plan.json, training_args.json, or an export folder (default: $RIGFIT_PLAN_FILE)")
    parser.add_argument("--data", help="local text file, tokenised as bytes (default: random tokens)")
    parser.add_argument("--out", help="checkpoint folder (default: the plan's output directory)")
    parser.add_argument("--device", default="plan", choices=["plan", "cuda", "mps", "cpu"], help="override the plan's device")
    parser.add_argument("--max-steps", type=int, help="stop after this many optimizer steps (default: the plan's)")
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-resume", action="store_true", help="start fresh even if checkpoints exist")
    args = parser.parse_args(argv)
    try:
        return train(args)
    except PlanError as error:
        print(f"rigfit train: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
