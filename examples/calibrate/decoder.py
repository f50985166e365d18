"""The decoder calibrate.py trains: a Hugging Face style GPT-2 or Llama layout built from a Config, with LoRA and
the optimizers of the grid. Kept apart from the measuring so that each file does one job."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

@dataclass
class Config:
    """One measured configuration; field names follow rigfit's EstimateInput."""

    family: str  # "gpt2" or "llama"
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    seq: int
    microBatch: int
    precision: str = "bf16-mixed"
    optimizer: str = "adamw"
    optimizerImpl: str = "foreach"
    gradCheckpointing: bool = False
    attention: str = "sdpa"
    gradAccum: int = 1
    lora_rank: int = 0
    lora_targets: list[str] = field(default_factory=lambda: ["q", "v"])
    # "model": adapters in the base's type (LitGPT's way); "fp32": PEFT's, upcast on a 16-bit base, each casting its input.
    adapter_dtype: str = "model"
    # A Mixtral-style mixture of experts in place of the MLP (llama layout): this many experts, top_k per token.
    experts: int = 0
    top_k: int = 2

    def slug(self) -> str:
        parts = [f"{self.family}-{self.layers}x{self.hidden}", f"s{self.seq}", f"b{self.microBatch}", self.precision, self.optimizer, self.attention]
        if self.optimizerImpl != "foreach":
            parts.append(self.optimizerImpl)
        if self.gradCheckpointing:
            parts.append("ckpt")
        if self.gradAccum > 1:
            parts.append(f"ga{self.gradAccum}")
        if self.experts:
            parts.append(f"moe{self.experts}top{self.top_k}")
        if self.lora_rank:
            parts.append(f"lora{self.lora_rank}-{''.join(self.lora_targets)}")
            if self.adapter_dtype != "model":
                parts.append(f"{self.adapter_dtype}-adapters")
        return "-".join(parts).lower()

    def hf_config(self) -> dict:
        """The model as a Hugging Face config.json, which rigfit reads with modelSpecFromHfConfig."""
        if self.family == "gpt2":
            return {
                "model_type": "gpt2", "n_embd": self.hidden, "n_layer": self.layers, "n_head": self.heads,
                "n_inner": 4 * self.hidden, "vocab_size": self.vocab, "n_positions": self.seq,
                "attn_pdrop": 0.0, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "tie_word_embeddings": True,
            }
        experts = {"num_local_experts": self.experts, "num_experts_per_tok": self.top_k} if self.experts else {}
        return {
            **experts,
            "model_type": "mixtral" if self.experts else "llama", "hidden_size": self.hidden, "num_hidden_layers": self.layers,
            "num_attention_heads": self.heads, "num_key_value_heads": self.kv_heads,
            "intermediate_size": swiglu_width(self.hidden), "vocab_size": self.vocab,
            "max_position_embeddings": self.seq, "hidden_act": "silu", "rms_norm_eps": 1e-5,
            "tie_word_embeddings": False,
        }


def swiglu_width(hidden: int) -> int:
    return int(math.ceil(8 * hidden / 3 / 256) * 256)


# ---------------------------------------------------------------------------------------------------------------
# The model: the layouts rigfit's estimate describes (pre-norm blocks, fp32 RMSNorm as Hugging Face computes it).


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


class LoRALinear(nn.Module):
    """A frozen linear layer plus a trainable low-rank update (PEFT's layout, dropout 0). With fp32 adapters the input
    is cast to fp32 for them and the sum cast back, as PEFT's lora.Linear does on a 16-bit base."""

    def __init__(self, base: nn.Linear, rank: int, dtype: torch.dtype | None = None):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        dtype = dtype or base.weight.dtype
        self.lora_a = nn.Linear(base.in_features, rank, bias=False, device=base.weight.device, dtype=dtype)
        self.lora_b = nn.Linear(rank, base.out_features, bias=False, device=base.weight.device, dtype=dtype)
        nn.init.zeros_(self.lora_b.weight)

    def forward(self, x):
        result = self.base(x)
        return (result + self.lora_b(self.lora_a(x.to(self.lora_a.weight.dtype)))).to(result.dtype)


