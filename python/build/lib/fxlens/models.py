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
