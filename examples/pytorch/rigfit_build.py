"""Builds what the example trainer runs: the process group, the model (with LoRA), its wrapper for the plan's
strategy, the optimizer, autocast and the loss scaler; or a DeepSpeed engine when DeepSpeed is asked for and
installed. Where this torch or device cannot do what the plan asks, it says so on stderr and does the nearest
thing it can (the run still trains; memory and speed then differ from the plan's).
"""

from __future__ import annotations

import inspect
import json
import os
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
import torch.distributed as dist

from rigfit_model import GPT, Block, add_lora, parameter_counts
from rigfit_plan import PlanError, RunConfig
from rigfit_runtime import emit

HALF = {"bf16": torch.bfloat16, "fp16": torch.float16}
TORCH_2 = int(torch.__version__.split(".")[0]) >= 2


def say(message: str) -> None:
    if int(os.environ.get("RANK", "0")) == 0:
        emit(f"rigfit train: {message}")


@dataclass
class Placement:
    device: torch.device
    rank: int
    world: int
    local_rank: int


@dataclass
class Run:
    cfg: RunConfig
    device: torch.device
    rank: int
    world: int
    local_rank: int
    out: Path
    model: Any
    optimizer: Any
    engine: str  # single | ddp | ddp+zero1 | fsdp | deepspeed
    sharded: bool = False
    autocast: Any = field(default_factory=nullcontext)
    scaler: Any = None
    scheduler: Any = None
    params: int = 0
    trainable: int = 0
    nullcontext: Callable = nullcontext

    @property
    def engine_schedules_lr(self) -> bool:
        return self.scheduler is not None

    def no_sync(self):
        return self.model.no_sync()

    def clip_grad_norm(self, limit: float) -> None:
        if self.sharded:
            self.model.clip_grad_norm_(limit)
        else:
            torch.nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.grad is not None], limit)

    def current_lr(self) -> float:
        return self.optimizer.param_groups[0]["lr"]


