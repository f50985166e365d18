"""Bytes one decoder block keeps for backward, measured on any machine (a CPU is enough, no GPU needed).

Runs one forward of a block of decoder.py under autograd's saved-tensor hooks and adds up what autograd keeps:
each storage once, the model's own parameters left out. rigfit's activation model (`blockActivationBytes` in
@rigfit/core) predicts the same figure per token of the micro-batch, so this checks it tensor by tensor against
PyTorch itself. Prints one JSON object: the configuration and `savedBytes`; with `--configs FILE` (`-` for standard
input), a JSON array of such settings objects in, a JSON array of results out, in one process.

    python examples/calibrate/saved_activations.py --hidden 512 --heads 8 --kv-heads 2 --seq 128 \\
        --precision bf16-true --lora-rank 8 --lora-targets q,k,v,o --adapter-dtype fp32
"""

from __future__ import annotations

import torch

from decoder import Config, Decoder, add_lora
from settings_cli import config_from, run, shape_parser

DTYPES = {"bf16-true": torch.bfloat16, "fp16-true": torch.float16, "fp32": torch.float32}


def saved_bytes(cfg: Config) -> int:
    """What autograd keeps for backward of one block, in bytes."""
    torch.manual_seed(0)
    model = Decoder(cfg).to(dtype=DTYPES[cfg.precision])
    if cfg.lora_rank:
        add_lora(model, cfg.lora_rank, cfg.lora_targets, cfg.adapter_dtype)
    block = model.blocks[0]
    parameters = {p.data_ptr() for p in model.parameters()}
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.storage()
        if storage.data_ptr() not in parameters:
            storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    # The residual stream entering a block needs a gradient whenever anything before it trains.
    x = torch.randn(cfg.microBatch, cfg.seq, cfg.hidden, dtype=DTYPES[cfg.precision], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        block(x)
    return sum(storages.values())


def measured(settings: dict) -> dict:
    cfg = config_from(settings, family="llama", layers=1, vocab=128, attention="eager")
    return {"config": cfg.hf_config(), "settings": settings, "savedBytes": saved_bytes(cfg)}


def main() -> None:
    parser = shape_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--precision", choices=sorted(DTYPES), default="bf16-true")
    run(parser, measured)


if __name__ == "__main__":
    main()
