# SPDX-License-Identifier: MIT
"""Models bundled with fxlens as examples and benchmarks.

The *tangle* model (docs/TANGLE.md) is the benchmark later figures are quoted on: N independent
blocks over one input x of shape [B, 32*N], holding every Optimus family (nested splits, split->cat
identities, stack->unbind round trips, N same-shape linear/tanh/layer_norm/relu/add ops).
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

WIDTH = 32  # columns per block


class TangleBlock(nn.Module):
    """One block: two detours that each give x_i back, then relu(LayerNorm(tanh(Linear(y)))) + r."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(WIDTH, WIDTH)
        self.norm = nn.LayerNorm(WIDTH)

    def forward(self, xi: torch.Tensor) -> torch.Tensor:
        p = torch.split(xi, 8, dim=1)                 # 4 pieces of width 8
        q = torch.split(p[0], 4, dim=1)               # p_0 into 2 pieces of width 4
        y = torch.cat([q[0], q[1], p[1], p[2], p[3]], dim=1)        # == xi
        s = torch.stack([p[0], p[1], p[2], p[3]], dim=1)            # [B, 4, 8]
        u = torch.unbind(s, dim=1)
        r = torch.cat([u[0], u[1], u[2], u[3]], dim=1)              # == xi
        return torch.relu(self.norm(torch.tanh(self.linear(y)))) + r


class Tangle(nn.Module):
    """N TangleBlocks over column slices of one input [B, 32*N]; outputs concatenated along columns."""

    def __init__(self, n: int):
        super().__init__()
        self.n = n
        self.blocks = nn.ModuleList(TangleBlock() for _ in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xs = torch.split(x, WIDTH, dim=1)
        # Index the pieces explicitly: symbolic_trace cannot iterate over a Proxy.
        outs = [self.blocks[i](xs[i]) for i in range(self.n)]
        return torch.cat(outs, dim=1)


def tangle_inputs(n: int, batch: int = 64, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, WIDTH * n, generator=g),)


class TransformerLayer(nn.Module):
    """A post-norm transformer encoder layer (self-attention + MLP), written with plain torch ops so
    that symbolic_trace, Dynamo and torch.export all capture it."""

    def __init__(self, d_model: int = 64, heads: int = 4, d_ff: int = 128):
        super().__init__()
        self.heads = heads
        self.d_head = d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.ff2 = nn.Linear(d_ff, d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = torch.split(self.qkv(x), d, dim=2)
        q = q.reshape(b, t, self.heads, self.d_head).transpose(1, 2)
        k = k.reshape(b, t, self.heads, self.d_head).transpose(1, 2)
        v = v.reshape(b, t, self.heads, self.d_head).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_head), dim=-1)
        h = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        x = self.norm1(x + self.proj(h))
        return self.norm2(x + self.ff2(F.gelu(self.ff1(x))))


def transformer_inputs(batch: int = 2, seq: int = 16, d_model: int = 64, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, seq, d_model, generator=g),)


