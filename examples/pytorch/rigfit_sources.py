"""rigfit's exported configs, read into the trainer's RunConfig (pure Python, no torch).

Stand-alone sources carry the whole run: the `hf` export (training_args.json with config.json, model_args.json and
adapter_config.json beside it), the Lightning config (lightning_config.yaml) and the `pytorch` settings module
(rigfit_settings.py). Refining sources change a plan found beside them or in RIGFIT_PLAN_FILE: the DeepSpeed config
(ds_config.json) and the accelerate config (accelerate_config.yaml). Launchers add their own: the DeepSpeed config
they name and the variables `accelerate launch` sets. Nothing is downloaded: a model named only by a hub id needs
its config.json on disk or a plan beside it.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Optional

from rigfit_plan import (
    LORA_TARGETS,
    LoraShape,
    ModelShape,
    PlanError,
    RunConfig,
    from_plan,
    is_plan,
    need,
    read_json,
    warmup_for,
)

STANDALONE = ("training_args.json", "lightning_config.yaml", "rigfit_settings.py")
REFINING = ("accelerate_config.yaml", "ds_config.json")

# Hugging Face module names (PEFT target_modules) -> rigfit's LoRA targets; fused projections adapt several.
HF_MODULES = {
    "q_proj": ("q",), "k_proj": ("k",), "v_proj": ("v",), "o_proj": ("o",), "qkv_proj": ("q", "k", "v"),
    "gate_proj": ("gate",), "up_proj": ("up",), "down_proj": ("down",), "gate_up_proj": ("gate", "up"),
    "c_attn": ("q", "k", "v"), "attn.c_proj": ("o",), "mlp.c_fc": ("up",), "mlp.c_proj": ("down",),
    "query_key_value": ("q", "k", "v"), "attention.dense": ("o",), "dense_h_to_4h": ("up",),
    "dense_4h_to_h": ("down",), "w1": ("gate",), "w3": ("up",), "w2": ("down",), "fc1": ("up",), "fc2": ("down",),
    "query": ("q",), "key": ("k",), "value": ("v",), "dense": ("o",),
}
MIXED = {"no": "fp32", "fp16": "fp16-mixed", "bf16": "bf16-mixed"}
# accelerate's FSDP sharding strategies (names, or the numbers older releases wrote) -> the trainer's strategy.
FSDP_SHARDING = {"FULL_SHARD": "fsdp", "1": "fsdp", "SHARD_GRAD_OP": "zero2", "2": "zero2", "NO_SHARD": "ddp",
                 "3": "ddp", "HYBRID_SHARD": "fsdp", "4": "fsdp", "HYBRID_SHARD_ZERO2": "zero2", "5": "zero2"}


def read_yaml(path: Path) -> dict:
    try:
        import yaml
    except ImportError:
        raise PlanError(f"{path}: reading YAML needs PyYAML (pip install pyyaml; accelerate and lightning bring it)") from None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise PlanError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(data, dict):
        raise PlanError(f"{path}: expected a mapping at the top")
    return data


def shape_from_hf_config(config: dict, where: str) -> ModelShape:
    kind = config.get("model_type")
    if kind == "gpt2":
        return ModelShape(
            layers=config["n_layer"], hidden=config["n_embd"], heads=config["n_head"], kv_heads=config["n_head"],
            ffn=config.get("n_inner") or 4 * config["n_embd"], vocab=config["vocab_size"],
            max_positions=config["n_positions"], mlp="gelu", norm="layernorm", positions="learned",
            tied=config.get("tie_word_embeddings", True), bias=True,
        )
    if kind in ("llama", "mistral", "qwen2"):
        return ModelShape(
            layers=config["num_hidden_layers"], hidden=config["hidden_size"], heads=config["num_attention_heads"],
            kv_heads=config.get("num_key_value_heads") or config["num_attention_heads"],
            ffn=config["intermediate_size"], vocab=config["vocab_size"], max_positions=config["max_position_embeddings"],
            mlp="swiglu", norm="rmsnorm", positions="rope", tied=config.get("tie_word_embeddings", False),
            bias=config.get("attention_bias", False),
        )
    raise PlanError(f"{where}: model_type {kind!r} is not supported (gpt2, llama, mistral or qwen2)")


def base_plan(path: Path, env: Mapping[str, str]) -> Optional[RunConfig]:
    """The plan a refining or model-less source goes with: rigfit-plan.json beside it, else RIGFIT_PLAN_FILE."""
    for candidate in (path.parent / "rigfit-plan.json", Path(env.get("RIGFIT_PLAN_FILE") or "")):
        if candidate.name and candidate.is_file() and candidate.resolve() != path.resolve():
            data = read_json(candidate)
            if is_plan(data):
                return from_plan(data, str(candidate))
    return None


def need_plan(path: Path, env: Mapping[str, str], what: str) -> RunConfig:
    plan = base_plan(path, env)
    if plan is None:
        raise PlanError(f"{path}: {what} names no model or sequence; put rigfit-plan.json beside it or set RIGFIT_PLAN_FILE")
    return plan


def model_shape(path: Path, model_ref: Optional[str], env: Mapping[str, str]) -> ModelShape:
    """config.json beside the file, else the local model it names, else the plan's model."""
    candidates = [path.parent / "config.json"]
    if model_ref:
        ref = Path(model_ref) if Path(model_ref).is_absolute() else path.parent / model_ref
        candidates += [ref, ref / "config.json", Path(model_ref), Path(model_ref) / "config.json"]
    for candidate in candidates:
        if candidate.is_file() and candidate.suffix == ".json":
            return shape_from_hf_config(read_json(candidate), str(candidate))
    plan = base_plan(path, env)
    if plan is not None:
        return plan.model
    named = f"model {model_ref!r}" if model_ref else "no model"
    raise PlanError(f"{path}: {named} and no config.json beside it; this trainer downloads nothing: "
                    "put the model's config.json beside it, or rigfit-plan.json (or set RIGFIT_PLAN_FILE)")


