#!/usr/bin/env python3
"""Measure training speed and memory through the Hugging Face stack: Transformers' Trainer, PEFT's LoRA.

Two uses:

  * `rigfit calibrate --stack hf` runs it on one plan: it builds the plan's model from its config with random
    weights (LlamaForCausalLM, GPT2LMHeadModel, or any architecture AutoModelForCausalLM knows; nothing is
    downloaded), wraps it in PEFT's LoRA when the plan trains adapters, and trains it with the Trainer's own loop
    at the plan's micro-batch, accumulation, precision and checkpointing, printing one JSON line per optimizer
    step in the keys `rigfit monitor` reads:
        python hf_stack.py --plan rigfit-plan.json --max-steps 1000
  * `--grid` measures a set of configurations, each in a fresh process, and writes rows of rigfit's validation
    dataset (packages/core/validation/*.jsonl) for the `hf` stack, as calibrate.py does for rigfit's decoder:
        python hf_stack.py --grid --out hf-h100.jsonl --time-limit 480

Needs torch, transformers and peft (`pip install torch transformers peft`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import torch
import transformers
from peft import LoraConfig, get_peft_model
from transformers import AutoConfig, AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments

# rigfit's LoRA target names -> the module names of each architecture in Transformers.
LORA_MODULES = {
    "llama": {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj", "up": "up_proj", "down": "down_proj"},
    "gpt2": {"q": "c_attn", "k": "c_attn", "v": "c_attn", "o": "c_proj", "up": "c_fc", "down": "c_proj"},
}


def hf_config(model: dict):
    """A Transformers config from rigfit's ModelSpec (the plan's `model`)."""
    kind = model["modelType"]
    if kind == "gpt2":
        return AutoConfig.for_model(
            "gpt2", n_embd=model["hidden"], n_layer=model["layers"], n_head=model["heads"], n_inner=model["ffn"],
            vocab_size=model["vocab"], n_positions=model["maxPositions"], tie_word_embeddings=model["tiedEmbeddings"],
            attn_pdrop=model.get("attentionDropout", 0.0), resid_pdrop=model.get("hiddenDropout", 0.0),
            embd_pdrop=model.get("hiddenDropout", 0.0),
        )
    return AutoConfig.for_model(
        kind if kind in ("llama", "mistral", "qwen2", "mixtral") else "llama",
        hidden_size=model["hidden"], num_hidden_layers=model["layers"], num_attention_heads=model["heads"],
        num_key_value_heads=model["kvHeads"], intermediate_size=model["ffn"], vocab_size=model["vocab"],
        max_position_embeddings=model["maxPositions"], tie_word_embeddings=model["tiedEmbeddings"],
        **({"num_local_experts": model["experts"]["count"], "num_experts_per_tok": model["experts"]["topK"]}
           if model.get("experts") else {}),
    )


class RandomTokens(torch.utils.data.Dataset):
    """Random token windows: speed and memory do not depend on the text."""

    def __init__(self, vocab: int, seq: int, size: int):
        self.vocab, self.seq, self.size = vocab, seq, size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        ids = torch.randint(0, self.vocab, (self.seq,), generator=g)
        return {"input_ids": ids, "labels": ids.clone()}


class StepLines(TrainerCallback):
    """One JSON line per optimizer step: tokens/s of that step and the device's peak memory so far."""

    def __init__(self, tokens_per_step: int, total: int):
        self.tokens_per_step, self.total, self.started = tokens_per_step, total, None

    def on_step_begin(self, args, state, control, **kwargs):
        self.started = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - self.started
        cuda = torch.cuda.is_available()
        line = {"step": state.global_step, "total_steps": self.total,
                "tokens_per_second": round(self.tokens_per_step / elapsed, 1) if elapsed > 0 else 0.0,
                "max_memory_allocated": torch.cuda.max_memory_allocated() if cuda else None,
                "max_memory_reserved": torch.cuda.max_memory_reserved() if cuda else None}
        print(json.dumps(line), flush=True)


