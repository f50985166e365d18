"""Peak memory of one training step, measured on any machine (a CPU is enough, no GPU needed).

Trains decoder.py for one warm-up step, then records a second one (forward, backward, optimizer step, gradients
freed) under PyTorch's profiler with memory events: every allocation and free the step makes, in order. The peak of
that running sum, on top of what was allocated when the step began (weights, optimizer states, inputs), is the
step's peak allocated memory: what torch.cuda.max_memory_allocated() reports on a GPU, without the caching
allocator's rounding. rigfit's `peakAllocated` predicts it, so this checks the whole peak (activations, logits and
loss, backward workspace, checkpoint recomputation, gradients, optimizer temporaries) against PyTorch itself.
`reservedBytes` is what torch.cuda.max_memory_reserved() reports for the same stream: the model's tensors moved to
the device, then both steps' allocations and frees, replayed through the CUDA caching allocator's rules
(caching_allocator.py).
Prints one JSON object per configuration; with `--configs FILE` (`-` for standard input), a JSON array of settings
objects in, a JSON array of results out, in one process.

    python examples/calibrate/peak_memory.py --hidden 256 --heads 4 --kv-heads 4 --layers 2 --vocab 1024 \\
        --seq 128 --micro-batch 2 --precision bf16-true --grad-checkpointing
"""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from caching_allocator import replay
from decoder import Config, Decoder, add_lora, keep_frozen_in, make_optimizer
from settings_cli import config_from, run, shape_parser

# The model's own type; bf16-mixed keeps an fp32 model and runs its matmuls in bf16 under autocast.
DTYPES = {"bf16-true": torch.bfloat16, "fp16-true": torch.float16, "fp32": torch.float32, "bf16-mixed": torch.float32}
STEP = "optimizer-step"
RECORDED = "recorded-step"


def storages(tensors) -> dict:
    """The distinct storages behind these tensors, address to bytes, in the tensors' order (a tied weight once)."""
    return {t.storage().data_ptr(): t.storage().nbytes() for t in tensors if t is not None}


def step_peaks(cfg: Config) -> dict:
    torch.manual_seed(0)
    model = Decoder(cfg).to(dtype=DTYPES[cfg.precision])
    if cfg.lora_rank:
        add_lora(model, cfg.lora_rank, cfg.lora_targets, cfg.adapter_dtype)
        if cfg.precision == "bf16-mixed":
            keep_frozen_in(model, torch.bfloat16)
    model.train()
    optimizer = make_optimizer(cfg, [p for p in model.parameters() if p.requires_grad])
    ids = torch.randint(0, cfg.vocab, (cfg.microBatch, cfg.seq))
    targets = torch.randint(0, cfg.vocab, (cfg.microBatch, cfg.seq))

    def step():
        for _ in range(cfg.gradAccum):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.precision == "bf16-mixed"):
                loss = model(ids, targets) / cfg.gradAccum
            loss.backward()
        with record_function(STEP):
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    # What model.to(device) allocates, tensor by tensor in module order, before any step.
    loaded = storages([*model.parameters(), *model.buffers(), ids, targets])
    # The first step creates the optimizer's states; the recorded one starts where every later step starts.
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
        state = [t for s in optimizer.state.values() for t in s.values() if torch.is_tensor(t)]
        persistent = sum(storages([*model.parameters(), *model.buffers(), *state, ids, targets]).values())
        with record_function(RECORDED):
            step()
    allocations, ranges = memory_events(prof)
    recorded_start, step_start = ranges[RECORDED][0], ranges[STEP][-1]
    running = backward = optimizer_step = 0
    made = set()  # the recorded step's own allocations: a free of older memory (the range's handle) is not its
    for at, ptr, nbytes in allocations:
        if at < recorded_start or (nbytes < 0 and ptr not in made):
            continue
        if nbytes > 0:
            made.add(ptr)
        else:
            made.discard(ptr)
        running += nbytes
        if at < step_start:
            backward = max(backward, running)
        else:
            optimizer_step = max(optimizer_step, running)
    allocator = replay([*loaded.items(), *((ptr, nbytes) for _, ptr, nbytes in allocations)])
    return {
        "persistentBytes": persistent,
        "backwardPeakBytes": persistent + backward,
        "stepPeakBytes": persistent + optimizer_step,
        "peakAllocatedBytes": persistent + max(backward, optimizer_step),
        "leftBytes": running,
        "reservedBytes": allocator.peak_reserved,
    }


def memory_events(prof) -> tuple[list, dict]:
    """The recording's allocations and frees in the order they were made, as (time, address, signed bytes), and
    the start times of each named range (the recorded step, every optimizer step), earliest first."""
    allocations, ranges = [], {}
    pending = list(prof.profiler.kineto_results.experimental_event_tree())
    while pending:
        event = pending.pop()
        pending.extend(event.children)
        fields = event.extra_fields
        if type(fields).__name__ == "_ExtraFields_Allocation":
            allocations.append((event.start_time_ns, fields.ptr, fields.alloc_size))
        elif event.name in (RECORDED, STEP):
            ranges.setdefault(event.name, []).append(event.start_time_ns)
    allocations.sort(key=lambda a: a[0])
    return allocations, {name: sorted(starts) for name, starts in ranges.items()}


def resolved(cfg: Config) -> dict:
    """The settings the run used, defaults filled in, under the flags' names."""
    return {
        "family": cfg.family, "hidden": cfg.hidden, "heads": cfg.heads, "kv_heads": cfg.kv_heads, "layers": cfg.layers, "vocab": cfg.vocab,
        "seq": cfg.seq, "micro_batch": cfg.microBatch, "grad_accum": cfg.gradAccum, "precision": cfg.precision,
        "optimizer": cfg.optimizer, "optimizer_impl": cfg.optimizerImpl, "grad_checkpointing": cfg.gradCheckpointing,
        "attention": cfg.attention, "lora_rank": cfg.lora_rank, "lora_targets": ",".join(cfg.lora_targets),
        "adapter_dtype": cfg.adapter_dtype, "experts": cfg.experts, "top_k": cfg.top_k,
    }


def measured(settings: dict) -> dict:
    cfg = config_from(settings)
    return {"config": cfg.hf_config(), "settings": resolved(cfg), **step_peaks(cfg)}


def main() -> None:
    parser = shape_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=["llama", "gpt2"], default="llama", help="Llama layout (RMSNorm, SwiGLU, rotary) or GPT-2's (LayerNorm, GELU, learned positions, tied head)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--precision", choices=sorted(DTYPES), default="bf16-true")
    parser.add_argument("--optimizer", choices=["adamw", "sgd", "sgd-momentum"], default="adamw")
    parser.add_argument("--optimizer-impl", choices=["per-tensor", "foreach"], default="per-tensor")
    parser.add_argument("--grad-checkpointing", action="store_true")
    parser.add_argument("--attention", choices=["eager", "sdpa"], default="eager")
    run(parser, measured)


if __name__ == "__main__":
    main()