def defaults(shape: ModelShape, source: str) -> RunConfig:
    """What a source that states only some settings starts from: one process, fp32, the model's full context."""
    return RunConfig(
        source=source, model=shape, seq=shape.max_positions, micro_batch=1, grad_accum=1, precision="fp32",
        grad_ckpt=False, compile=False, compile_mode="default", attention="sdpa", tf32=False, cudnn_benchmark=True,
        threads=max(1, os.cpu_count() or 1), device="cuda", strategy="single", offload="none", learning_rate=5e-5,
        fused_optimizer=False, warmup_steps=1, max_steps=1000, save_every=500, keep=3,
        output_dir="checkpoints/rigfit", attempt=0, predicted_tokens_per_s=None, predicted_peak_allocated=None,
    )


def lora_from_adapter(adapter: dict, where: str) -> LoraShape:
    modules = adapter.get("target_modules") or []
    names = [modules] if isinstance(modules, str) else list(modules)
    targets = []
    for name in names:
        for hf, ours in HF_MODULES.items():
            if name == hf or name.endswith("." + hf) or (isinstance(modules, str) and re.search(re.escape(hf), name)):
                targets += [t for t in ours if t not in targets]
    if not targets:
        raise PlanError(f"{where}: target_modules {modules!r} names no projection this trainer has ({', '.join(HF_MODULES)})")
    rank = int(need(adapter, "r", where))
    return LoraShape(rank=rank, alpha=float(adapter.get("lora_alpha", 2 * rank)),
                     dropout=float(adapter.get("lora_dropout") or 0.0), targets=tuple(t for t in LORA_TARGETS if t in targets))


def adapter_beside(path: Path, name: Optional[str] = "adapter_config.json") -> Optional[LoraShape]:
    adapter = path.parent / (name or "adapter_config.json")
    return lora_from_adapter(read_json(adapter), str(adapter)) if adapter.is_file() else None


def quant_beside(path: Path, name: Optional[str] = "quantization_config.json") -> str:
    file = path.parent / (name or "quantization_config.json")
    if not file.is_file():
        return "none"
    q = read_json(file)
    return "int8" if q.get("load_in_8bit") else str(q.get("bnb_4bit_quant_type") or "nf4") if q.get("load_in_4bit") else "none"


