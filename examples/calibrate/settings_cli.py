"""The command line the CPU measuring scripts share: a block's shape and training settings as flags, or a JSON
array of such settings objects with --configs, measured in one process and printed as JSON."""

from __future__ import annotations

import argparse
import json
from typing import Callable

from decoder import Config


def shape_parser(description: str) -> argparse.ArgumentParser:
    """A parser with --configs and the flags every measurement takes: the block's shape, precision and adapters."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--configs", help="a JSON array of settings objects (keys as the flags, with underscores); - reads standard input")
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--heads", type=int)
    parser.add_argument("--kv-heads", type=int)
    parser.add_argument("--seq", type=int)
    parser.add_argument("--micro-batch", type=int, default=1)
    parser.add_argument("--lora-rank", type=int, default=0)
    parser.add_argument("--lora-targets", default="q,v")
    parser.add_argument("--adapter-dtype", choices=["model", "fp32"], default="model")
    parser.add_argument("--experts", type=int, default=0, help="a Mixtral-style mixture of this many experts")
    parser.add_argument("--top-k", type=int, default=2, help="experts per token")
    return parser


REQUIRED = ("hidden", "heads", "kv_heads", "seq")


def read_configs(parser: argparse.ArgumentParser, path: str) -> list:
    """The settings objects of --configs, or an error naming the file and the entry at fault."""
    name = "standard input" if path == "-" else path
    try:
        with open(0 if path == "-" else path) as source:
            configs = json.load(source)
    except OSError as error:
        parser.error(f"--configs {name}: {error.strerror}")
    except json.JSONDecodeError as error:
        parser.error(f"--configs {name}: not JSON ({error.msg}, line {error.lineno}); give a JSON array of settings objects")
    if not isinstance(configs, list):
        parser.error(f"--configs {name}: a JSON array of settings objects is needed, not {type(configs).__name__}")
    for index, settings in enumerate(configs):
        missing = [key for key in REQUIRED if not isinstance(settings, dict) or key not in settings]
        if missing:
            parser.error(f"--configs {name}: entry {index} needs " + ", ".join(missing))
    return configs


def run(parser: argparse.ArgumentParser, measured: Callable[[dict], dict]) -> None:
    """Measures the flags' configuration, or every one --configs lists, and prints the JSON result."""
    args = parser.parse_args()
    if args.configs:
        print(json.dumps([measured(settings) for settings in read_configs(parser, args.configs)]))
        return
    missing = [flag for flag in REQUIRED if getattr(args, flag) is None]
    if missing:
        parser.error("needs " + ", ".join("--" + flag.replace("_", "-") for flag in missing) + " (or --configs FILE)")
    settings = {key: value for key, value in vars(args).items() if key != "configs"}
    print(json.dumps(measured(settings)))


def config_from(settings: dict, **fixed) -> Config:
    """A Config from flag-style settings (underscored flag names), defaults filled in; `fixed` overrides settings."""
    settings = {**settings, **fixed}
    return Config(
        family=settings.get("family", "llama"),
        hidden=settings["hidden"],
        layers=settings.get("layers", 2),
        heads=settings["heads"],
        kv_heads=settings["kv_heads"],
        vocab=settings.get("vocab", 1024),
        seq=settings["seq"],
        microBatch=settings.get("micro_batch", 1),
        precision=settings.get("precision", "bf16-true"),
        optimizer=settings.get("optimizer", "adamw"),
        # On a CPU PyTorch's AdamW steps one tensor at a time unless told otherwise.
        optimizerImpl=settings.get("optimizer_impl", "per-tensor"),
        gradCheckpointing=settings.get("grad_checkpointing", False),
        gradAccum=settings.get("grad_accum", 1),
        # Eager attention: PyTorch builds before 2.0 have no fused scaled_dot_product_attention.
        attention=settings.get("attention", "eager"),
        lora_rank=settings.get("lora_rank", 0),
        lora_targets=settings.get("lora_targets", "q,v").split(","),
        adapter_dtype=settings.get("adapter_dtype", "model"),
        experts=settings.get("experts", 0),
        top_k=settings.get("top_k", 2),
    )
