"""The training job model (issue 57; the direct-connect paper's App. A.4): GPUs, layers and model presets.

A job is a list of ``Layer``s in forward order, each with its forward and backward compute time, the bytes of its
parameters (their gradients are what data parallelism allreduces), the bytes of the activations it hands on, and
for a mixture-of-experts layer the tokens each node routes through it (the all-to-all before and after it, App.
A.4). Layers come from a profile file (``solvers.training.profile``: measured times, as the paper's per-layer
timestamps on one A100-SXM-80GB) or from the **FLOPs model** here:

* forward FLOPs of a matrix product layer = 2 x parameters x tokens (one multiply and one add per weight and
  token); attention adds its two sequence products, 2 x 2 x S x d_attn per token (scores QK^T and the weighted sum
  of V over a sequence of S); a convolution 2 x (kernel MACs) x output pixels per image;
* backward = 2 x forward (gradients of the inputs and of the weights, each a product of the forward's size);
* time = FLOPs / (the GPU's dense BF16 peak x efficiency); efficiency is the user's (``--efficiency``), default
  ``DEFAULT_EFFICIENCY`` = 0.5, a typical measured model FLOPs utilisation of large transformer GEMMs.

GPU presets (dense, no sparsity; memory): the vendors' public spec sheets -- NVIDIA A100 Tensor Core GPU datasheet
(A100-SXM 80GB: 312 TFLOP/s BF16, 80 GB HBM2e), NVIDIA H100 Tensor Core GPU datasheet (H100-SXM: 989 TFLOP/s BF16,
80 GB HBM3), AMD Instinct MI250X data sheet (383 TFLOP/s BF16, 128 GB HBM2e), AMD Instinct MI300X data sheet
(1307.4 TFLOP/s BF16, 192 GB HBM3).

Model presets use public architecture figures:

* Switch Transformers (Fedus, Zoph, Shazeer, JMLR 2022, the paper's [30]): encoder-decoder T5 stacks of ``layers``
  blocks each side, every ``expert_every``-th feed-forward replaced by a top-1 routed layer of ``experts`` experts
  (capacity factor 1, tokens spread evenly as App. A.4 assumes). Switch-Base (d_model 768, d_ff 2048 GEGLU, 12 heads
  of 64, 12 + 12 layers, every other FFN an expert layer) with 128 experts is the Switch paper's 7.4B model and with
  256 experts the direct-connect paper's 14.7B model at 256 nodes; Switch-Large-128 (1024, 2816, 16 heads, 24 +
  24) is 26.3B in the Switch paper and counts 27.1B as built here (3 % more; no paper row uses it);
  Switch-C (2080, 6144 ReLU, 32 heads, 15 + 15 layers, every FFN an expert layer, 2048 experts) is
  1.571T, the paper's 1.6T model at 1024 nodes. Sequences: 512 input tokens and 114 target tokens (T5's span
  corruption of 15 % with mean span 3), global batch 2048 sequences (2^20 input tokens, the T5/Switch pre-training
  batch); the vocabulary 32128 (T5's SentencePiece).
* GPT-2 small / medium / large (Radford et al. 2019: 12/24/36 layers, d_model 768/1024/1280, 1024-token context,
  vocabulary 50257; 124M/355M/774M parameters), per-GPU batch 8 / 4 / 1 as Fig. 8(b).
* Fig. 8(a)'s small vision models on 224 x 224 images, batch 64 per GPU: ResNet-50 and ResNet-101 (He et al. 2016:
  25.6M / 44.5M parameters, 4.1 / 7.8 GMACs an image) and VGG-16 and VGG-19 (Simonyan & Zisserman 2015: 138.4M /
  143.7M parameters, 15.5 / 19.6 GMACs), built layer by layer from their architectures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

__all__ = ["DEFAULT_EFFICIENCY", "GPU", "GPUS", "Layer", "ModelSpec", "TrainingError", "build_layers", "gpu",
           "model_presets", "preset"]

DEFAULT_EFFICIENCY = 0.5


class TrainingError(ValueError):
    """A job, profile or request that cannot be simulated; the message is one line."""


@dataclass(frozen=True)
class GPU:
    """One accelerator: dense BF16/FP16 peak in TFLOP/s and memory in GB (module docstring for the sources)."""

    name: str
    peak_tflops: float
    memory_gb: float
    source: str


GPUS: dict[str, GPU] = {
    "A100": GPU("A100-SXM 80GB", 312.0, 80.0, "NVIDIA A100 Tensor Core GPU datasheet (BF16 dense)"),
    "H100": GPU("H100-SXM", 989.0, 80.0, "NVIDIA H100 Tensor Core GPU datasheet (BF16 dense, SXM5)"),
    "MI250X": GPU("MI250X", 383.0, 128.0, "AMD Instinct MI250X data sheet (BF16 dense)"),
    "MI300X": GPU("MI300X", 1307.4, 192.0, "AMD Instinct MI300X data sheet (BF16 dense)"),
}


def gpu(name: str) -> GPU:
    """The preset called ``name``: its key or its full name, case-insensitive ("a100", "A100-SXM 80GB"); any other
    name is a TrainingError, so "H100-PCIe" is never priced as the SXM part."""
    key = str(name).strip().upper().replace("_", "-")
    for k, g in GPUS.items():
        if key in (k, g.name.upper(), g.name.upper().replace(" ", "-")):
            return g
    raise TrainingError(f"unknown GPU {str(name)[:40]!r} (choose from {', '.join(GPUS)})")


@dataclass(frozen=True)
class Layer:
    """One layer of a job (module docstring). Times in milliseconds on one GPU; bytes per node; ``tokens``: the
    tokens a node routes through an expert layer (0 elsewhere); ``flops``: forward FLOPs when the FLOPs model made
    it (None from a profile)."""

    name: str
    forward_ms: float
    backward_ms: float
    param_bytes: float
    activation_bytes: float
    expert: bool = False
    tokens: float = 0.0
    flops: float | None = None

    def __post_init__(self):
        for what in ("forward_ms", "backward_ms", "param_bytes", "activation_bytes", "tokens"):
            v = getattr(self, what)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise TrainingError(f"layer {self.name!r}: {what} must be a finite number >= 0, got {v!r}"[:200])
        if self.expert and self.tokens <= 0:
            raise TrainingError(f"layer {self.name!r}: an expert layer needs its routed tokens (> 0)")


@dataclass(frozen=True)
class ModelSpec:
    """A model preset: its architecture (``kind``: "switch", "gpt" or "cnn") and batch (module docstring)."""

    name: str
    kind: str
    description: str
    batch: int                       # sequences (or images): global for "switch", per GPU otherwise
    per_gpu_batch: bool
    d_model: int = 0
    d_ff: int = 0
    heads: int = 0
    d_head: int = 64
    layers: int = 0                  # blocks per stack (encoder and decoder each for "switch")
    vocab: int = 0
    seq: int = 0
    target_seq: int = 0
    experts: int = 0
    expert_every: int = 1
    ffn_matrices: int = 2
    paper_params: float = 0.0        # the parameter count the source publishes
    cnn: tuple = field(default=())   # (name, params, macs per image, activation elements) rows

    @property
    def moe(self) -> bool:
        return self.experts > 0


def _switch(name, d_model, d_ff, heads, layers, experts, every, matrices, params, description) -> ModelSpec:
    return ModelSpec(name, "switch", description, batch=2048, per_gpu_batch=False, d_model=d_model, d_ff=d_ff,
                     heads=heads, layers=layers, vocab=32128, seq=512, target_seq=114, experts=experts,
                     expert_every=every, ffn_matrices=matrices, paper_params=params)


def _gpt(name, layers, d_model, batch, params) -> ModelSpec:
    return ModelSpec(name, "gpt", f"GPT-2 {name.split('-')[-1]} ({params / 1e6:.0f}M), Fig. 8(b)", batch=batch,
                     per_gpu_batch=True, d_model=d_model, d_ff=4 * d_model, heads=d_model // 64, layers=layers,
                     vocab=50257, seq=1024, paper_params=params)


def _conv(name, cin, cout, k, hw):
    """A k x k convolution with bias-free weights plus a batch norm (2 per channel) at output size hw x hw."""
    return (name, k * k * cin * cout + 2 * cout, k * k * cin * cout * hw * hw, cout * hw * hw)


def _vgg(depths) -> tuple:
    rows, cin = [], 3
    for stage, (cout, n, hw) in enumerate(zip((64, 128, 256, 512, 512), depths, (224, 112, 56, 28, 14))):
        for i in range(n):
            rows.append((f"conv{stage + 1}_{i + 1}", 9 * cin * cout + cout, 9 * cin * cout * hw * hw, cout * hw * hw))
            cin = cout
    for name, a, b in (("fc6", 512 * 7 * 7, 4096), ("fc7", 4096, 4096), ("fc8", 4096, 1000)):
        rows.append((name, a * b + b, a * b, b))
    return tuple(rows)


def _resnet(blocks) -> tuple:
    """ResNet's bottleneck stages, one layer per convolution (with its batch norm) as PyTorch holds them; ResNet-50
    comes to 25,557,032 parameters and 4.09 GMACs an image (torchvision's published figures)."""
    rows = [_conv("conv1", 3, 64, 7, 112)]
    cin = 64
    for stage, (n, mid, hw) in enumerate(zip(blocks, (64, 128, 256, 512), (56, 28, 14, 7))):
        out = 4 * mid
        for i in range(n):
            name = f"layer{stage + 1}.{i}"
            first = 2 * hw if i == 0 and stage > 0 else hw      # the stride is on the 3x3 (torchvision's v1.5)
            rows += [_conv(f"{name}.conv1", cin, mid, 1, first), _conv(f"{name}.conv2", mid, mid, 3, hw),
                     _conv(f"{name}.conv3", mid, out, 1, hw)]
            if i == 0:
                rows.append(_conv(f"{name}.downsample", cin, out, 1, hw))
            cin = out
    rows.append(("fc", 2048 * 1000 + 1000, 2048 * 1000, 1000))
    return tuple(rows)


def _cnn(name, rows, params, description) -> ModelSpec:
    return ModelSpec(name, "cnn", description, batch=64, per_gpu_batch=True, paper_params=params, cnn=rows)


_PRESETS = [
    _switch("switch-base-128", 768, 2048, 12, 12, 128, 2, 3, 7.4e9, "Switch-Base, 128 experts (7.4B)"),
    _switch("switch-base-256", 768, 2048, 12, 12, 256, 2, 3, 14.7e9,
            "Switch-Base, 256 experts (14.7B): the paper's 256-node model (Fig. 9)"),
    _switch("switch-large-128", 1024, 2816, 16, 24, 128, 2, 3, 26.3e9, "Switch-Large, 128 experts (26.3B)"),
    _switch("switch-c-2048", 2080, 6144, 32, 15, 2048, 1, 2, 1571e9,
            "Switch-C, 2048 experts (1.571T): the paper's 1.6T model at 1024 nodes (Fig. 9)"),
    _gpt("gpt2-small", 12, 768, 8, 124e6), _gpt("gpt2-medium", 24, 1024, 4, 355e6),
    _gpt("gpt2-large", 36, 1280, 1, 774e6),
    _cnn("resnet50", _resnet((3, 4, 6, 3)), 25.6e6, "ResNet-50, batch 64 (Fig. 8a)"),
    _cnn("resnet101", _resnet((3, 4, 23, 3)), 44.5e6, "ResNet-101, batch 64 (Fig. 8a)"),
    _cnn("vgg16", _vgg((2, 2, 3, 3, 3)), 138.4e6, "VGG-16, batch 64 (Fig. 8a)"),
    _cnn("vgg19", _vgg((2, 2, 4, 4, 4)), 143.7e6, "VGG-19, batch 64 (Fig. 8a)"),
]


def model_presets() -> dict[str, ModelSpec]:
    """Every preset by name (module docstring)."""
    return {m.name: m for m in _PRESETS}


def preset(name: str) -> ModelSpec:
    presets = model_presets()
    key = str(name).strip().lower()
    if key not in presets:
        raise TrainingError(f"unknown model {str(name)[:60]!r} (choose from {', '.join(presets)}, or give --profile)")
    return presets[key]


# ------------------------------------------------------------------------------------------------ the FLOPs model
def _layer(name, flops, params, act_elems, spec_bytes, rate, expert=False, tokens=0.0) -> Layer:
    fwd = flops / rate * 1e3
    return Layer(name, fwd, 2 * fwd, params * spec_bytes, act_elems * spec_bytes, expert, tokens, flops)


def parameters(spec: ModelSpec) -> tuple[float, float]:
    """(non-expert, expert) parameter counts of the whole model (all experts), by the formulas of ``build_layers``."""
    layers = build_layers(spec, nodes=1, gpu_name="A100", efficiency=1.0, bytes_per_param=1)
    return (sum(l.param_bytes for l in layers if not l.expert), sum(l.param_bytes for l in layers if l.expert))


def build_layers(spec: ModelSpec, nodes: int, gpu_name: str = "A100", efficiency: float | None = None,
                 bytes_per_param: float = 2, expert_parallel: bool = True) -> list[Layer]:
    """The layers of ``spec`` on one of ``nodes`` GPUs by the FLOPs model (module docstring). For a Switch model,
    the non-expert layers see the node's local batch (global batch / nodes) and an expert layer holds
    experts / nodes experts (its ``param_bytes``) and computes the node's own tokens' worth (uniform routing,
    capacity factor 1). Without ``expert_parallel`` every node holds every expert and routes its tokens to them
    itself (no all-to-all; ``expert`` False). Activations and parameters take ``bytes_per_param`` bytes an
    element."""
    eff = DEFAULT_EFFICIENCY if efficiency is None else efficiency
    if isinstance(eff, bool) or not isinstance(eff, (int, float)) or not (0 < eff <= 1):
        raise TrainingError(f"the efficiency must be above 0 and at most 1, got {eff!r}"[:120])
    rate = gpu(gpu_name).peak_tflops * 1e12 * eff
    b = float(bytes_per_param)
    if spec.kind == "cnn":
        return [_layer(n, 2 * macs * spec.batch, p, act * spec.batch, b, rate) for n, p, macs, act in spec.cnn]
    local = spec.batch if spec.per_gpu_batch else spec.batch / nodes
    d, attn = spec.d_model, spec.heads * spec.d_head
    out: list[Layer] = []

    def block_attention(prefix, tokens, seq, kv_tokens=None, kv_seq=None):
        proj = 4 * d * attn
        if kv_tokens is None:
            flops = 2 * proj * tokens + 4 * seq * attn * tokens
        else:                                      # cross attention: q, o on our tokens, k, v on the encoder's
            flops = 2 * (proj / 2) * tokens + 2 * (proj / 2) * kv_tokens + 4 * kv_seq * attn * tokens
        out.append(_layer(prefix, flops, proj + d, tokens * d, b, rate))

    def ffn(prefix, tokens, i):
        per = spec.ffn_matrices * d * spec.d_ff
        if spec.moe and i % spec.expert_every == spec.expert_every - 1:
            router = d * spec.experts
            out.append(_layer(prefix + ".router", 2 * router * tokens, router, 0, b, rate))
            held = spec.experts / nodes if expert_parallel else spec.experts
            out.append(_layer(prefix + ".experts", 2 * per * tokens, per * held, tokens * d, b, rate,
                              expert_parallel, tokens if expert_parallel else 0.0))
        else:
            out.append(_layer(prefix + ".ffn", 2 * per * tokens + 0.0, per + d, tokens * d, b, rate))

    if spec.kind == "gpt":
        tokens = local * spec.seq
        out.append(_layer("embed", 0.0, (spec.vocab + spec.seq) * d, tokens * d, b, rate))
        for i in range(spec.layers):
            block_attention(f"h{i}.attn", tokens, spec.seq)
            ffn(f"h{i}", tokens, i)
        out.append(_layer("lm_head", 2 * spec.vocab * d * tokens, 2 * d, tokens * spec.vocab, b, rate))
        return out
    enc, dec = local * spec.seq, local * spec.target_seq
    out.append(_layer("embed", 0.0, spec.vocab * d, enc * d, b, rate))
    for i in range(spec.layers):
        block_attention(f"enc{i}.attn", enc, spec.seq)
        ffn(f"enc{i}", enc, i)
    for i in range(spec.layers):
        block_attention(f"dec{i}.attn", dec, spec.target_seq)
        block_attention(f"dec{i}.cross", dec, spec.target_seq, enc, spec.seq)
        ffn(f"dec{i}", dec, i)
    out.append(_layer("lm_head", 2 * spec.vocab * d * dec, 0.0, dec * spec.vocab, b, rate))
    return out


def scaled(layers: list[Layer], factor: float) -> list[Layer]:
    """``layers`` with compute times times ``factor`` (tensor parallelism splits each layer's work)."""
    return [replace(l, forward_ms=l.forward_ms * factor, backward_ms=l.backward_ms * factor) for l in layers]


def vocabulary_parallel(layers: list[Layer]) -> list[Layer]:
    """The output layer (``lm_head``) split over the vocabulary with a parallel loss, as Megatron's: the logits
    are never gathered, and what the TP group allreduces around it is its input's size (the hidden states), not
    the logits'."""
    last, before = layers[-1], layers[-2] if len(layers) >= 2 else None
    if before is not None and last.name == "lm_head" and last.activation_bytes > before.activation_bytes:
        return layers[:-1] + [replace(last, activation_bytes=before.activation_bytes)]
    return layers
