"""Real models as ordered parameter lists, with each layer's forward FLOPs per sample.

DDP's buckets and its overlap with the backward pass depend on two things only: the sizes of the
parameter tensors in the order their gradients become ready, and how long the backward pass takes
to produce each. So a model here is a list of layers in forward order, each with its parameter
tensors (name, element count) and its forward FLOPs for one sample (a sequence, or an image).

Parameters are listed in the order the forward pass uses them, which is what sets the order in
which gradients become ready (reversed) and what DDP's steady-state buckets follow. For GPT-2, BERT
and ResNet-50 that is also the order of `model.parameters()` in the reference implementations.

FLOPs count a multiply-add as 2. A matrix layer with P weights costs 2·P FLOPs per token forward;
attention's score and value products add 2·n_ctx·d per token per layer (Kaplan et al. 2020,
Table 1); a convolution costs 2·C_in·k²·C_out per output pixel. Norms, activations and embedding
lookups are counted as free, as Kaplan et al. leave them out too: an estimate, not a measurement,
puts them under 1 % (GPT-2 small: two layer norms and a GELU, about 40·d FLOPs per token per
layer, against the matrices' 24·d², 0.2 %; ResNet-50: a batch norm and a ReLU, a few FLOPs per
output element, against 2·C_in·k², 1,152 for the smallest 3×3 convolution).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

from ..dtypes import BF16


@dataclass(frozen=True)
class Layer:
    name: str
    tensors: tuple[tuple[str, int], ...]  # (parameter name, elements), in forward order
    flops: float  # forward FLOPs for one sample

    @property
    def params(self) -> int:
        return sum(n for _, n in self.tensors)


@dataclass(frozen=True, eq=False)  # hashed by identity: the calculator caches work per model
class Model:
    key: str
    label: str
    sample: str  # what one sample is: "a sequence of 1,024 tokens", "a 224×224 image"
    tokens: int  # tokens per sample (1 for an image)
    layers: tuple[Layer, ...]
    source: str  # the reference implementation whose parameter count this reproduces

    @cached_property
    def params(self) -> int:
        return sum(layer.params for layer in self.layers)

    @cached_property
    def forward_flops(self) -> float:
        """Forward FLOPs per sample."""
        return sum(layer.flops for layer in self.layers)

    def tensors(self) -> list[tuple[str, int, int]]:
        """(name, elements, layer index) for every parameter tensor, in model order."""
        return [(n, e, i) for i, layer in enumerate(self.layers) for n, e in layer.tensors]


# ---- Transformers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TransformerConfig:
    """A dense decoder or encoder, in the terms of its published configuration file."""

    vocab: int
    d: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    ctx: int  # the sequence length one sample has here
    gated: bool = False  # SwiGLU MLP: gate, up and down projections (Llama, Mistral)
    bias: bool = True  # biases on the linear layers (GPT-2, BERT)
    rms_norm: bool = False  # RMSNorm has a weight only; LayerNorm has weight and bias
    tied: bool = True  # output projection shares the token embedding
    learned_positions: int = 0  # rows of a learned position embedding (0: rotary)
    fused_qkv: bool = False  # one c_attn matrix for Q, K and V (GPT-2)
    bert: bool = False  # token-type embedding, post-norm, pooler, no output head


def _linear(name: str, d_in: int, d_out: int, bias: bool, tokens: int) -> Layer:
    tensors = ((f"{name}.weight", d_in * d_out),) + (((f"{name}.bias", d_out),) if bias else ())
    return Layer(name, tensors, 2.0 * d_in * d_out * tokens)


def _norm(name: str, d: int, rms: bool) -> Layer:
    tensors = ((f"{name}.weight", d),) + (() if rms else ((f"{name}.bias", d),))
    return Layer(name, tensors, 0.0)


def transformer(key: str, label: str, c: TransformerConfig, source: str) -> Model:
    """Layers of a dense transformer in forward order, with per-sample FLOPs for c.ctx tokens."""
    t, d, hd = c.ctx, c.d, c.d // c.heads
    kv = c.kv_heads * hd
    emb = [("embed_tokens.weight", c.vocab * d)]
    if c.learned_positions:
        emb.append(("embed_positions.weight", c.learned_positions * d))
    if c.bert:
        emb += [("token_type_embeddings.weight", 2 * d), ("embeddings.LayerNorm.weight", d)]
        emb += [("embeddings.LayerNorm.bias", d)]
    layers = [Layer("embeddings", tuple(emb), 0.0)]
    for i in range(c.layers):
        p = f"layers.{i}."
        attn: list[Layer] = []
        if c.fused_qkv:
            attn.append(_linear(p + "attn.qkv", d, d + 2 * kv, c.bias, t))
        else:
            attn += [
                _linear(p + "attn.q", d, d, c.bias, t),
                _linear(p + "attn.k", d, kv, c.bias, t),
                _linear(p + "attn.v", d, kv, c.bias, t),
            ]
        # scores and weighted values: no parameters, 2·n_ctx·d FLOPs per token (Kaplan Table 1)
        attn.append(Layer(p + "attn.scores", (), 2.0 * t * d * t))
        attn.append(_linear(p + "attn.out", d, d, c.bias, t))
        if c.gated:
            mlp = [
                _linear(p + "mlp.gate", d, c.ffn, c.bias, t),
                _linear(p + "mlp.up", d, c.ffn, c.bias, t),
                _linear(p + "mlp.down", c.ffn, d, c.bias, t),
            ]
        else:
            mlp = [
                _linear(p + "mlp.fc", d, c.ffn, c.bias, t),
                _linear(p + "mlp.proj", c.ffn, d, c.bias, t),
            ]
        norm1, norm2 = _norm(p + "norm1", d, c.rms_norm), _norm(p + "norm2", d, c.rms_norm)
        # pre-norm (GPT-2, Llama): norm before each sub-block; post-norm (BERT): after it
        layers += [*attn, norm1, *mlp, norm2] if c.bert else [norm1, *attn, norm2, *mlp]
    if c.bert:  # BertPooler: one dense layer on the first token only
        layers.append(_linear("pooler.dense", d, d, True, 1))
    else:
        layers.append(_norm("final_norm", d, c.rms_norm))
        if c.tied:  # the head reuses embed_tokens: FLOPs here, its gradient lands in embeddings
            layers.append(Layer("lm_head (tied)", (), 2.0 * d * c.vocab * t))
        else:
            layers.append(_linear("lm_head", d, c.vocab, False, t))
    return Model(key, label, f"a sequence of {t:,} tokens", t, tuple(layers), source)


# Published configurations (config.json of each model on the Hugging Face hub; GPT-2 from
# Radford et al. 2019 and openai-community/gpt2; BERT from Devlin et al. 2019 and
# google-bert/bert-base-uncased; Llama 3 from Meta's model cards; Mistral 7B from Jiang et al.
# 2023).
GPT2 = dict(vocab=50257, heads=12, kv_heads=12, ctx=1024, learned_positions=1024, fused_qkv=True)
# Llama's layout, which Mistral 7B shares: SwiGLU, no biases, RMSNorm, an untied head, 8 KV heads
LLAMA = dict(kv_heads=8, gated=True, bias=False, rms_norm=True, tied=False)
LLAMA3 = dict(vocab=128256, ctx=8192, **LLAMA)
TRANSFORMERS = {
    "gpt2": ("GPT-2 small", TransformerConfig(d=768, layers=12, ffn=3072, **GPT2), "HF GPT2Model"),
    "gpt2-xl": (
        "GPT-2 XL",
        TransformerConfig(d=1600, layers=48, ffn=6400, **{**GPT2, "heads": 25, "kv_heads": 25}),
        "HF GPT2Model",
    ),
    "bert-base": (
        "BERT-base",
        TransformerConfig(
            vocab=30522,
            d=768,
            layers=12,
            heads=12,
            kv_heads=12,
            ffn=3072,
            ctx=512,
            learned_positions=512,
            bert=True,
        ),
        "HF BertModel (bert-base-uncased), with pooler, without the MLM head",
    ),
    "mistral-7b": (
        "Mistral 7B",
        TransformerConfig(vocab=32000, d=4096, layers=32, heads=32, ffn=14336, ctx=4096, **LLAMA),
        "HF MistralForCausalLM",
    ),
    "llama3-8b": (
        "Llama 3 8B",
        TransformerConfig(d=4096, layers=32, heads=32, ffn=14336, **LLAMA3),
        "HF LlamaForCausalLM",
    ),
    "llama3-70b": (
        "Llama 3 70B",
        TransformerConfig(d=8192, layers=80, heads=64, ffn=28672, **LLAMA3),
        "HF LlamaForCausalLM",
    ),
    "llama3-405b": (
        "Llama 3 405B",
        TransformerConfig(d=16384, layers=126, heads=128, ffn=53248, **LLAMA3),
        "HF LlamaForCausalLM",
    ),
}


# ---- ResNet-50 ------------------------------------------------------------------------------


def _conv(name: str, c_in: int, c_out: int, k: int, out_hw: int) -> Layer:
    """A bias-free convolution (torchvision's), FLOPs from the size of its output."""
    return Layer(
        name, ((f"{name}.weight", c_in * k * k * c_out),), 2.0 * c_in * k * k * c_out * out_hw**2
    )


def _bn(name: str, c: int) -> Layer:
    return Layer(name, ((f"{name}.weight", c), (f"{name}.bias", c)), 0.0)


def resnet50() -> Model:
    """torchvision's resnet50 (v1.5: stride 2 in the 3×3 convolution) on a 224×224 image."""
    layers = [_conv("conv1", 3, 64, 7, 112), _bn("bn1", 64)]
    c_in, hw = 64, 56  # after the 3×3 max pool
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], 1):
        for b in range(blocks):
            stride = 2 if stage > 1 and b == 0 else 1
            out_hw = hw // stride
            p = f"layer{stage}.{b}."
            layers += [
                _conv(p + "conv1", c_in, width, 1, hw),
                _bn(p + "bn1", width),
                _conv(p + "conv2", width, width, 3, out_hw),
                _bn(p + "bn2", width),
                _conv(p + "conv3", width, 4 * width, 1, out_hw),
                _bn(p + "bn3", 4 * width),
            ]
            if b == 0:
                layers += [
                    _conv(p + "downsample.0", c_in, 4 * width, 1, out_hw),
                    _bn(p + "downsample.1", 4 * width),
                ]
            c_in, hw = 4 * width, out_hw
    layers.append(_linear("fc", 2048, 1000, True, 1))
    return Model(
        "resnet50", "ResNet-50", "a 224×224 image", 1, tuple(layers), "torchvision resnet50"
    )


