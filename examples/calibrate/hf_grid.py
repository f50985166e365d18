"""The Hugging Face stack's calibration grid: Transformers models from config, full and LoRA, through the Trainer.

Each configuration trains in a fresh process (`hf_stack.py --config`), so its CUDA context and peak counters start
from zero, and becomes rows of rigfit's validation dataset (packages/core/validation/*.jsonl) for the stack
`hf@<Transformers release>`. Rows state only what a user types (sequence, micro-batch, accumulation, precision,
checkpointing, LoRA, `optim adamw_torch`); the attention kernel and loss are the Trainer's defaults.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import torch
import transformers

from hf_stack import versions

HERE = os.path.dirname(os.path.abspath(__file__))

GPT2_SMALL = dict(modelType="gpt2", layers=12, hidden=768, heads=12, kvHeads=12, ffn=3072, vocab=50257,
                  maxPositions=1024, tiedEmbeddings=True, attentionDropout=0.1, hiddenDropout=0.1)
# TinyLlama 1.1B's layout.
LLAMA_1B = dict(modelType="llama", layers=22, hidden=2048, heads=32, kvHeads=4, ffn=5632, vocab=32000,
                maxPositions=2048, tiedEmbeddings=False)
# Llama 3.2 3B's layout: Llama 3's 128K vocabulary, tied embeddings.
LLAMA_3B = dict(modelType="llama", layers=28, hidden=3072, heads=24, kvHeads=8, ffn=8192, vocab=128256,
                maxPositions=8192, tiedEmbeddings=True)
# Qwen2.5 0.5B's layout: a 152K vocabulary on a 896-wide model, biases on q, k and v.
QWEN_05B = dict(modelType="qwen2", layers=24, hidden=896, heads=14, kvHeads=2, ffn=4864, vocab=151936,
                maxPositions=8192, tiedEmbeddings=True)
# A small Mixtral layout: eight experts, two per token, run by Transformers' own expert loop.
MIXTRAL_SMALL = dict(modelType="mixtral", layers=8, hidden=1024, heads=16, kvHeads=8, ffn=3584, vocab=32000,
                     maxPositions=4096, tiedEmbeddings=False, experts={"count": 8, "topK": 2})
QKVO = {"rank": 16, "targets": ["q", "k", "v", "o"], "dropout": 0.05}
ALL_LINEAR = {"rank": 16, "targets": ["q", "k", "v", "o", "gate", "up", "down"], "dropout": 0.05}


def grid() -> list[tuple[str, dict, dict]]:
    """The configurations, the most telling first: a time limit cuts the end of the list."""
    base = dict(device="cuda", gradAccum=1, gradCheckpointing=False, precision="bf16-mixed", method="full", lora=None)
    lora = dict(base, method="lora")
    return [
        ("gpt2-s1024-b8", GPT2_SMALL, dict(base, seq=1024, microBatch=8)),
        ("llama1b-s2048-b4-lora", LLAMA_1B, dict(lora, seq=2048, microBatch=4, lora=QKVO)),
        ("llama1b-s2048-b4", LLAMA_1B, dict(base, seq=2048, microBatch=4)),
        ("gpt2-s1024-b8-lora", GPT2_SMALL, dict(lora, seq=1024, microBatch=8, lora=QKVO)),
        ("llama3b-s2048-b4-lora-all-ckpt", LLAMA_3B, dict(lora, seq=2048, microBatch=4, lora=ALL_LINEAR, gradCheckpointing=True)),
        ("qwen05b-s2048-b8-lora-all", QWEN_05B, dict(lora, seq=2048, microBatch=8, lora=ALL_LINEAR)),
        ("mixtral-small-s2048-b4", MIXTRAL_SMALL, dict(base, seq=2048, microBatch=4)),
        ("llama1b-s2048-b4-ckpt", LLAMA_1B, dict(base, seq=2048, microBatch=4, gradCheckpointing=True)),
        ("llama1b-s2048-b4-bf16", LLAMA_1B, dict(base, seq=2048, microBatch=4, precision="bf16-true")),
        ("gpt2-s1024-b8-fp32", GPT2_SMALL, dict(base, seq=1024, microBatch=8, precision="fp32")),
        ("gpt2-s1024-b2-accum4", GPT2_SMALL, dict(base, seq=1024, microBatch=2, gradAccum=4)),
        ("llama1b-s8192-b1-lora-ckpt", LLAMA_1B, dict(lora, seq=8192, microBatch=1, lora=QKVO, gradCheckpointing=True)),
        ("llama3b-s2048-b4-bf16-ckpt", LLAMA_3B, dict(base, seq=2048, microBatch=4, precision="bf16-true", gradCheckpointing=True)),
        ("llama1b-s2048-b2-lora-fp16", LLAMA_1B, dict(lora, seq=2048, microBatch=2, lora=QKVO, precision="fp16-mixed")),
        ("mixtral-small-s2048-b4-lora", MIXTRAL_SMALL, dict(lora, seq=2048, microBatch=4, lora=QKVO)),
    ]


def hf_config_json(model: dict) -> dict:
    """The model as a config.json's shape fields, which rigfit reads with its model_type's defaults."""
    if model["modelType"] == "gpt2":
        return {"model_type": "gpt2", "n_embd": model["hidden"], "n_layer": model["layers"], "n_head": model["heads"],
                "n_inner": model["ffn"], "vocab_size": model["vocab"], "n_positions": model["maxPositions"],
                "attn_pdrop": model["attentionDropout"], "resid_pdrop": model["hiddenDropout"],
                "embd_pdrop": model["hiddenDropout"], "tie_word_embeddings": model["tiedEmbeddings"]}
    experts = model.get("experts")
    return {"model_type": model["modelType"], "hidden_size": model["hidden"], "num_hidden_layers": model["layers"],
            "num_attention_heads": model["heads"], "num_key_value_heads": model["kvHeads"],
            "intermediate_size": model["ffn"], "vocab_size": model["vocab"],
            "max_position_embeddings": model["maxPositions"], "tie_word_embeddings": model["tiedEmbeddings"],
            **({"num_local_experts": experts["count"], "num_experts_per_tok": experts["topK"]} if experts else {})}


def row_settings(settings: dict) -> dict:
    out = {key: settings[key] for key in ("seq", "microBatch", "gradAccum", "precision", "gradCheckpointing")}
    # hf_stack.py passes optim="adamw_torch" (the foreach step) unless a configuration asks for the fused one.
    out["fusedOptimizer"] = bool(settings.get("fusedOptimizer"))
    if settings["lora"]:
        out["lora"] = dict(settings["lora"])
    return out


def rows_for(name: str, model: dict, settings: dict, result: dict, gpu: dict) -> list[dict]:
    gpu_slug = "".join(c if c.isalnum() else "-" for c in gpu["name"].lower()).strip("-")
    release = ".".join(transformers.__version__.split(".")[:2])
    if "oom" in result:
        measured = [("oom", "GiB", gpu["vramGB"], f"torch.OutOfMemoryError on {gpu['vramGB']} GiB")]
    else:
        measured = [(metric, unit, result[metric], f"{result[metric]} {unit}")
                    for metric, unit in (("tokens_per_second", "tokens/s/device"), ("max_memory_allocated", "B"),
                                         ("max_memory_reserved", "B"))]
    return [{"id": f"hf-{gpu_slug}-{name}-{metric.replace('_', '-')}", "model": {"config": hf_config_json(model)},
             "settings": row_settings(settings), "gpu": gpu, "metric": metric, "value": value, "unit": unit,
             "origin": "calibrate",
             "source": {"id": f"calibrate-hf-{gpu_slug}", "title": "rigfit examples/calibrate/hf_stack.py",
                        "url": "file:examples/calibrate/hf_stack.py", "where": f"{gpu['name']}, {versions()}",
                        "says": f"{metric} = {shown} for {name}"},
             "stack": f"hf@{release}", "stackSays": f"{versions()}; optim adamw_torch (torch.optim.AdamW, foreach), the Trainer's default attn_implementation"}
            for metric, unit, value, shown in measured]


WARMUP_STEPS = 3


def run_one(model: dict, settings: dict, steps: int) -> dict:
    """One configuration in a fresh process (its own CUDA context and peak counters)."""
    payload = json.dumps({"model": model, "settings": settings})
    try:
        proc = subprocess.run([sys.executable, os.path.join(HERE, "hf_stack.py"), "--config", payload,
                               "--max-steps", str(steps)], capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        return {"error": "no result within 240 s"}
    # The Trainer prints its own summary as a Python dict ({'train_runtime': ...}): only JSON lines are steps.
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith('{"step"')]
    if proc.returncode != 0 or len(lines) <= WARMUP_STEPS:
        if "OutOfMemoryError" in proc.stderr or "CUDA out of memory" in proc.stderr:
            return {"oom": True}
        return {"error": "\n".join(proc.stderr.strip().splitlines()[-6:]) or f"exit {proc.returncode}, no output"}
    timed = lines[WARMUP_STEPS:]
    tokens = settings["microBatch"] * settings["gradAccum"] * settings["seq"]
    seconds = sum(tokens / line["tokens_per_second"] for line in timed)
    return {"tokens_per_second": round(tokens * len(timed) / seconds, 1),
            "max_memory_allocated": lines[-1]["max_memory_allocated"],
            "max_memory_reserved": lines[-1]["max_memory_reserved"]}


def measured_names(path: str) -> set[str]:
    """The configurations a file already holds: a second run with the same --out measures only the rest."""
    if not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as existing:
        return {json.loads(line)["source"]["says"].rsplit(" for ", 1)[-1] for line in existing if line.strip()}


def run_grid(out_path: str, time_limit: float, steps: int) -> int:
    if not torch.cuda.is_available():
        raise SystemExit("the grid measures a GPU: torch sees none")
    from calibrate import gpu_description  # the spec-sheet numbers rows carry, as calibrate.py writes them

    gpu = gpu_description(type("Args", (), {"fp16_tflops": None, "fp32_tflops": None, "bandwidth_gbs": None}))
    done = measured_names(out_path)
    start, failures = time.monotonic(), 0
    with open(out_path, "a", encoding="utf-8") as out:
        for name, model, settings in grid():
            if name in done:
                continue
            if time.monotonic() - start > time_limit:
                print(f"time limit: stopped before {name}", file=sys.stderr)
                break
            result = run_one(model, settings, steps)
            if "error" in result:
                failures += 1
                print(f"{name}: failed\n{result['error']}", file=sys.stderr)
                if failures == 2 and not done:
                    raise SystemExit("two configurations failed: the stack does not run here")
                continue
            for row in rows_for(name, model, settings, result, gpu):
                out.write(json.dumps(row) + "\n")
            out.flush()
            done.add(name)
            shown = "out of memory" if "oom" in result else f"{result['tokens_per_second']} tokens/s, " \
                f"{result['max_memory_allocated'] / 2**30:.2f} GiB allocated"
            print(f"{name}: {shown} ({time.monotonic() - start:.0f} s)", file=sys.stderr)
    return 0
