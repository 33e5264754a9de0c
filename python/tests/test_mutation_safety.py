# SPDX-License-Identifier: MIT
"""Rewrites never change what a graph computes when it writes in place: small modules with an in-place
op at each position relative to a split/cat/stack/unbind family (and a horizontal group), captured by
Dynamo with their inputs. `optimize --preset all --verify` must verify (or leave the graph alone), the
optimized graph must reproduce PyTorch's eager outputs on the same inputs, and no output of the
result may alias a graph input that the original's did not."""
import os
import subprocess

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

import fxlens
from fxlens.graph_format import read_dict

from clitools import CLI, has_executor

torch.set_num_threads(1)

pytestmark = pytest.mark.skipif(not has_executor(), reason="fxlens-cli built without LibTorch")


def copy_into_piece_after_cat(x, y):
    s = torch.split(x, 4, 1)
    c = torch.cat(s, 1)
    s[1].copy_(y)
    return c + 1, x * 1


def add_on_cat_result(x):
    s = torch.split(x.clone(), 4, 1)
    c = torch.cat(s, 1)
    c.add_(1)
    return c, s[0] * 2


def write_before_split(x):
    x = x * 1
    x.mul_(2)
    s = torch.split(x, 4, 1)
    return torch.cat([s[0], s[1], s[2], s[3]], 1) * 3


def write_input_after_cat(x):
    c = torch.cat(torch.split(x, 4, 1), 1)
    x.add_(1)
    return c * 2 + x


def write_stacked_member(a, b):
    st = torch.stack([a, b])
    a.add_(1)
    u = torch.unbind(st)
    return u[0] + a, u[1] * 2


def write_unbind_piece(x):
    x = x * 1
    u = torch.unbind(x, 0)
    u[0].mul_(2)
    return torch.stack(u) + 1


def inplace_act_on_piece(x):
    s = torch.split(x, 4, 1)
    r = torch.relu_(s[0])
    return torch.cat([r, s[1], s[2], s[3]], 1) + x


def zero_source_after_unbind_cat(x):
    u = torch.unbind(x, 1)
    y = torch.cat(u, 1)
    x.zero_()
    return y + 1


def write_one_of_a_horizontal_group(x):
    pieces = [x[:, i] for i in range(6)]
    ts = [torch.tanh(p) for p in pieces]
    pieces[2].add_(5)
    return torch.stack(ts, 1) + x


def write_through_a_view(x):
    x = x * 1
    v = x.view(4, 16)
    s = torch.split(v, 4, 1)
    v.add_(1)
    return torch.cat(s, 1) + 1


def masked_fill_on_stack(x):
    st = torch.stack(torch.unbind(x, 0), 0)
    st.masked_fill_(st > 0, 0.0)
    return st * 2


def functional_relu_on_cat(x):
    c = torch.cat(torch.split(x, 4, 1), 1) * 2
    return F.relu(c, inplace=True) + 1


def iadd_on_piece_of_stack(x):
    u = list(torch.unbind(x.clone(), 0))
    st = torch.stack(u, 0)
    u[1] += 1
    return st + u[1].sum()


_QKV = [torch.nn.Linear(16, 16, bias=False).eval() for _ in range(3)]


def as_strided_after_projections(x):
    """Reads raw storage at fixed strides: fusing the projections (their pieces are strided views of
    one output) or folding the view chains would change what as_strided sees."""
    q, k, v = (lin(x.permute(1, 0, 2)) for lin in _QKV)
    L, B, _ = k.shape
    k = k.view(L, B, 4, 4).permute(2, 1, 0, 3).reshape(4, B * L, 4)
    k = k.as_strided((4, B * L, 4), (4, 16, 1))
    return q * 2, k, v + 1


_LHS = [torch.nn.Linear(16, 16).eval() for _ in range(2)]


def strict_views_of_fused_projections(x):
    """Not a mutation but the same hazard: fused projections are strided pieces, and `view` fails on
    strides it cannot view; every step keeps views valid (they become reshapes where needed)."""
    B, L, D = x.shape
    a, b = (lin(x) for lin in _LHS)
    return a.view(B * L * D), b.view(B, L * D), torch.cat(torch.split(x.transpose(0, 1), 4, 2), 2).view(L, B * D)


def stride_query_on_cat(x):
    c = torch.cat(torch.split(x, 4, 1), 1)
    return c * c.stride(0)


CASES = [
    (as_strided_after_projections, [(1, 8, 16)]),
    (stride_query_on_cat, [(4, 16)]),
    (strict_views_of_fused_projections, [(2, 5, 16)]),
    (copy_into_piece_after_cat, [(4, 16), (4, 4)]),
    (add_on_cat_result, [(4, 16)]),
    (write_before_split, [(4, 16)]),
    (write_input_after_cat, [(4, 16)]),
    (write_stacked_member, [(4, 8), (4, 8)]),
    (write_unbind_piece, [(4, 8)]),
    (inplace_act_on_piece, [(4, 16)]),
    (zero_source_after_unbind_cat, [(4, 3, 5)]),
    (write_one_of_a_horizontal_group, [(4, 6, 8)]),
    (write_through_a_view, [(4, 16)]),
    (masked_fill_on_stack, [(4, 8)]),
    (functional_relu_on_cat, [(4, 16)]),
    (iadd_on_piece_of_stack, [(4, 8)]),
]


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _aliases_input(data):
    """Output positions whose value is a placeholder (directly, as fxlens' results would be)."""
    names = {n["name"] for n in data["nodes"] if n["op"] == "placeholder"}
    out = next(n for n in data["nodes"] if n["op"] == "output")
    refs = []

    def walk(a):
        if isinstance(a, dict) and "node" in a:
            refs.append(a["node"])
        elif isinstance(a, dict):
            for v in a.values():
                walk(v)
        elif isinstance(a, list):
            for v in a:
                walk(v)
    walk(out["args"])
    return [r for r in refs if r in names]


@pytest.mark.parametrize("fn,shapes", CASES, ids=[c[0].__name__ for c in CASES])
def test_rewrites_are_verified_or_refused(fn, shapes, tmp_path):
    g = torch.Generator().manual_seed(0)
    inputs = [torch.randn(*s, generator=g) for s in shapes]
    torch._dynamo.reset()
    backend = fxlens.compile_backend(str(tmp_path), name="m", weights=True)
    torch.compile(_Fn(fn), backend=backend)(*[t.clone() for t in inputs])
    path = backend.files[0]
    with torch.no_grad():
        expected = fn(*[t.clone() for t in inputs])
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    ref = str(tmp_path / "expected.safetensors")
    save_file({f"output:{i}": t.contiguous() for i, t in enumerate(expected)}, ref)

    out = str(tmp_path / "opt.json")
    r = subprocess.run([CLI, "optimize", path, "-o", out, "--preset", "all", "--verify"], capture_output=True, text=True)
    assert r.returncode == 0 and "outputs match" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([CLI, "run", out, "--expect", ref], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    before, after = _aliases_input(read_dict(path)), _aliases_input(read_dict(out))
    assert set(after) <= set(before), f"outputs now alias inputs {after}"