def with_method(cfg: RunConfig, lora: Optional[LoraShape], quant: str) -> RunConfig:
    if lora is None:
        return cfg
    return replace(cfg, lora=lora, quant=quant, method="qlora" if quant != "none" else "lora")


def autocast_precision(planned: str, mixed_precision: str) -> str:
    """accelerate's mixed_precision switches autocast: `no` keeps a pure-half plan's half weights (the plan's
    own precision), and means fp32 otherwise."""
    if mixed_precision == "no" and planned.endswith("-true"):
        return planned
    return MIXED[mixed_precision]


def hf_precision(args: dict, model_args: dict) -> str:
    """TrainingArguments' bf16/fp16 switch autocast over fp32 weights; with both off, weights loaded in a half
    type (model_args.json's dtype, no adapter) train in pure half."""
    if args.get("bf16"):
        return "bf16-mixed"
    if args.get("fp16"):
        return "fp16-mixed"
    return {"bfloat16": "bf16-true", "float16": "fp16-true"}.get(str(model_args.get("dtype")), "fp32")


def from_hf(args: dict, path: Path, env: Mapping[str, str]) -> RunConfig:
    """rigfit's `hf` export: training_args.json with config.json (or the model it names), model_args.json and
    adapter_config.json beside it, and the DeepSpeed config its `deepspeed` field names."""
    source = str(path)
    model_args = read_json(path.parent / "model_args.json") if (path.parent / "model_args.json").is_file() else {}
    shape = model_shape(path, model_args.get("model_name_or_path"), env)
    if args.get("bf16") and args.get("fp16"):
        raise PlanError(f"{source}: bf16 and fp16 are both true")
    steps = max(1, int(args.get("max_steps", 1)))
    cfg = replace(
        defaults(shape, source),
        # model_args.json states the sequence (run_clm's block_size); the model's positions are only its limit.
        seq=int(model_args.get("block_size") or shape.max_positions),
        micro_batch=int(need(args, "per_device_train_batch_size", source)),
        grad_accum=int(args.get("gradient_accumulation_steps", 1)),
        precision=hf_precision(args, model_args),
        grad_ckpt=bool(args.get("gradient_checkpointing", False)),
        compile=bool(args.get("torch_compile", False)),
        compile_mode=args.get("torch_compile_mode") or "default",
        tf32=bool(args.get("tf32", False)),
        device="cpu" if args.get("use_cpu") else "cuda",
        strategy="fsdp" if args.get("fsdp") else "single",
        offload="optimizer" if "offload" in str(args.get("fsdp", "")) else "none",
        learning_rate=float(args.get("learning_rate", 5e-5)),
        fused_optimizer=args.get("optim") == "adamw_torch_fused",
        warmup_steps=int(args.get("warmup_steps", warmup_for(steps))),
        adam_betas=(float(args.get("adam_beta1", 0.9)), float(args.get("adam_beta2", 0.999))),
        adam_epsilon=float(args.get("adam_epsilon", 1e-8)),
        weight_decay=float(args.get("weight_decay", 0.0)),
        max_steps=steps,
        save_every=max(1, int(args.get("save_steps", 500))),
        keep=int(args.get("save_total_limit") or 3),
        output_dir=args.get("output_dir", "checkpoints/rigfit"),
        grad_clip=float(args.get("max_grad_norm", 1.0)),
    )
    cfg = with_method(cfg, adapter_beside(path), quant_beside(path))
    if args.get("deepspeed"):
        ds = path.parent / str(args["deepspeed"])
        if not ds.is_file():
            raise PlanError(f"{source}: names DeepSpeed config {args['deepspeed']!r}, which is not beside it")
        cfg = with_deepspeed(cfg, read_json(ds), str(ds))
    return cfg


def as_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None  # "auto" and the like: unset


