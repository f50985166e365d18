"""Reads a rigfit plan, or one of rigfit's exports, into the settings train.py runs with.

Pure Python (no torch), so the monitor and tests can use it anywhere. Sources, in order of precedence (later wins):
the plan (rigfit-plan.json), or an exported config that stands alone (the `hf` export's training_args.json, the
Lightning config, the `pytorch` settings module), or one that refines the plan beside it or in RIGFIT_PLAN_FILE
(ds_config.json, accelerate_config.yaml); then the DeepSpeed config a launcher names (--deepspeed_config,
RIGFIT_DEEPSPEED_CONFIG) and the variables `accelerate launch` sets; then the RIGFIT_* variables the monitor sets
on a restart: RIGFIT_PLAN_FILE, RIGFIT_MICRO_BATCH, RIGFIT_GRAD_ACCUM, RIGFIT_GRAD_CKPT (0/1), RIGFIT_PRECISION,
RIGFIT_DEVICE, RIGFIT_ATTEMPT.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Tuple

PRECISIONS = ("fp32", "fp16-mixed", "bf16-mixed", "fp16-true", "bf16-true")
STRATEGIES = ("single", "ddp", "zero1", "zero2", "zero3", "fsdp")
SHARDED = ("zero1", "zero2", "zero3", "fsdp")
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")
DEVICES = ("cuda", "rocm", "mps", "xpu", "cpu")


class PlanError(ValueError):
    """A plan file or override that cannot be trained with; the message names the file or variable."""


@dataclass(frozen=True)
class ModelShape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    max_positions: int
    mlp: str  # gelu | swiglu | geglu
    norm: str  # layernorm | rmsnorm
    positions: str  # learned | rope
    tied: bool
    bias: bool


@dataclass(frozen=True)
class LoraShape:
    rank: int
    alpha: float
    dropout: float
    targets: Tuple[str, ...]  # rigfit's names: q, k, v, o, gate, up, down


@dataclass(frozen=True)
class RunConfig:
    source: str
    model: ModelShape
    seq: int
    micro_batch: int
    grad_accum: int
    precision: str
    grad_ckpt: bool
    compile: bool
    compile_mode: str
    attention: str
    tf32: bool
    cudnn_benchmark: bool
    threads: int
    device: str
    strategy: str  # single | ddp | zero1 | zero2 | zero3 | fsdp: what to do with more than one process
    offload: str
    learning_rate: float
    fused_optimizer: bool
    warmup_steps: int
    max_steps: int
    save_every: int
    keep: int
    output_dir: str
    attempt: int
    predicted_tokens_per_s: Optional[float]
    predicted_peak_allocated: Optional[int]
    method: str = "full"  # full | lora | qlora
    lora: Optional[LoraShape] = None
    quant: str = "none"  # the frozen base's quantization: none | int8 | nf4
    world_size: Optional[int] = None  # processes the plan was made for, when the source says
    deepspeed_config: Optional[str] = None  # the DeepSpeed config file the run was handed
    grad_clip: float = 1.0
    adam_betas: Tuple[float, float] = (0.9, 0.95)  # pretraining's; a plan states its own (settings.optimization)
    adam_epsilon: float = 1e-8
    weight_decay: float = 0.1

    def to_json(self) -> dict:
        return asdict(self)


def warmup_for(steps: int) -> int:
    """2% of the run, at most 2000 steps, at least one (pretraining's warm-up, for plans that do not state theirs)."""
    return max(1, min(2000, round(steps * 0.02)))


def optimization_of(settings: Mapping[str, Any], steps: int) -> dict:
    """The plan's AdamW settings (settings.optimization), or pretraining's for a plan written before them."""
    o = settings.get("optimization")
    if not o:
        return dict(adam_betas=(0.9, 0.95), adam_epsilon=1e-8, weight_decay=0.1, warmup_steps=warmup_for(steps), grad_clip=1.0)
    return dict(
        adam_betas=(float(o["beta1"]), float(o["beta2"])), adam_epsilon=float(o["epsilon"]),
        weight_decay=float(o["weightDecay"]), warmup_steps=int(o["warmupSteps"]), grad_clip=float(o["gradClip"]),
    )


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise PlanError(f"{path}: is a folder, not a file") from None
    except json.JSONDecodeError as error:
        raise PlanError(f"{path}: not valid JSON ({error})") from None


def need(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise PlanError(f"{where}: missing field {key}")
    return obj[key]


def strategy_of(settings: Mapping[str, Any]) -> str:
    """The plan's strategy between processes, in the trainer's terms (sharding decides for ZeRO and the CPU)."""
    strategy, sharding = settings["strategy"], settings.get("sharding", "none")
    if strategy in ("zero", "zero-offload", "fsdp", "cpu", "ddp") and sharding in SHARDED:
        return sharding
    if strategy == "fsdp":
        return "fsdp"
    if strategy == "ddp" or (strategy == "cpu" and settings.get("nodes", 1) > 1):
        return "ddp"
    return "single"  # single, model-split (one process), the CPU on one node


def lora_from_plan(settings: Mapping[str, Any], source: str) -> Optional[LoraShape]:
    """The plan's adapter: rank and targets from the plan, alpha twice the rank and no dropout (as the exports)."""
    if settings.get("method", "full") == "full":
        return None
    lora = settings.get("lora")
    if not lora:
        raise PlanError(f"{source}: settings.method is {settings['method']} but settings.lora is empty")
    targets = tuple(t for t in lora["targets"] if t in LORA_TARGETS)
    if not targets:
        raise PlanError(f"{source}: settings.lora.targets {lora['targets']} names none of {', '.join(LORA_TARGETS)}")
    return LoraShape(rank=int(lora["rank"]), alpha=2.0 * int(lora["rank"]), dropout=0.0, targets=targets)


def from_plan(plan: dict, source: str) -> RunConfig:
    """A rigfit TrainingPlan (rigfit-plan.json, `rigfit plan --json`)."""
    s = need(plan, "settings", source)
    m = need(plan, "model", source)
    if m.get("kind") != "decoder":
        raise PlanError(f"{source}: model.kind {m.get('kind')!r}: this trainer trains decoder-only models")
    if m.get("positions") not in ("learned", "rope"):
        raise PlanError(f"{source}: model.positions {m.get('positions')!r} is not supported (learned or rope)")
    step_seconds = plan.get("throughput", {}).get("stepSeconds") or 0
    interval = plan.get("checkpoints", {}).get("intervalMinutes") or 30
    steps = max(1, int(plan.get("time", {}).get("steps") or 1))
    return RunConfig(
        source=source,
        model=ModelShape(
            layers=m["layers"], hidden=m["hidden"], heads=m["heads"], kv_heads=m["kvHeads"], ffn=m["ffn"],
            vocab=m["vocab"], max_positions=m["maxPositions"], mlp=m["mlp"], norm=m["norm"],
            positions=m["positions"], tied=m["tiedEmbeddings"], bias=m.get("bias", "none") != "none",
        ),
        seq=s["seq"],
        micro_batch=s["microBatch"],
        grad_accum=s["gradAccum"],
        precision=s["precision"],
        grad_ckpt=s["gradCheckpointing"],
        compile=s["compile"]["enabled"],
        compile_mode=s["compile"]["mode"],
        attention=s["attention"],
        tf32=s["tf32"],
        cudnn_benchmark=s["cudnnBenchmark"],
        threads=s["threads"],
        device="cuda" if s["device"] == "rocm" else s["device"],
        strategy=strategy_of(s),
        offload=s["offload"],
        learning_rate=s["learningRate"],
        fused_optimizer=s["fusedOptimizer"],
        max_steps=steps,
        save_every=max(1, math.ceil(interval * 60 / step_seconds)) if step_seconds > 0 else steps,
        keep=plan.get("checkpoints", {}).get("kept", 3),
        output_dir=f"checkpoints/rigfit-{plan.get('mode', 'run')}",
        attempt=0,
        predicted_tokens_per_s=plan.get("throughput", {}).get("tokensPerSecond"),
        predicted_peak_allocated=plan.get("memory", {}).get("perDevice", {}).get("peakAllocated"),
        method=s.get("method", "full"),
        lora=lora_from_plan(s, source),
        quant=s.get("quant", "none"),
        world_size=max(int(s.get("gpus", 0)), 1) * int(s.get("nodes", 1)),
        **optimization_of(s, steps),
    )


def is_plan(data: Mapping[str, Any]) -> bool:
    return "settings" in data and "schemaVersion" in data


def load_config(path: str, env: Mapping[str, str] = os.environ) -> RunConfig:
    """A plan file, one of the exported configs, or an export folder holding one."""
    from rigfit_sources import load_export  # the exported formats; kept apart so this file stays the core

    p = Path(path)
    if not p.exists():
        raise PlanError(f"{p}: no such file")
    if not p.is_dir() and p.suffix == ".json":
        data = read_json(p)
        if is_plan(data):
            return from_plan(data, str(p))
    return load_export(p, env)


def _positive_int(env: Mapping[str, str], name: str, minimum: int = 1) -> Optional[int]:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise PlanError(f"{name}={raw!r} is not a whole number") from None
    if value < minimum:
        raise PlanError(f"{name}={raw!r} must be at least {minimum}")
    return value


def apply_env(config: RunConfig, env: Mapping[str, str] = os.environ) -> RunConfig:
    """Applies the monitor's RIGFIT_* overrides; a bad value is an error, never silently ignored."""
    changes: dict = {}
    micro = _positive_int(env, "RIGFIT_MICRO_BATCH")
    if micro is not None:
        changes["micro_batch"] = micro
    accum = _positive_int(env, "RIGFIT_GRAD_ACCUM")
    if accum is not None:
        changes["grad_accum"] = accum
    ckpt = env.get("RIGFIT_GRAD_CKPT")
    if ckpt not in (None, ""):
        if ckpt not in ("0", "1"):
            raise PlanError(f"RIGFIT_GRAD_CKPT={ckpt!r} must be 0 or 1")
        changes["grad_ckpt"] = ckpt == "1"
    precision = env.get("RIGFIT_PRECISION")
    if precision not in (None, ""):
        if precision not in PRECISIONS:
            raise PlanError(f"RIGFIT_PRECISION={precision!r} must be one of {', '.join(PRECISIONS)}")
        changes["precision"] = precision
    device = env.get("RIGFIT_DEVICE")
    if device not in (None, ""):
        if device not in DEVICES:
            raise PlanError(f"RIGFIT_DEVICE={device!r} must be one of {', '.join(DEVICES)}")
        changes["device"] = "cuda" if device == "rocm" else device
    attempt = _positive_int(env, "RIGFIT_ATTEMPT", minimum=0)
    if attempt is not None:
        changes["attempt"] = attempt
    return replace(config, **changes)


def _plan_beside(deepspeed_config: Optional[str]) -> Optional[str]:
    """The plan of a DeepSpeed export, beside the config its launcher passes: DeepSpeed's multi-node runner does
    not forward RIGFIT_PLAN_FILE to the other nodes, but every rank gets --deepspeed_config."""
    if not deepspeed_config:
        return None
    beside = Path(deepspeed_config).parent / "rigfit-plan.json"
    return str(beside) if beside.is_file() else None


def resolve(
    path: Optional[str], env: Mapping[str, str] = os.environ, deepspeed_config: Optional[str] = None
) -> RunConfig:
    """The run's settings: --plan, else RIGFIT_PLAN_FILE; then the launcher's configs and the environment."""
    from rigfit_sources import apply_launcher

    chosen = path or env.get("RIGFIT_PLAN_FILE") or _plan_beside(deepspeed_config)
    if not chosen:
        raise PlanError("no plan: pass --plan FILE (a rigfit plan or an export) or set RIGFIT_PLAN_FILE")
    return apply_env(apply_launcher(load_config(chosen, env), env, deepspeed_config), env)
