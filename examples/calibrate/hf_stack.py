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
import inspect
import json
import os
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
    """One JSON line per optimizer step: tokens/s of that step and the device's peak memory so far.

    A step is timed from the end of the one before (the first from its own start), so the Trainer's work between
    steps (fetching the batch, the scheduler, its callbacks and logging) counts, as it does for a user's run.
    """

    def __init__(self, tokens_per_step: int, total: int):
        self.tokens_per_step, self.total, self.last = tokens_per_step, total, None

    def on_step_begin(self, args, state, control, **kwargs):
        if self.last is None:
            self.last = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        cuda = torch.cuda.is_available()
        if cuda:
            torch.cuda.synchronize()
        now = time.perf_counter()
        elapsed, self.last = now - self.last, now
        line = {"step": state.global_step, "total_steps": self.total,
                "tokens_per_second": round(self.tokens_per_step / elapsed, 1) if elapsed > 0 else 0.0,
                "max_memory_allocated": torch.cuda.max_memory_allocated() if cuda else None,
                "max_memory_reserved": torch.cuda.max_memory_reserved() if cuda else None}
        print(json.dumps(line), flush=True)


def training_arguments(**wanted) -> TrainingArguments:
    """TrainingArguments with the arguments this Transformers release knows (`use_cpu` came in 4.34)."""
    known = inspect.signature(TrainingArguments.__init__).parameters
    return TrainingArguments(**{k: v for k, v in wanted.items() if k in known})


def build_model(settings: dict, model_spec: dict, device: str):
    """The plan's model from its config with random weights, in the type rigfit's exports load it, LoRA added."""
    precision = settings["precision"]
    # Built where it trains: random initialisation of a billion parameters is minutes on a CPU, a second on a GPU.
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(hf_config(model_spec))
    lora = settings["method"] in ("lora", "qlora") and settings.get("lora")
    # As rigfit's exports load it: pure half precision keeps the weights in the half type, and so does a LoRA
    # base under autocast (only the adapters train, in fp32: PEFT's autocast_adapter_dtype).
    if precision.endswith("-true") or (lora and precision.endswith("-mixed")):
        model = model.to(torch.bfloat16 if precision.startswith("bf16") else torch.float16)
    if lora:
        names = LORA_MODULES.get(model_spec["modelType"], LORA_MODULES["llama"])
        targets = sorted({names[t] for t in settings["lora"]["targets"] if t in names})
        rank = settings["lora"]["rank"]
        if settings["gradCheckpointing"]:
            # What PEFT's guides (and prepare_model_for_kbit_training) do: with every base weight frozen, the
            # checkpointed blocks need an input that requires grad for the adapters to get theirs.
            model.enable_input_require_grads()
        model = get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank,
                                                 lora_dropout=settings["lora"].get("dropout", 0.05),
                                                 target_modules=targets, task_type="CAUSAL_LM"))
    return model


def train(settings: dict, model_spec: dict, max_steps: int, out_dir: str) -> None:
    precision = settings["precision"]
    cpu = settings["device"] == "cpu" or not torch.cuda.is_available()
    model = build_model(settings, model_spec, "cpu" if cpu else "cuda")
    args = training_arguments(
        output_dir=out_dir, per_device_train_batch_size=settings["microBatch"],
        gradient_accumulation_steps=settings["gradAccum"], max_steps=max_steps, learning_rate=1e-4,
        bf16=precision == "bf16-mixed", fp16=precision == "fp16-mixed",
        gradient_checkpointing=settings["gradCheckpointing"], logging_steps=max_steps + 1, save_strategy="no",
        report_to=[], disable_tqdm=True, dataloader_num_workers=0, use_cpu=cpu,
        # The plan's optimizer step: fused when it says so, else torch.optim.AdamW's foreach step.
        optim="adamw_torch_fused" if settings.get("fusedOptimizer") else "adamw_torch",
    )
    tokens_per_step = settings["microBatch"] * settings["gradAccum"] * settings["seq"] * max(1, args.world_size)
    data = RandomTokens(model_spec["vocab"], settings["seq"], settings["microBatch"] * settings["gradAccum"] * (max_steps + 1))
    trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[StepLines(tokens_per_step, max_steps)])
    trainer.train()


def versions() -> str:
    import peft
    cuda = f", CUDA {torch.version.cuda}" if torch.version.cuda else ""
    return f"Transformers {transformers.__version__}, PEFT {peft.__version__}, PyTorch {torch.__version__}{cuda}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", help="rigfit-plan.json to measure")
    parser.add_argument("--config", help=argparse.SUPPRESS)  # one grid configuration, as JSON
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--grid", action="store_true", help="measure the grid and write validation rows")
    parser.add_argument("--out", help="validation rows file (with --grid)")
    parser.add_argument("--time-limit", type=float, default=480, help="start no configuration after this many seconds")
    parser.add_argument("--grid-steps", type=int, default=13, help="optimizer steps per configuration (3 warm-up)")
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
    from hf_grid import run_grid  # imported here: it imports this module

    return run_grid(args.out, args.time_limit, args.grid_steps)


if __name__ == "__main__":
    sys.exit(main())