def rope(x, positions):
    half = x.shape[-1] // 2
    freqs = 1.0 / (10000 ** (torch.arange(0, half, device=x.device, dtype=torch.float32) / half))
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Expert(nn.Module):
    """One SwiGLU expert of a mixture (Mixtral's w1, w3, w2 as gate, up, down)."""

    def __init__(self, h: int, f: int):
        super().__init__()
        self.gate = nn.Linear(h, f, bias=False)
        self.up = nn.Linear(h, f, bias=False)
        self.down = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        h, self.heads, self.kv_heads = cfg.hidden, cfg.heads, cfg.kv_heads
        self.head_dim = h // cfg.heads
        llama = cfg.family == "llama"
        bias = not llama
        self.llama = llama
        self.attention = cfg.attention
        self.norm1 = RMSNorm(h) if llama else nn.LayerNorm(h)
        self.norm2 = RMSNorm(h) if llama else nn.LayerNorm(h)
        self.q = nn.Linear(h, cfg.heads * self.head_dim, bias=bias)
        self.k = nn.Linear(h, cfg.kv_heads * self.head_dim, bias=bias)
        self.v = nn.Linear(h, cfg.kv_heads * self.head_dim, bias=bias)
        self.o = nn.Linear(cfg.heads * self.head_dim, h, bias=bias)
        if cfg.experts:
            self.top_k = cfg.top_k
            self.router = nn.Linear(h, cfg.experts, bias=False)
            self.experts = nn.ModuleList(Expert(h, swiglu_width(h)) for _ in range(cfg.experts))
        elif llama:
            f = swiglu_width(h)
            self.gate = nn.Linear(h, f, bias=False)
            self.up = nn.Linear(h, f, bias=False)
            self.down = nn.Linear(f, h, bias=False)
        else:
            self.up = nn.Linear(h, 4 * h)
            self.down = nn.Linear(4 * h, h)

    def attend(self, x):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.llama:
            positions = torch.arange(s, device=x.device)
            q, k = rope(q, positions), rope(k, positions)
        groups = self.heads // self.kv_heads
        if self.attention == "eager":
            if groups > 1:
                k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            mask = torch.ones(s, s, device=x.device, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
            probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            out = probs @ v
        else:
            if groups > 1:
                k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, s, -1))

    def mixture(self, y):
        """Hugging Face's Mixtral routing: fp32 softmax over the experts, top-k renormalised, each expert run on the
        tokens routed to it and its weighted output added back."""
        b, s, h = y.shape
        flat = y.view(-1, h)
        weights = F.softmax(self.router(flat), dim=1, dtype=torch.float)
        weights, chosen = torch.topk(weights, self.top_k, dim=-1)
        weights /= weights.sum(dim=-1, keepdim=True)
        weights = weights.to(flat.dtype)
        out = torch.zeros_like(flat)
        mask = F.one_hot(chosen, num_classes=len(self.experts)).permute(2, 1, 0)
        for index, expert in enumerate(self.experts):
            slot, rows = torch.where(mask[index])
            routed = expert(flat[None, rows].reshape(-1, h)) * weights[rows, slot, None]
            out.index_add_(0, rows, routed.to(flat.dtype))
        return out.view(b, s, h)

    def forward(self, x):
        x = x + self.attend(self.norm1(x))
        y = self.norm2(x)
        if hasattr(self, "experts"):
            y = self.mixture(y)
        elif self.llama:
            y = self.down(F.silu(self.gate(y)) * self.up(y))
        else:
            y = self.down(F.gelu(self.up(y), approximate="tanh"))
        return x + y


class Decoder(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.positions = nn.Embedding(cfg.seq, cfg.hidden) if cfg.family == "gpt2" else None
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.hidden) if cfg.family == "llama" else nn.LayerNorm(cfg.hidden)
        self.head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        if cfg.family == "gpt2":
            self.head.weight = self.embed.weight

    def forward(self, ids, targets):
        x = self.embed(ids)
        if self.positions is not None:
            x = x + self.positions(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.cfg.gradCheckpointing and self.training else block(x)
        logits = self.head(self.norm(x))
        # Upcast before the loss, as Hugging Face models do.
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def add_lora(model: Decoder, rank: int, targets: list[str], adapter_dtype: str = "model"):
    model.requires_grad_(False)
    dtype = torch.float32 if adapter_dtype == "fp32" else None
    for block in model.blocks:
        # An expert's gate, up and down are adapted in every expert.
        for module in [block, *getattr(block, "experts", [])]:
            for name in targets:
                if isinstance(getattr(module, name, None), nn.Linear):
                    setattr(module, name, LoRALinear(getattr(module, name), rank, dtype))


def keep_frozen_in(model: nn.Module, dtype: torch.dtype):
    """Stores the frozen parameters in `dtype`: under autocast rigfit prices a LoRA model's frozen base in the half
    type, as its exports load it, and only the adapters stay fp32."""
    for parameter in model.parameters():
        if not parameter.requires_grad:
            parameter.data = parameter.data.to(dtype)


def make_optimizer(cfg: Config, params):
    if cfg.optimizer == "adamw":
        kwargs = {"fused": True} if cfg.optimizerImpl == "fused" else {"foreach": cfg.optimizerImpl == "foreach"}
        return torch.optim.AdamW(params, lr=1e-4, **kwargs)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=1e-4)
    if cfg.optimizer == "sgd-momentum":
        return torch.optim.SGD(params, lr=1e-4, momentum=0.9)
    if cfg.optimizer == "adafactor" and hasattr(torch.optim, "Adafactor"):
        return torch.optim.Adafactor(params, lr=1e-2)
    raise SystemExit(f"optimizer {cfg.optimizer} is not available in this PyTorch (adamw-8bit needs bitsandbytes)")
