"""Reads a rigfit plan, or rigfit's `hf` export, into the settings train.py runs with.

Pure Python (no torch), so the monitor and tests can use it anywhere. The RIGFIT_* environment variables the
monitor sets on a restart override the file: RIGFIT_PLAN_FILE, RIGFIT_MICRO_BATCH, RIGFIT_GRAD_ACCUM,
RIGFIT_GRAD_CKPT (0/1), RIGFIT_PRECISION, RIGFIT_ATTEMPT.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Optional

PRECISIONS = ("fp32", "fp16-mixed", "bf16-mixed", "fp16-true", "bf16-true")
STRATEGIES = ("single", "ddp", "zero1", "zero2", "zero3", "fsdp", "cpu")


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
    strategy: str
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

    def to_json(self) -> dict:
        return asdict(self)


def warmup_for(steps: int) -> int:
    """2% of the run, at most 2000 steps, at least one (the rule the exporters use)."""
    return max(1, min(2000, round(steps * 0.02)))


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{path}: no such file") from None
    except json.JSONDecodeError as error:
        raise PlanError(f"{path}: not valid JSON ({error})") from None


def _need(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise PlanError(f"{where}: missing field {key}")
    return obj[key]


def from_plan(plan: dict, source: str) -> RunConfig:
    """A rigfit TrainingPlan (rigfit-plan.json, `rigfit plan --json`)."""
    s = _need(plan, "settings", source)
    m = _need(plan, "model", source)
    if m.get("kind") != "decoder":
        raise PlanError(f"{source}: model.kind {m.get('kind')!r}: this trainer trains decoder-only models")
    if m.get("positions") not in ("learned", "rope"):
        raise PlanError(f"{source}: model.positions {m.get('positions')!r} is not supported (learned or rope)")
    step_seconds = plan.get("throughput", {}).get("stepSeconds") or 0
    interval = plan.get("checkpoints", {}).get("intervalMinutes") or 30
    steps = max(1, int(plan.get("time", {}).get("steps") or 1))
    strategy = s["strategy"] if s["strategy"] != "zero" else s["sharding"]
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
        strategy="single" if strategy == "model-split" else strategy,
        offload=s["offload"],
        learning_rate=s["learningRate"],
        fused_optimizer=s["fusedOptimizer"],
        warmup_steps=warmup_for(steps),
        max_steps=steps,
        save_every=max(1, math.ceil(interval * 60 / step_seconds)) if step_seconds > 0 else steps,
        keep=plan.get("checkpoints", {}).get("kept", 3),
        output_dir=f"checkpoints/rigfit-{plan.get('mode', 'run')}",
        attempt=0,
        predicted_tokens_per_s=plan.get("throughput", {}).get("tokensPerSecond"),
        predicted_peak_allocated=plan.get("memory", {}).get("perDevice", {}).get("peakAllocated"),
    )


def _shape_from_hf_config(config: dict, where: str) -> ModelShape:
    kind = config.get("model_type")
    if kind == "gpt2":
        return ModelShape(
            layers=config["n_layer"], hidden=config["n_embd"], heads=config["n_head"], kv_heads=config["n_head"],
            ffn=config.get("n_inner") or 4 * config["n_embd"], vocab=config["vocab_size"],
            max_positions=config["n_positions"], mlp="gelu", norm="layernorm", positions="learned",
            tied=config.get("tie_word_embeddings", True), bias=True,
        )
    if kind == "llama":
        return ModelShape(
            layers=config["num_hidden_layers"], hidden=config["hidden_size"], heads=config["num_attention_heads"],
            kv_heads=config.get("num_key_value_heads", config["num_attention_heads"]), ffn=config["intermediate_size"],
            vocab=config["vocab_size"], max_positions=config["max_position_embeddings"], mlp="swiglu", norm="rmsnorm",
            positions="rope", tied=config.get("tie_word_embeddings", False), bias=config.get("attention_bias", False),
        )
    raise PlanError(f"{where}: model_type {kind!r} is not supported (gpt2 or llama)")


def from_hf(args: dict, source: str, model_config: Optional[dict], ds_config: Optional[dict] = None) -> RunConfig:
    """rigfit's `hf` export: training_args.json plus the config.json written beside it."""
    if model_config is None:
        raise PlanError(f"{source}: needs config.json beside it (the hf export writes one for generated models)")
    shape = _shape_from_hf_config(model_config, source)
    if args.get("bf16") and args.get("fp16"):
        raise PlanError(f"{source}: bf16 and fp16 are both true")
    precision = "bf16-mixed" if args.get("bf16") else "fp16-mixed" if args.get("fp16") else "fp32"
    steps = max(1, int(args.get("max_steps", 1)))
    strategy = "fsdp" if args.get("fsdp") else "single"
    if args.get("deepspeed"):
        if ds_config is None:
            raise PlanError(f"{source}: names DeepSpeed config {args['deepspeed']!r}, which is not beside it")
        stage = int(ds_config.get("zero_optimization", {}).get("stage", 0))
        strategy = f"zero{stage}" if stage > 0 else "ddp"
    return RunConfig(
        source=source,
        model=shape,
        seq=shape.max_positions,
        micro_batch=int(_need(args, "per_device_train_batch_size", source)),
        grad_accum=int(args.get("gradient_accumulation_steps", 1)),
        precision=precision,
        grad_ckpt=bool(args.get("gradient_checkpointing", False)),
        compile=bool(args.get("torch_compile", False)),
        compile_mode=args.get("torch_compile_mode") or "default",
        attention="sdpa",
        tf32=bool(args.get("tf32", False)),
        cudnn_benchmark=True,
        threads=max(1, os.cpu_count() or 1),
        device="cpu" if args.get("use_cpu") else "cuda",
        strategy=strategy,
        offload="optimizer" if "offload" in str(args.get("fsdp", "")) else "none",
        learning_rate=float(args.get("learning_rate", 5e-5)),
        fused_optimizer=args.get("optim") == "adamw_torch_fused",
        warmup_steps=int(args.get("warmup_steps", warmup_for(steps))),
        max_steps=steps,
        save_every=max(1, int(args.get("save_steps", 500))),
        keep=int(args.get("save_total_limit") or 3),
        output_dir=args.get("output_dir", "checkpoints/rigfit"),
        attempt=0,
        predicted_tokens_per_s=None,
        predicted_peak_allocated=None,
    )