def train(settings: dict, model_spec: dict, max_steps: int, out_dir: str) -> None:
    precision = settings["precision"]
    model = AutoModelForCausalLM.from_config(hf_config(model_spec))
    if precision in ("bf16-true", "fp16-true"):
        model = model.to(torch.bfloat16 if precision == "bf16-true" else torch.float16)
    if settings["method"] in ("lora", "qlora") and settings.get("lora"):
        names = LORA_MODULES.get(model_spec["modelType"], LORA_MODULES["llama"])
        targets = sorted({names[t] for t in settings["lora"]["targets"] if t in names})
        rank = settings["lora"]["rank"]
        model = get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.05,
                                                 target_modules=targets, task_type="CAUSAL_LM"))
    cpu = settings["device"] == "cpu"
    args = TrainingArguments(
        output_dir=out_dir, per_device_train_batch_size=settings["microBatch"],
        gradient_accumulation_steps=settings["gradAccum"], max_steps=max_steps, learning_rate=1e-4,
        bf16=precision == "bf16-mixed", fp16=precision == "fp16-mixed",
        gradient_checkpointing=settings["gradCheckpointing"], logging_steps=max_steps + 1, save_strategy="no",
        report_to=[], disable_tqdm=True, dataloader_num_workers=0, optim="adamw_torch", use_cpu=cpu,
    )
    tokens_per_step = settings["microBatch"] * settings["gradAccum"] * settings["seq"] * max(1, args.world_size)
    data = RandomTokens(model_spec["vocab"], settings["seq"], settings["microBatch"] * settings["gradAccum"] * (max_steps + 1))
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[StepLines(tokens_per_step, max_steps)])
    trainer.train()


def versions() -> str:
    import peft
    cuda = f", CUDA {torch.version.cuda}" if torch.version.cuda else ""
    return f"Transformers {transformers.__version__}, PEFT {peft.__version__}, PyTorch {torch.__version__}{cuda}"


# ---------------------------------------------------------------------------------------------------------------
# The grid: Transformers models from config, full and LoRA, bf16 autocast, through the Trainer.

LLAMA_1B = dict(modelType="llama", layers=16, hidden=2048, heads=32, kvHeads=8, ffn=5632, vocab=32000,
                maxPositions=4096, tiedEmbeddings=False)
GPT2_SMALL = dict(modelType="gpt2", layers=12, hidden=768, heads=12, kvHeads=12, ffn=3072, vocab=50257,
                  maxPositions=1024, tiedEmbeddings=True, attentionDropout=0.1, hiddenDropout=0.1)
QKVO = {"rank": 16, "targets": ["q", "k", "v", "o"]}


def grid() -> list[tuple[str, dict, dict]]:
    base = dict(device="cuda", gradAccum=1, gradCheckpointing=False, precision="bf16-mixed", method="full", lora=None)
    out = []
    for micro in (4, 8):
        out.append((f"gpt2-b{micro}", GPT2_SMALL, dict(base, seq=1024, microBatch=micro)))
    for micro in (2, 4):
        out.append((f"llama1b-b{micro}", LLAMA_1B, dict(base, seq=2048, microBatch=micro)))
        out.append((f"llama1b-b{micro}-ckpt", LLAMA_1B, dict(base, seq=2048, microBatch=micro, gradCheckpointing=True)))
        out.append((f"llama1b-b{micro}-lora", LLAMA_1B, dict(base, seq=2048, microBatch=micro, method="lora", lora=QKVO)))
    out.append(("llama1b-b4-lora-bf16", LLAMA_1B, dict(base, seq=2048, microBatch=4, method="lora", lora=QKVO, precision="bf16-true")))
    out.append(("gpt2-b8-lora", GPT2_SMALL, dict(base, seq=1024, microBatch=8, method="lora", lora=QKVO)))
    return out


def hf_config_json(model: dict) -> dict:
    return {k: v for k, v in hf_config(model).to_dict().items() if not k.startswith("_") and k != "transformers_version"}