def with_deepspeed(cfg: RunConfig, ds: dict, where: str) -> RunConfig:
    """A DeepSpeed config's batch, precision, ZeRO stage, offload, clipping, learning rate and schedule."""
    changes: dict = {"deepspeed_config": where}
    if as_int(ds.get("train_micro_batch_size_per_gpu")):
        changes["micro_batch"] = ds["train_micro_batch_size_per_gpu"]
    if as_int(ds.get("gradient_accumulation_steps")):
        changes["grad_accum"] = ds["gradient_accumulation_steps"]
    bf16, fp16 = ds.get("bf16", {}).get("enabled"), ds.get("fp16", {}).get("enabled")
    if bf16 is True:
        changes["precision"] = "bf16-mixed"
    elif fp16 is True:
        changes["precision"] = "fp16-mixed"
    elif bf16 is False and fp16 in (False, None):
        changes["precision"] = "fp32"
    zero = ds.get("zero_optimization", {})
    if "stage" in zero:
        stage = int(zero["stage"])
        changes["strategy"] = f"zero{stage}" if stage > 0 else "ddp"
    offload_params = zero.get("offload_param", {}).get("device") in ("cpu", "nvme")
    offload_optim = zero.get("offload_optimizer", {}).get("device") in ("cpu", "nvme")
    if offload_params or offload_optim:
        changes["offload"] = "all" if offload_params else "optimizer"
    if isinstance(ds.get("gradient_clipping"), (int, float)):
        changes["grad_clip"] = float(ds["gradient_clipping"])
    params = ds.get("optimizer", {}).get("params", {})
    if isinstance(params.get("lr"), (int, float)):
        changes["learning_rate"] = float(params["lr"])
    betas = params.get("betas")
    if isinstance(betas, list) and len(betas) == 2:
        changes["adam_betas"] = (float(betas[0]), float(betas[1]))
    if isinstance(params.get("weight_decay"), (int, float)):
        changes["weight_decay"] = float(params["weight_decay"])
    if isinstance(params.get("eps"), (int, float)):
        changes["adam_epsilon"] = float(params["eps"])
    schedule = ds.get("scheduler", {}).get("params", {})
    if as_int(schedule.get("total_num_steps")):
        changes["max_steps"] = schedule["total_num_steps"]
    if as_int(schedule.get("warmup_num_steps")):
        changes["warmup_steps"] = schedule["warmup_num_steps"]
    return replace(cfg, **changes)


def with_accelerate(cfg: RunConfig, acc: Mapping[str, Any], where: str) -> RunConfig:
    """accelerate_config.yaml: precision, the distributed type and its ZeRO/FSDP settings, the CPU, compilation."""
    changes: dict = {}
    if acc.get("mixed_precision") in MIXED:
        changes["precision"] = autocast_precision(cfg.precision, acc["mixed_precision"])
    kind = acc.get("distributed_type")
    if kind in ("MULTI_GPU", "MULTI_CPU"):
        changes["strategy"] = "ddp"
    elif kind == "FSDP":
        fsdp = acc.get("fsdp_config") or {}
        changes["strategy"] = FSDP_SHARDING.get(str(fsdp.get("fsdp_sharding_strategy", "FULL_SHARD")), "fsdp")
        if fsdp.get("fsdp_offload_params"):
            changes["offload"] = "all"
        if fsdp.get("fsdp_activation_checkpointing"):
            changes["grad_ckpt"] = True
    elif kind == "DEEPSPEED":
        ds = acc.get("deepspeed_config") or {}
        if ds.get("deepspeed_config_file"):
            cfg = with_deepspeed(cfg, read_json(Path(where).parent / ds["deepspeed_config_file"]), ds["deepspeed_config_file"])
        if "zero_stage" in ds:
            changes["strategy"] = f"zero{int(ds['zero_stage'])}" if int(ds["zero_stage"]) > 0 else "ddp"
        if as_int(ds.get("gradient_accumulation_steps")):
            changes["grad_accum"] = ds["gradient_accumulation_steps"]
    if acc.get("use_cpu"):
        changes["device"] = "cpu"
    if isinstance(acc.get("num_processes"), int):
        changes["world_size"] = acc["num_processes"]
    dynamo = (acc.get("dynamo_config") or {}).get("dynamo_backend")
    if dynamo is not None:
        changes["compile"] = str(dynamo).upper() not in ("NO", "")
    return replace(cfg, **changes)