def load_config(path: str) -> RunConfig:
    """A plan file, an hf training_args.json, or an export directory holding either."""
    p = Path(path)
    if p.is_dir():
        for name in ("rigfit-plan.json", "training_args.json"):
            if (p / name).is_file():
                return load_config(str(p / name))
        raise PlanError(f"{p}: holds neither rigfit-plan.json nor training_args.json")
    data = _read_json(p)
    if "settings" in data and "schemaVersion" in data:
        return from_plan(data, str(p))
    if "per_device_train_batch_size" in data:
        config = p.parent / "config.json"
        ds = p.parent / str(data.get("deepspeed") or "ds_config.json")
        return from_hf(
            data,
            str(p),
            _read_json(config) if config.is_file() else None,
            _read_json(ds) if data.get("deepspeed") and ds.is_file() else None,
        )
    raise PlanError(f"{p}: neither a rigfit plan nor HF TrainingArguments JSON")


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
    attempt = _positive_int(env, "RIGFIT_ATTEMPT", minimum=0)
    if attempt is not None:
        changes["attempt"] = attempt
    return replace(config, **changes)


def resolve(path: Optional[str], env: Mapping[str, str] = os.environ) -> RunConfig:
    """The run's settings: --plan, else RIGFIT_PLAN_FILE, with the environment overrides applied."""
    chosen = path or env.get("RIGFIT_PLAN_FILE")
    if not chosen:
        raise PlanError("no plan: pass --plan FILE (a rigfit plan or an hf export) or set RIGFIT_PLAN_FILE")
    return apply_env(load_config(chosen), env)
