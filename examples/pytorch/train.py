#!/usr/bin/env python3
"""A small, real GPT trainer that runs a rigfit plan.

Reads rigfit's plan JSON (rigfit-plan.json) or one of its exports (training_args.json, ds_config.json,
accelerate_config.yaml, lightning_config.yaml, rigfit_settings.py, or a folder holding them), applies the
RIGFIT_* overrides the monitor sets, and honours micro-batch, accumulation, precision, gradient checkpointing,
torch.compile, TF32, LoRA and the strategy between processes. Trains a randomly initialised model on a local
text file (bytes as tokens) or, without --data, on random tokens (for measuring speed and memory; the loss then
stays near ln(vocab)). Prints one JSON line per optimizer step:
  {"step": 10, "total_steps": 30, "loss": 5.1, "tokens": 655360, "tokens_per_second": 118000.0, "lr": 0.0003, ...}
writes checkpoints atomically, saves one and exits on SIGINT/SIGTERM, and resumes from the newest. Runs under
torchrun, the DeepSpeed launcher (with DeepSpeed when it is installed), `accelerate launch` and srun.

  python train.py --plan rigfit-plan.json --data corpus.txt
  torchrun --standalone --nproc_per_node=4 train.py --plan rigfit-plan.json
"""

from __future__ import annotations

import sys

from rigfit_runtime import StopRequest, adopt_launcher_ranks, emit

STOP = StopRequest()  # before the torch import: Ctrl-C while torch loads also ends without a traceback

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from rigfit_build import build, setup  # noqa: E402
from rigfit_checkpoint import resume, save  # noqa: E402
from rigfit_plan import PlanError, RunConfig, resolve  # noqa: E402


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
        return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


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


def reserved_memory(device):
    """What the caching allocator held at its peak (CUDA/ROCm), for `rigfit calibrate`; None elsewhere."""
    return torch.cuda.max_memory_reserved(device) if device.type == "cuda" else None


@dataclass
class Progress:
    step: int
    tokens: int
    loss: float = 0.0
    stopping: bool = False


def one_step(run, batches: Batches, step: int) -> torch.Tensor:
    """One optimizer step over grad_accum micro-batches; returns this rank's mean loss."""
    cfg, model = run.cfg, run.model
    if run.engine != "deepspeed" or not run.engine_schedules_lr:
        for group in run.optimizer.param_groups:
            group["lr"] = learning_rate(cfg, step)
    loss_sum = torch.zeros((), device=run.device)
    for micro in range(cfg.grad_accum):
        x, y = batches.get(cfg.micro_batch, step, micro)
        x, y = x.to(run.device, non_blocking=True), y.to(run.device, non_blocking=True)
        if run.engine == "deepspeed":  # the engine scales by accumulation and steps at its boundary
            loss = model(x, y)
            model.backward(loss)
            model.step()
            loss_sum += loss.detach().float() / cfg.grad_accum
            continue
        last = micro == cfg.grad_accum - 1
        sync = run.no_sync() if not last and run.world > 1 else run.nullcontext()
        with sync, run.autocast:
            loss = model(x, y) / cfg.grad_accum
        (run.scaler.scale(loss) if run.scaler else loss).backward()
        loss_sum += loss.detach().float()
    if run.engine != "deepspeed":
        if run.scaler:
            run.scaler.unscale_(run.optimizer)
        run.clip_grad_norm(cfg.grad_clip)
        if run.scaler:
            run.scaler.step(run.optimizer)
            run.scaler.update()
        else:
            run.optimizer.step()
        run.optimizer.zero_grad(set_to_none=True)
    return loss_sum


def agree(run, loss_sum: torch.Tensor) -> tuple:
    """The mean loss over ranks, and whether any rank was asked to stop (so all stop at the same step)."""
    stats = torch.stack([loss_sum.float(), torch.tensor(float(STOP.requested), device=run.device)])
    if dist.is_initialized():
        dist.all_reduce(stats)
    return stats[0].item() / run.world, stats[1].item() > 0  # .item() synchronises the device: timings are real