def load_export(path: Path, env: Mapping[str, str]) -> RunConfig:
    """An exported file or folder (rigfit_plan.load_config has already taken plan files)."""
    if path.is_dir():
        if (path / "rigfit-plan.json").is_file():
            cfg = from_plan(read_json(path / "rigfit-plan.json"), str(path / "rigfit-plan.json"))
            for name in REFINING:  # the launcher configs exported beside the plan
                if (path / name).is_file():
                    cfg = refine(cfg, path / name)
            return cfg
        for name in STANDALONE + REFINING:
            if (path / name).is_file():
                return load_export(path / name, env)
        raise PlanError(f"{path}: holds no rigfit-plan.json, {', '.join(STANDALONE + REFINING)}")
    if path.suffix == ".json":
        data = read_json(path)
        if "per_device_train_batch_size" in data:
            return from_hf(data, path, env)
        if "train_micro_batch_size_per_gpu" in data or "zero_optimization" in data:
            return with_deepspeed(need_plan(path, env, "a DeepSpeed config"), data, str(path))
        raise PlanError(f"{path}: neither a rigfit plan, HF TrainingArguments JSON nor a DeepSpeed config")
    if path.suffix in (".yaml", ".yml"):
        data = read_yaml(path)
        if "trainer" in data:
            from rigfit_frameworks import from_lightning

            return from_lightning(data, path, env)
        if "distributed_type" in data or "compute_environment" in data:
            return with_accelerate(need_plan(path, env, "an accelerate config"), data, str(path))
        raise PlanError(f"{path}: neither a Lightning config (trainer:) nor an accelerate config (distributed_type:)")
    if path.suffix == ".py":
        from rigfit_frameworks import from_settings_module

        return from_settings_module(path, env)
    raise PlanError(f"{path}: not a rigfit plan or export (rigfit-plan.json, {', '.join(STANDALONE + REFINING)})")


def refine(cfg: RunConfig, path: Path) -> RunConfig:
    if path.suffix == ".json":
        return with_deepspeed(cfg, read_json(path), str(path))
    return with_accelerate(cfg, read_yaml(path), str(path))


def apply_launcher(cfg: RunConfig, env: Mapping[str, str], deepspeed_config: Optional[str]) -> RunConfig:
    """What the launcher hands over: a DeepSpeed config (--deepspeed_config, RIGFIT_DEEPSPEED_CONFIG, accelerate's
    DeepSpeed file) and the settings `accelerate launch` passes in ACCELERATE_* and FSDP_* variables."""
    on = lambda name: env.get(name, "").lower() == "true"  # noqa: E731
    ds_path = deepspeed_config or env.get("RIGFIT_DEEPSPEED_CONFIG") or (
        env.get("ACCELERATE_DEEPSPEED_CONFIG_FILE") if on("ACCELERATE_USE_DEEPSPEED") else None)
    if ds_path:
        cfg = with_deepspeed(cfg, read_json(Path(ds_path)), ds_path)
    changes: dict = {}
    if env.get("ACCELERATE_MIXED_PRECISION") in MIXED:
        changes["precision"] = autocast_precision(cfg.precision, env["ACCELERATE_MIXED_PRECISION"])
    if on("ACCELERATE_USE_CPU"):
        changes["device"] = "cpu"
    if on("ACCELERATE_USE_FSDP"):
        changes["strategy"] = FSDP_SHARDING.get(env.get("FSDP_SHARDING_STRATEGY", "FULL_SHARD"), "fsdp")
    if on("ACCELERATE_USE_DEEPSPEED") and env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE", "").isdigit():
        stage = int(env["ACCELERATE_DEEPSPEED_ZERO_STAGE"])
        changes["strategy"] = f"zero{stage}" if stage > 0 else "ddp"
    if env.get("ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "").isdigit():
        changes["grad_accum"] = max(1, int(env["ACCELERATE_GRADIENT_ACCUMULATION_STEPS"]))
    return replace(cfg, **changes)
