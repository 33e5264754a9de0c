# SPDX-License-Identifier: MIT
"""fold_view_chain against PyTorch on random chains of reshapes and permutations: one Dynamo graph
holding 24 random chains (reshape to a random factorization, flatten, unflatten, squeeze, unsqueeze,
permute, movedim, transpose) of one input, optimized with the pattern alone and verified, then run
against the eager outputs. Every chain must keep its values; chains that a strided view can express
fold, the others (a reshape that copies mid-chain) fold only after the copy."""
import json
import os
import random
import subprocess

import pytest
import torch
from safetensors.torch import save_file

import fxlens

from clitools import CLI, has_executor

torch.set_num_threads(1)

pytestmark = pytest.mark.skipif(not has_executor(), reason="fxlens-cli built without LibTorch")


def _factorizations(n, rng):
    dims, rest = [], n
    while rest > 1 and len(dims) < 4:
        d = rng.choice([f for f in range(1, rest + 1) if rest % f == 0])
        if d == 1 and rng.random() < 0.7:
            continue
        dims.append(d)
        rest //= d
    if rest > 1 or not dims:
        dims.append(rest)
    return dims


def _random_chain(rng, start_rank):
    """A list of (op, args) steps; shapes are tracked on a meta tensor while building."""
    t = torch.empty(2, 3, 4, device="meta")
    steps = []
    for _ in range(rng.randint(2, 6)):
        r = t.dim()
        kind = rng.choice(["reshape", "permute", "transpose", "movedim", "unsqueeze", "squeeze", "flatten", "unflatten"])
        if kind == "reshape":
            args = (_factorizations(t.numel(), rng),)
        elif kind == "permute" and r >= 2:
            p = list(range(r))
            rng.shuffle(p)
            args = (p,)
        elif kind in ("transpose", "movedim") and r >= 2:
            a, b = rng.sample(range(r), 2)
            args = (a, b - r if rng.random() < 0.3 else b)
        elif kind == "unsqueeze":
            args = (rng.randint(0, r),)
        elif kind == "squeeze" and 1 in t.shape:
            args = (list(t.shape).index(1),)
        elif kind == "flatten" and r >= 2:
            a = rng.randint(0, r - 2)
            args = (a, rng.randint(a + 1, r - 1))
        elif kind == "unflatten" and r >= 1:
            d = rng.randint(0, r - 1)
            size = t.shape[d]
            f = rng.choice([f for f in range(1, size + 1) if size % f == 0])
            args = (d, (f, size // f))
        else:
            continue
        t = getattr(t, kind)(*args)
        steps.append((kind, args))
    return steps


def _apply(x, steps):
    for kind, args in steps:
        x = getattr(x, kind)(*args)
    return x


class _Chains(torch.nn.Module):
    def __init__(self, chains):
        super().__init__()
        self.chains = chains

    def forward(self, x):
        return tuple(_apply(x, s) * 1 for s in self.chains)


def test_random_view_chains_keep_values(tmp_path):
    rng = random.Random(7)
    chains = [_random_chain(rng, 3) for _ in range(24)]
    m = _Chains(chains)
    x = torch.randn(2, 3, 4)
    torch._dynamo.reset()
    backend = fxlens.compile_backend(str(tmp_path), name="chains", weights=True)
    torch.compile(m, backend=backend)(x.clone())
    path = backend.files[0]
    ref = str(tmp_path / "expected.safetensors")
    save_file({f"output:{i}": t.contiguous() for i, t in enumerate(m(x))}, ref)
    out = str(tmp_path / "opt.json")
    r = subprocess.run([CLI, "optimize", path, "-o", out, "--patterns", "fold_view_chain", "--verify"], capture_output=True, text=True)
    assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr
    folds = [int(line.split()[1]) for line in r.stdout.splitlines() if line.strip().startswith("fold_view_chain")]
    assert folds and folds[0] >= 5, r.stdout  # the seed holds chains of both kinds
    before = len(json.load(open(path))["nodes"])
    after = len(json.load(open(out))["nodes"])
    assert after < before
    r = subprocess.run([CLI, "run", out, "--expect", ref], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