def rows_for(name: str, model: dict, settings: dict, result: dict, gpu: dict) -> list[dict]:
    row_settings = {"seq": settings["seq"], "microBatch": settings["microBatch"], "gradAccum": settings["gradAccum"],
                    "precision": settings["precision"], "gradCheckpointing": settings["gradCheckpointing"],
                    "upcastLogits": True}
    if settings["lora"]:
        row_settings["lora"] = {"rank": settings["lora"]["rank"], "targets": settings["lora"]["targets"]}
    gpu_slug = "".join(c if c.isalnum() else "-" for c in gpu["name"].lower()).strip("-")
    slug = f"hf-{gpu_slug}-{name}"
    rows = []
    for metric, unit, value in (("tokens_per_second", "tokens/s/device", result["tokens_per_second"]),
                                ("max_memory_allocated", "B", result["max_memory_allocated"]),
                                ("max_memory_reserved", "B", result["max_memory_reserved"])):
        rows.append({"id": f"{slug}-{metric.replace('_', '-')}", "model": {"config": hf_config_json(model)},
                     "settings": row_settings, "gpu": gpu, "metric": metric, "value": value, "unit": unit,
                     "origin": "calibrate",
                     "source": {"id": f"calibrate-hf-{gpu_slug}", "title": "rigfit examples/calibrate/hf_stack.py",
                                "url": "file:examples/calibrate/hf_stack.py", "where": f"{gpu['name']}, {versions()}",
                                "says": f"{metric} = {value} {unit} for {name}"},
                     "stack": f"hf@{transformers.__version__}", "stackSays": versions()})
    return rows


def run_one(model: dict, settings: dict, steps: int) -> dict:
    """One configuration in a fresh process (its own CUDA context and peak counters)."""
    payload = json.dumps({"model": model, "settings": settings})
    proc = subprocess.run([sys.executable, __file__, "--config", payload, "--max-steps", str(steps)],
                          capture_output=True, text=True, timeout=300)
    lines = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or len(lines) < 4:
        return {"oom": "out of memory" in proc.stderr.lower(), "error": proc.stderr.strip().splitlines()[-1:] or ["no output"]}
    timed = lines[3:]  # three warm-up steps
    tokens = settings["microBatch"] * settings["gradAccum"] * settings["seq"]
    seconds = sum(tokens / l["tokens_per_second"] for l in timed)
    return {"tokens_per_second": round(tokens * len(timed) / seconds, 1),
            "max_memory_allocated": lines[-1]["max_memory_allocated"], "max_memory_reserved": lines[-1]["max_memory_reserved"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", help="rigfit-plan.json to measure")
    parser.add_argument("--config", help=argparse.SUPPRESS)  # one grid configuration, as JSON
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--grid", action="store_true", help="measure the grid and write validation rows")
    parser.add_argument("--out", help="validation rows file (with --grid)")
    parser.add_argument("--time-limit", type=float, default=480, help="start no configuration after this many seconds")
    args = parser.parse_args()
    if args.plan:
        with open(args.plan, encoding="utf-8") as handle:
            plan = json.load(handle)
        train(plan["settings"], plan["model"], args.max_steps, os.path.join(os.path.dirname(os.path.abspath(args.plan)), "hf-out"))
        return 0
    if args.config:
        one = json.loads(args.config)
        train(one["settings"], one["model"], args.max_steps, "/tmp/rigfit-hf-grid")
        return 0
    if not args.grid or not args.out:
        parser.error("pass --plan FILE, or --grid --out FILE")
    if not torch.cuda.is_available():
        parser.error("the grid measures a GPU: torch sees none")
    from calibrate import gpu_description  # the spec-sheet numbers rows carry, as calibrate.py writes them

    gpu = gpu_description(argparse.Namespace(fp16_tflops=None, fp32_tflops=None, bandwidth_gbs=None))
    start = time.monotonic()
    with open(args.out, "a", encoding="utf-8") as out:
        for name, model, settings in grid():
            if time.monotonic() - start > args.time_limit:
                print(f"time limit: stopped before {name}", file=sys.stderr)
                break
            result = run_one(model, settings, steps=13)
            if "error" in result:
                print(f"{name}: {'out of memory' if result['oom'] else result['error']}", file=sys.stderr)
                continue
            for row in rows_for(name, model, settings, result, gpu):
                out.write(json.dumps(row) + "\n")
            print(f"{name}: {result['tokens_per_second']} tokens/s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