@cache
def get(key: str) -> Model:
    if key == "resnet50":
        return resnet50()
    label, config, source = TRANSFORMERS[key]
    return transformer(key, label, config, source)


# Why all-reduce's example, carried through the pages: a 7B-parameter model and its BF16 gradient of
# 7e9 x 2 bytes = 14 GB.
EXAMPLE_PARAMS = 7e9
EXAMPLE_GRADIENT_BYTES = EXAMPLE_PARAMS * BF16.itemsize

MODELS = (
    "gpt2",
    "bert-base",
    "resnet50",
    "gpt2-xl",
    "mistral-7b",
    "llama3-8b",
    "llama3-70b",
    "llama3-405b",
)

# The FSDP threshold J. Austin et al., "How to Scale Your Model" (2025, chapter "How to Parallelize
# a Transformer for Training") give for their own chips: about 2,475 tokens per chip at peak
# FLOP/s, about 990 at 40 % of peak. Page 8 quotes it beside its own threshold for an H100.
SCALING_BOOK_FSDP_TOKENS = (2475, 990)

# The BF16 MFU Llama 3 405B's pre-training reached on 8,192 to 16,384 H100s: 38–43 % (Dubey et al.,
# "The Llama 3 Herd of Models", 2024, Table 4). Page 10 quotes it beside its own MFU default.
LLAMA3_405B_MFU = (0.38, 0.43)