def setup(cfg: RunConfig, device_flag: str) -> Placement:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    kind = cfg.device if device_flag == "plan" else device_flag
    if kind == "cuda" and not torch.cuda.is_available():
        raise PlanError("the plan trains on CUDA/ROCm but torch sees no GPU (pass --device cpu to run anyway)")
    if kind == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise PlanError("the plan trains on mps but this torch has no mps device (pass --device cpu to run anyway)")
    device = torch.device(f"cuda:{local_rank}" if kind == "cuda" else kind)
    if kind == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = cfg.tf32
        torch.backends.cudnn.allow_tf32 = cfg.tf32
        torch.backends.cudnn.benchmark = cfg.cudnn_benchmark
    if world > 1 and not dist.is_initialized():
        dist.init_process_group(backend="nccl" if kind == "cuda" else "gloo")
    # A rank uses at most its share of the machine's cores: oversubscribed OpenMP threads wait on each other.
    share = max(1, (os.cpu_count() or 1) // int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    if cfg.threads > share:
        say(f"{cfg.threads} threads per process asked for, {share} used: {os.cpu_count()} cores for "
            f"{os.environ.get('LOCAL_WORLD_SIZE')} processes on this machine")
    torch.set_num_threads(min(cfg.threads, share))
    torch.set_float32_matmul_precision("high" if cfg.tf32 else "highest")
    return Placement(device, rank, world, local_rank)


def make_autocast(device, half):
    try:
        return torch.autocast(device.type, dtype=half)
    except RuntimeError as error:  # older torch has no autocast for mps
        say(f"no autocast on {device.type} ({error}); computing in float32")
        return nullcontext()


def keep_frozen_in(model, half):
    """Stores the frozen base in the half type, as rigfit prices it and its exports load it: under autocast only the
    trained adapters stay fp32."""
    for parameter in model.parameters():
        if not parameter.requires_grad:
            parameter.data = parameter.data.to(half)
    say(f"the frozen base is kept in {str(half).replace('torch.', '')}; the adapters train in float32")


def make_model(cfg: RunConfig):
    model = GPT(cfg.model, cfg.seq, cfg.attention, cfg.grad_ckpt)
    if cfg.lora is not None:
        model, how = add_lora(model, cfg.lora)
        say(f"{cfg.method}: rank {cfg.lora.rank} adapters on {', '.join(cfg.lora.targets)} through {how}; "
            "the base model is randomly initialised (nothing is downloaded)")
        if cfg.quant != "none":
            say(f"the plan quantizes the frozen base to {cfg.quant}; this trainer keeps it in {cfg.precision} "
                "(more memory than the plan predicts)")
    return model


def strategy_for(cfg: RunConfig, device: torch.device, world: int) -> str:
    """The wrapper this torch and device can run for the plan's strategy."""
    if world == 1:
        return "single"
    if cfg.strategy in ("zero2", "zero3", "fsdp"):
        if device.type == "cuda" and TORCH_2:
            return "fsdp"
        say(f"{cfg.strategy} runs as PyTorch FSDP, which this trainer uses on CUDA with torch 2.0 or later; "
            f"here ({device.type}, torch {torch.__version__}) it shards only the optimizer state (ZeRO-1)")
        return "ddp+zero1"
    return "ddp+zero1" if cfg.strategy == "zero1" else "ddp"


def adamw_kwargs(cfg: RunConfig, device: torch.device, sharded: bool) -> dict:
    adam = dict(lr=cfg.learning_rate, betas=tuple(cfg.adam_betas), eps=cfg.adam_epsilon)
    fused_ok = "fused" in inspect.signature(torch.optim.AdamW).parameters  # torch 2.0+
    if cfg.fused_optimizer and device.type == "cuda" and not sharded and fused_ok:
        adam["fused"] = True
    return adam


def wrap_fsdp(model, cfg: RunConfig, device, half, pure: bool):
    from torch.distributed.fsdp import CPUOffload, MixedPrecision, ShardingStrategy
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    world = dist.get_world_size()
    nodes = max(1, world // int(os.environ.get("LOCAL_WORLD_SIZE", world)))
    strategy = ShardingStrategy.SHARD_GRAD_OP if cfg.strategy == "zero2" else ShardingStrategy.FULL_SHARD
    if nodes > 1 and strategy == ShardingStrategy.FULL_SHARD:
        strategy = ShardingStrategy.HYBRID_SHARD  # shard inside a node, replicate across nodes
    return FSDP(
        model,
        sharding_strategy=strategy,
        auto_wrap_policy=ModuleWrapPolicy({Block}),
        mixed_precision=MixedPrecision(param_dtype=half, reduce_dtype=half, buffer_dtype=half) if half and not pure else None,
        cpu_offload=CPUOffload(offload_params=cfg.offload != "none"),
        device_id=device,
        use_orig_params=True,
    )


def build_torch(cfg: RunConfig, where: Placement, out: Path) -> Run:
    device, world = where.device, where.world
    model = make_model(cfg)
    params, trainable = parameter_counts(model)
    half = HALF.get(cfg.precision.split("-")[0])
    pure = cfg.precision.endswith("-true")
    engine = strategy_for(cfg, device, world)
    sharded = engine == "fsdp"
    autocast = make_autocast(device, half) if half is not None and not pure and not sharded else nullcontext()
    if pure and half is not None:
        model = model.to(dtype=half)
    elif cfg.lora is not None and not isinstance(autocast, nullcontext):
        keep_frozen_in(model, half)
    elif cfg.lora is not None and sharded and half is not None:
        say("FSDP flattens one dtype per unit, so the frozen base is stored in float32 beside the adapters: "
            "more memory than the plan's 16-bit base")
    model = wrap_fsdp(model, cfg, device, half, pure) if sharded else model.to(device)
    trainable_params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in trainable_params if p.dim() >= 2]
    no_decay = [p for p in trainable_params if p.dim() < 2]
    adam = adamw_kwargs(cfg, device, sharded)
    if engine == "ddp+zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer

        optimizer = ZeroRedundancyOptimizer(trainable_params, optimizer_class=torch.optim.AdamW, weight_decay=cfg.weight_decay, **adam)
    else:
        groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW([g for g in groups if g["params"]], **adam)
    if cfg.compile:
        if not hasattr(torch, "compile"):
            say(f"the plan compiles the model; torch {torch.__version__} has no torch.compile (2.0+): running eagerly")
        elif device.type != cfg.device:
            say(f"the plan compiles for {cfg.device}; running eagerly on {device.type}")
        else:
            model = torch.compile(model, mode=cfg.compile_mode)
    if engine.startswith("ddp"):
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    scaler = None
    if cfg.precision == "fp16-mixed" and device.type == "cuda":
        if sharded:
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler = ShardedGradScaler()
        elif hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
            scaler = torch.amp.GradScaler("cuda")
        else:
            scaler = torch.cuda.amp.GradScaler()
    return Run(cfg, device, where.rank, world, where.local_rank, out, model, optimizer, engine, sharded, autocast,
               scaler, params=params, trainable=trainable)


def build_deepspeed(deepspeed, cfg: RunConfig, where: Placement, out: Path) -> Run:
    """A DeepSpeed engine from the exported ds_config.json, its batch keys set from the run's settings (which
    the monitor's overrides may have changed since the file was written)."""
    with open(cfg.deepspeed_config, encoding="utf-8") as file:
        ds = json.load(file)
    ds.update(train_micro_batch_size_per_gpu=cfg.micro_batch, gradient_accumulation_steps=cfg.grad_accum,
              train_batch_size=cfg.micro_batch * cfg.grad_accum * where.world)
    model = make_model(cfg)
    params, trainable = parameter_counts(model)
    optimizer = None if "optimizer" in ds else torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                                                  **adamw_kwargs(cfg, where.device, True))
    engine, optimizer, _, scheduler = deepspeed.initialize(
        model=model, model_parameters=[p for p in model.parameters() if p.requires_grad], optimizer=optimizer, config=ds)
    return Run(cfg, where.device, where.rank, where.world, where.local_rank, out, engine, optimizer, "deepspeed",
               scheduler=scheduler, params=params, trainable=trainable)


def build(cfg: RunConfig, where: Placement, deepspeed_flag: bool, out: Path) -> Run:
    if deepspeed_flag or cfg.deepspeed_config:
        try:
            import deepspeed
        except ImportError:
            deepspeed = None
        if deepspeed is None or not cfg.deepspeed_config:
            why = "DeepSpeed is not installed" if deepspeed is None else "no DeepSpeed config was given"
            engine = "FSDP" if cfg.strategy in ("zero2", "zero3") else "ZeroRedundancyOptimizer" if cfg.strategy == "zero1" else "DDP"
            say(f"{why}: running {cfg.strategy} with PyTorch ({engine} where this torch and device allow)")
        else:
            return build_deepspeed(deepspeed, cfg, where, out)
    return build_torch(cfg, where, out)