def exit_now(code: int) -> None:
    """Ends a rank that has left its process group: checkpoints and logs are written and flushed, and nothing
    the interpreter would still tear down (the store client, gloo's and the OpenMP pool's threads) can hold it."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def leave_process_group(run, code: int, timeout_s: float = 120.0) -> int:
    """Rank 0 hosts the store every rank's process group talks through, so it leaves last: each other rank
    leaves, then counts itself out in the store, and rank 0 waits for the count. Leaving first would strand the
    others polling a closed socket (torch 1.13's TCPStore client spins on it at full CPU until killed).
    The process then ends without the interpreter's teardown (`exit_now`): a rank still tearing down its store
    client when rank 0 closes the store can spin the same way, and its launcher then waits on it for minutes."""
    if not dist.is_initialized():
        return code
    store = dist.distributed_c10d._get_default_store()
    dist.barrier()
    if run.rank != 0:
        dist.destroy_process_group()
        store.add("rigfit/left", 1)
        exit_now(code)
    deadline = time.monotonic() + timeout_s
    while store.add("rigfit/left", 0) < run.world - 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    dist.destroy_process_group()
    exit_now(code)


def print_settings(run, source_note: str) -> None:
    """Every rank states what it runs with, so a launcher's ranks can be checked against the plan."""
    cfg = run.cfg
    line = {
        "rank": run.rank, "world_size": run.world, "local_rank": run.local_rank,
        "node": os.environ.get("SLURMD_NODENAME") or socket.gethostname(), "micro_batch": cfg.micro_batch,
        "grad_accum": cfg.grad_accum, "effective_batch": cfg.micro_batch * cfg.grad_accum * run.world, "seq": cfg.seq,
        "precision": cfg.precision, "strategy": cfg.strategy, "engine": run.engine, "device": str(run.device),
        "method": cfg.method, "params": run.params, "trainable_params": run.trainable, "source": cfg.source,
        "attempt": cfg.attempt,
    }
    emit(f"rigfit train: rank {run.rank} of {run.world} settings {json.dumps(line)}")
    if run.rank == 0 and source_note:
        emit(f"rigfit train: {source_note}")


def train(args) -> int:
    cfg = resolve(args.plan, deepspeed_config=args.deepspeed_config or (args.deepspeed if isinstance(args.deepspeed, str) else None))
    run = build(cfg, setup(cfg, args.device), args.deepspeed is not None, Path(args.out or cfg.output_dir))
    cfg = run.cfg
    max_steps = args.max_steps or cfg.max_steps
    note = ""
    if cfg.world_size and cfg.world_size != run.world:
        planned = cfg.micro_batch * cfg.grad_accum * cfg.world_size
        note = (f"the plan is for {cfg.world_size} process(es), this launch has {run.world}: "
                f"effective batch {cfg.micro_batch * cfg.grad_accum * run.world} instead of {planned}")
    print_settings(run, note)
    progress = Progress(*((0, 0) if args.no_resume else resume(run)))
    batches = Batches(args.data, cfg.model.vocab, cfg.seq, args.seed, run.rank)
    tokens_per_step = cfg.micro_batch * cfg.grad_accum * run.world * cfg.seq
    run.model.train()
    measured = []
    interval_start, interval_tokens = time.perf_counter(), 0
    while progress.step < max_steps:  # a stop request is acted on after a step, once every rank agrees
        loss_sum = one_step(run, batches, progress.step)
        progress.step += 1
        progress.tokens += tokens_per_step
        interval_tokens += tokens_per_step
        progress.loss, progress.stopping = agree(run, loss_sum)
        done = progress.step >= max_steps or progress.stopping
        if progress.step % args.log_every != 0 and not done and progress.step % cfg.save_every != 0:
            continue
        elapsed = time.perf_counter() - interval_start
        rate = interval_tokens / elapsed if elapsed > 0 else 0.0
        measured.append(rate)
        line = {"step": progress.step, "total_steps": max_steps, "loss": round(progress.loss, 5), "tokens": progress.tokens,
                "tokens_per_second": round(rate, 1), "tokens_per_s": round(rate, 1),
                "samples_per_second": round(rate / cfg.seq, 2), "lr": run.current_lr(),
                "max_memory_allocated": peak_memory(run.device), "max_memory_reserved": reserved_memory(run.device),
                "attempt": cfg.attempt}
        if progress.step % cfg.save_every == 0 or done:
            line["checkpoint_seconds"] = round(save(run, progress.step, progress.tokens), 3)
        if run.rank == 0:
            emit(json.dumps(line), sys.stdout)
        if progress.stopping:
            break
        interval_start, interval_tokens = time.perf_counter(), 0
    if progress.stopping:
        if run.rank == 0:
            emit(f"rigfit train: stopped at step {progress.step} of {max_steps} on a signal; the checkpoint in {run.out} "
                 "resumes it")
        return leave_process_group(run, STOP.exit_code)
    if run.rank == 0 and measured:
        # The first interval includes compilation and warm-up; the steady rate is the later ones.
        steady = measured[1:] or measured
        report = {"measured_tokens_per_s": sum(steady) / len(steady), "predicted_tokens_per_s": cfg.predicted_tokens_per_s,
                  "measured_max_memory_allocated": peak_memory(run.device), "predicted_peak_allocated": cfg.predicted_peak_allocated}
        emit(f"rigfit train: done {json.dumps(report)}")
    return leave_process_group(run, 0)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["fit"], help="LightningCLI's subcommand, accepted and ignored")
    parser.add_argument("--plan", "--config", dest="plan",
                        help="rigfit-plan.json, an exported config, or an export folder (default: $RIGFIT_PLAN_FILE)")
    parser.add_argument("--data", help="local text file, tokenised as bytes (default: random tokens)")
    parser.add_argument("--out", help="checkpoint folder (default: the plan's output directory)")
    parser.add_argument("--device", default="plan", choices=["plan", "cuda", "mps", "cpu"], help="override the plan's device")
    parser.add_argument("--max-steps", type=int, help="stop after this many optimizer steps (default: the plan's)")
    parser.add_argument("--log-every", type=int, default=1, help="print metrics every N steps (default: every step)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-resume", action="store_true", help="start fresh even if checkpoints exist")
    # What launchers pass: the DeepSpeed launcher (--local_rank, --deepspeed --deepspeed_config FILE), HF-style
    # `--deepspeed FILE`, and torch.distributed.launch's --local-rank.
    parser.add_argument("--local_rank", "--local-rank", dest="local_rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--deepspeed", nargs="?", const=True, help="train with DeepSpeed (optionally: its config file)")
    parser.add_argument("--deepspeed_config", "--deepspeed-config", dest="deepspeed_config", help="DeepSpeed config JSON")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    adopt_launcher_ranks(args.local_rank)
    try:
        return train(args)
    except PlanError as error:
        emit(f"rigfit train: {error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