class CTRModel(nn.Module):
    """A click-through-rate model of the kind Optimus targets: `n_sparse` sparse features arrive as
    columns of one float tensor (ids), each is sliced, cast to int64 and looked up in two embedding
    tables (a wide and a deep one, same dim); the dense features go through a bottom MLP; everything
    is concatenated into a top MLP."""

    def __init__(self, n_sparse: int = 26, n_dense: int = 13, vocab: int = 100, dim: int = 16):
        super().__init__()
        self.n_sparse = n_sparse
        self.n_dense = n_dense
        self.vocab = vocab
        self.wide = nn.ModuleList(nn.Embedding(vocab, dim) for _ in range(n_sparse))
        self.deep = nn.ModuleList(nn.Embedding(vocab, dim) for _ in range(n_sparse))
        self.bottom = nn.Sequential(nn.Linear(n_dense, 32), nn.ReLU(), nn.Linear(32, dim))
        self.top = nn.Sequential(nn.Linear(dim * (2 * n_sparse + 1), 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        feats = [self.bottom(dense)]
        for i in range(self.n_sparse):
            ids = sparse[:, i].long()
            feats.append(self.wide[i](ids))
            feats.append(self.deep[i](ids))
        return torch.sigmoid(self.top(torch.cat(feats, dim=1)))


def ctr_inputs(model: "CTRModel", batch: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    dense = torch.randn(batch, model.n_dense, generator=g)
    sparse = torch.randint(0, model.vocab, (batch, model.n_sparse), generator=g).float()
    return dense, sparse


# ------------------------------------------------------------------------------------------------
# CTR models of four public kinds on the Criteo layout (13 dense + 26 sparse features).
#
# Written the way production CTR code is: one embedding table per sparse feature, looked up one
# feature at a time in a Python loop, per-field first-order terms, lists of tensors concatenated or
# stacked. Those per-feature loops are what Optimus-style horizontal batching (batch_linear,
# batch_layernorm, split/cat merges, ...) targets. Plain torch ops only: torch.fx.symbolic_trace,
# Dynamo and torch.export all capture them. Inputs follow CTRModel: dense [B, 13] float, sparse
# [B, 26] ids as a float tensor (each column cast to int64 before its lookup; an int64 tensor works
# too). Outputs: click probabilities [B, 1].

N_DENSE, N_SPARSE, CTR_VOCAB, CTR_DIM = 13, 26, 1000, 16


class _CriteoBase(nn.Module):
    """Holds the layout and one embedding table per sparse feature (small weights, as CTR code
    initializes them, so that the sigmoid does not saturate)."""

    def __init__(self, n_sparse: int, n_dense: int, vocab: int, dim: int):
        super().__init__()
        self.n_sparse = n_sparse
        self.n_dense = n_dense
        self.vocab = vocab
        self.dim = dim
        self.embeddings = nn.ModuleList(nn.Embedding(vocab, dim) for _ in range(n_sparse))
        for e in self.embeddings:
            nn.init.normal_(e.weight, std=0.05)

    def _add_first_order(self):
        """The first-order (linear) term's weights: a 1-wide table per field, a linear over dense."""
        self.first_order = nn.ModuleList(nn.Embedding(self.vocab, 1) for _ in range(self.n_sparse))
        for e in self.first_order:
            nn.init.normal_(e.weight, std=0.05)
        self.dense_linear = nn.Linear(self.n_dense, 1)

    def first_order_term(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        """[B, 1]: the per-field 1-wide lookups summed, plus the dense linear (DeepFM, xDeepFM)."""
        firsts = []
        for i in range(self.n_sparse):
            ids = sparse[:, i].long()
            firsts.append(self.first_order[i](ids))
        return torch.sum(torch.cat(firsts, dim=1), dim=1, keepdim=True) + self.dense_linear(dense)

    def sparse_embeddings(self, sparse: torch.Tensor):
        """One lookup per feature: [B, dim] each."""
        embs = []
        for i in range(self.n_sparse):
            ids = sparse[:, i].long()
            embs.append(self.embeddings[i](ids))
        return embs


def _mlp(sizes, out: int = 0) -> nn.Sequential:
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    if out:
        layers.append(nn.Linear(sizes[-1], out))
    return nn.Sequential(*layers)


class DeepFM(_CriteoBase):
    """DeepFM (Guo et al. 2017): a first-order term (one 1-wide embedding per field + a linear over
    the dense features), the FM second-order interactions of the field embeddings and a DNN over the
    concatenated embeddings and dense features, summed into one logit."""

    def __init__(self, n_sparse: int = N_SPARSE, n_dense: int = N_DENSE, vocab: int = CTR_VOCAB,
                 dim: int = CTR_DIM, hidden=(256, 128)):
        super().__init__(n_sparse, n_dense, vocab, dim)
        self._add_first_order()
        self.dnn = _mlp([n_sparse * dim + n_dense, *hidden], out=1)

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        linear = self.first_order_term(dense, sparse)
        embs = self.sparse_embeddings(sparse)
        e = torch.stack(embs, dim=1)                                      # [B, F, D]
        square_of_sum = torch.pow(torch.sum(e, dim=1), 2)                 # [B, D]
        sum_of_square = torch.sum(e * e, dim=1)                           # [B, D]
        fm = 0.5 * torch.sum(square_of_sum - sum_of_square, dim=1, keepdim=True)
        deep = self.dnn(torch.cat(embs + [dense], dim=1))
        return torch.sigmoid(linear + fm + deep)


class CrossLayer(nn.Module):
    """One DCN-v2 cross layer: x0 * (W x + b) + x, W full rank."""

    def __init__(self, width: int):
        super().__init__()
        self.linear = nn.Linear(width, width)

    def forward(self, x0: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return x0 * self.linear(x) + x


class DCN(_CriteoBase):
    """DCN-v2 (Wang et al. 2021), parallel form: a cross network and a deep MLP over the same input
    (dense features + the concatenated field embeddings), their outputs concatenated into one logit."""

    def __init__(self, n_sparse: int = N_SPARSE, n_dense: int = N_DENSE, vocab: int = CTR_VOCAB,
                 dim: int = CTR_DIM, cross_layers: int = 3, hidden=(256, 128)):
        super().__init__(n_sparse, n_dense, vocab, dim)
        width = n_dense + n_sparse * dim
        self.cross = nn.ModuleList(CrossLayer(width) for _ in range(cross_layers))
        self.deep = _mlp([width, *hidden])
        self.head = nn.Linear(width + hidden[-1], 1)

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        embs = self.sparse_embeddings(sparse)
        x0 = torch.cat([dense] + embs, dim=1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        return torch.sigmoid(self.head(torch.cat([x, self.deep(x0)], dim=1)))


class CIN(nn.Module):
    """xDeepFM's compressed interaction network: each layer takes the outer products of its input
    feature maps with the field embeddings along the embedding dimension and compresses them with a
    1x1 convolution; every layer's maps are sum-pooled over the embedding dimension."""

    def __init__(self, fields: int, layer_sizes=(64, 64)):
        super().__init__()
        self.fields = fields
        sizes = [fields, *layer_sizes]
        self.convs = nn.ModuleList(nn.Conv1d(sizes[i] * fields, sizes[i + 1], 1) for i in range(len(layer_sizes)))
        self.out_width = sum(layer_sizes)

    def forward(self, x0: torch.Tensor) -> torch.Tensor:          # x0: [B, F, D]
        b, f, d = x0.shape
        xk = x0
        pooled = []
        for conv in self.convs:
            z = xk.unsqueeze(2) * x0.unsqueeze(1)                     # [B, Hk, F, D]
            z = z.reshape(b, xk.shape[1] * f, d)
            xk = torch.relu(conv(z))                                  # [B, Hk+1, D]
            pooled.append(torch.sum(xk, dim=2))
        return torch.cat(pooled, dim=1)


class XDeepFM(_CriteoBase):
    """xDeepFM (Lian et al. 2018): a linear part (per-field first-order embeddings + dense linear),
    a CIN over the stacked field embeddings and a DNN, summed into one logit."""

    def __init__(self, n_sparse: int = N_SPARSE, n_dense: int = N_DENSE, vocab: int = CTR_VOCAB,
                 dim: int = CTR_DIM, cin_sizes=(64, 64), hidden=(256, 128)):
        super().__init__(n_sparse, n_dense, vocab, dim)
        self._add_first_order()
        self.cin = CIN(n_sparse, cin_sizes)
        self.cin_out = nn.Linear(self.cin.out_width, 1)
        self.dnn = _mlp([n_sparse * dim + n_dense, *hidden], out=1)

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        linear = self.first_order_term(dense, sparse)
        embs = self.sparse_embeddings(sparse)
        cin = self.cin_out(self.cin(torch.stack(embs, dim=1)))
        deep = self.dnn(torch.cat(embs + [dense], dim=1))
        return torch.sigmoid(linear + cin + deep)


class InteractingLayer(nn.Module):
    """AutoInt's interacting layer: multi-head self-attention over the fields, a residual projection,
    ReLU."""

    def __init__(self, d_in: int, d_head: int = 16, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.d_head = d_head
        self.query = nn.Linear(d_in, d_head * heads, bias=False)
        self.key = nn.Linear(d_in, d_head * heads, bias=False)
        self.value = nn.Linear(d_in, d_head * heads, bias=False)
        self.residual = nn.Linear(d_in, d_head * heads, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:           # x: [B, F, d_in]
        b, f, _ = x.shape
        q = self.query(x).reshape(b, f, self.heads, self.d_head).transpose(1, 2)
        k = self.key(x).reshape(b, f, self.heads, self.d_head).transpose(1, 2)
        v = self.value(x).reshape(b, f, self.heads, self.d_head).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_head), dim=-1)
        h = torch.matmul(att, v).transpose(1, 2).reshape(b, f, self.heads * self.d_head)
        return torch.relu(h + self.residual(x))


class AutoInt(_CriteoBase):
    """AutoInt (Song et al. 2019): every field becomes a vector (a sparse feature its embedding, a
    dense feature x_j * v_j through its own bias-free Linear(1, dim)), the stacked fields go through
    interacting layers, the result is flattened into one logit."""

    def __init__(self, n_sparse: int = N_SPARSE, n_dense: int = N_DENSE, vocab: int = CTR_VOCAB,
                 dim: int = CTR_DIM, layers: int = 3, heads: int = 2, d_head: int = 16):
        super().__init__(n_sparse, n_dense, vocab, dim)
        self.dense_embeddings = nn.ModuleList(nn.Linear(1, dim, bias=False) for _ in range(n_dense))
        widths = [dim] + [heads * d_head] * layers
        self.interacting = nn.ModuleList(InteractingLayer(widths[i], d_head, heads) for i in range(layers))
        self.head = nn.Linear((n_sparse + n_dense) * widths[-1], 1)

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        fields = []
        for j in range(self.n_dense):
            fields.append(self.dense_embeddings[j](dense[:, j:j + 1]))
        fields += self.sparse_embeddings(sparse)
        x = torch.stack(fields, dim=1)                                 # [B, F, dim]
        for layer in self.interacting:
            x = layer(x)
        return torch.sigmoid(self.head(torch.flatten(x, 1)))


CTR_KINDS = {"deepfm": DeepFM, "dcn": DCN, "xdeepfm": XDeepFM, "autoint": AutoInt}


def ctr_model(kind: str, **kw) -> nn.Module:
    """One of CTR_KINDS, built with its defaults (the Criteo layout) unless `kw` says otherwise."""
    try:
        cls = CTR_KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown CTR kind {kind!r}; known: {', '.join(CTR_KINDS)}") from None
    return cls(**kw)


def ctr_kind_inputs(model: nn.Module, batch: int = 8, seed: int = 0, long_ids: bool = False):
    """(dense [B, n_dense] float, sparse [B, n_sparse] ids below the model's vocab) for any model of
    the Criteo layout (CTR_KINDS and CTRModel); ids as float, like ctr_inputs, or int64."""
    g = torch.Generator().manual_seed(seed)
    dense = torch.randn(batch, model.n_dense, generator=g)
    sparse = torch.randint(0, model.vocab, (batch, model.n_sparse), generator=g)
    return dense, (sparse if long_ids else sparse.float())
