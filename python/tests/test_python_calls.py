# SPDX-License-Identifier: MIT
"""Calls PyTorch defines in Python run in fxlens' executor as the ATen ops they ran at export
(fxlens.decompose): one regression case per class of failure users met (a DCN-style tensordot with
dims=, DeepLabV3's interpolate, losses with reduction strings, Python-only functions, signatures that
differ from ATen's, reflected operators, tensor properties, methods without an ATen op, wrappers that
return part of their op's results), through symbolic_trace and through Dynamo."""
import json
import os
import subprocess

import pytest
import torch
import torch.nn.functional as F

import fxlens
from fxlens.decompose import wants_decomposition

from clitools import CLI, has_executor

pytestmark = pytest.mark.skipif(not has_executor(), reason="fxlens-cli without LibTorch")
torch.set_num_threads(1)

G = torch.Generator().manual_seed(0)


def _r(*shape):
    return torch.randn(*shape, generator=G)


# name -> (function of the inputs, inputs)
CASES = {
    "tensordot_dims": (lambda x, w: torch.tensordot(x, w, dims=([2], [0])), (_r(4, 3, 8), _r(8, 8))),
    "interpolate_bilinear": (lambda x: F.interpolate(x, size=(9, 9), mode="bilinear", align_corners=False), (_r(1, 2, 5, 5),)),
    "interpolate_nearest": (lambda x: F.interpolate(x, scale_factor=2.0), (_r(1, 2, 3, 3),)),
    "softmin": (lambda x: F.softmin(x, dim=-1), (_r(3, 5),)),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t, reduction="sum"), (_r(4, 6), torch.tensor([0, 2, 5, 1]))),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), (_r(4, 6), _r(4, 6))),
    "instance_norm": (lambda x: F.instance_norm(x), (_r(2, 3, 8),)),
    "local_response_norm": (lambda x: F.local_response_norm(x, 2), (_r(1, 4, 5, 5),)),
    "unfold": (lambda x: F.unfold(x, kernel_size=2), (_r(1, 2, 4, 4),)),
    "adaptive_max_pool2d_indices": (lambda x: F.adaptive_max_pool2d(x, 2, return_indices=True), (_r(1, 2, 5, 5),)),
    "max_pool1d": (lambda x: F.max_pool1d(x, 2), (_r(1, 2, 8),)),
    "block_diag": (lambda a, b: torch.block_diag(a, b), (_r(2, 2), _r(3, 1))),
    "cartesian_prod": (lambda a, b: torch.cartesian_prod(a, b), (_r(3), _r(2))),
    "meshgrid": (lambda a, b: torch.meshgrid(a, b, indexing="ij"), (_r(3), _r(2))),
    "broadcast_tensors": (lambda a, b: torch.broadcast_tensors(a, b), (_r(3, 1), _r(1, 4))),
    "cdist_compute_mode": (lambda a, b: torch.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"), (_r(4, 3), _r(5, 3))),
    "rsub": (lambda x: torch.Tensor.__rsub__(x, 2.0), (_r(3, 3),)),
    "rpow": (lambda x: torch.Tensor.__rpow__(x, 2.0), (_r(3, 3),)),
    "mH": (lambda x: x.mH, (_r(2, 3, 4),)),
    "byte": (lambda x: (x * 10).abs().byte(), (_r(3, 3),)),
    "unique_consecutive": (lambda x: torch.unique_consecutive(x), (torch.tensor([1.0, 1.0, 2.0, 2.0, 3.0, 1.0]),)),
}


class _One1(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class _One2(_One1):
    def forward(self, x, y):
        return self.fn(x, y)


def One(fn, n=1):
    """A module calling `fn` on its n inputs (symbolic_trace needs a fixed signature)."""
    return (_One1 if n == 1 else _One2)(fn)


def _flat(o):
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (list, tuple)):
        return [t for x in o for t in _flat(x)]
    return []


def _run(path, tmp_path):
    out = tmp_path / "out.safetensors"
    r = subprocess.run([CLI, "run", path, "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from safetensors.torch import load_file
    got = load_file(str(out))
    return [got[k] for k in sorted(got, key=lambda k: int(k.split(":")[1]))]


def _check(got, ref):
    ref = _flat(ref)
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        assert a.dtype == b.dtype and a.shape == b.shape
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolic_trace_route(name, tmp_path):
    fn, inputs = CASES[name]
    path = str(tmp_path / "g.json")
    fxlens.export_module(One(fn, len(inputs)), inputs, path, weights=True)
    _check(_run(path, tmp_path), fn(*inputs))


@pytest.mark.parametrize("name", ["tensordot_dims", "interpolate_bilinear", "cross_entropy", "unfold", "softmin",
                                  "block_diag", "cdist_compute_mode"])
def test_dynamo_route(name, tmp_path):
    fn, inputs = CASES[name]
    torch._dynamo.reset()
    be = fxlens.compile_backend(str(tmp_path), weights=True)
    torch.compile(One(fn, len(inputs)), backend=be)(*inputs)
    torch._dynamo.reset()
    assert len(be.files) == 1
    _check(_run(be.files[0], tmp_path), fn(*inputs))


def test_decomposition_recorded_only_where_it_helps(tmp_path):
    """ATen ops, operators and builtins with an ATen op of their name keep no decomposition."""
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + x.view(-1).sum(), F.interpolate(x, scale_factor=2.0)

    path = str(tmp_path / "g.json")
    gm = fxlens.export_module(M(), (_r(1, 1, 2, 2),), path)
    with open(path) as f:
        nodes = {n["target"]: n for n in json.load(f)["nodes"]}
    assert "decomposition" in nodes["torch.nn.functional.interpolate"]["meta"]
    for target in ("torch.relu", "view", "sum", "operator.add"):
        assert "decomposition" not in nodes[target]["meta"], target
    assert not any(wants_decomposition(n) for n in gm.graph.nodes if n.op in ("placeholder", "output"))


def test_edited_call_drops_its_decomposition(tmp_path):
    """A rewrite that changes a call's arguments must not run the decomposition of the old call:
    the executor then reports the call itself."""
    fn, inputs = CASES["interpolate_bilinear"]
    path = str(tmp_path / "g.json")
    fxlens.export_module(One(fn, len(inputs)), inputs, path, weights=True)
    with open(path) as f:
        data = json.load(f)
    node = next(n for n in data["nodes"] if n["name"] == "interpolate")
    # The placeholder's recorded shape no longer fits the input: the decomposition is refused.
    ph = next(n for n in node["meta"]["decomposition"]["nodes"] if n["op"] == "placeholder")
    ph["meta"]["val"]["tensor"]["shape"] = [1, 2, 6, 6]
    with open(path, "w") as f:
        json.dump(data, f)
    r = subprocess.run([CLI, "run", path], capture_output=True, text=True)
    assert r.returncode != 0 and "node 'interpolate'" in r.stderr and "Traceback" not in r.stderr


class _Constant(torch.nn.Module):
    """A tensor made in forward (Swin's relative position index): Inductor lifts it to
    `_tensor_constant0` of its post-grad graph's module."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        idx = torch.tensor([[0, 1], [1, 0]])
        return self.lin(x)[:, idx].sum(-1)


def test_post_grad_capture_with_lifted_constants(tmp_path):
    model, x = _Constant().eval(), _r(2, 4)
    torch._dynamo.reset()
    with torch.no_grad(), fxlens.capture_post_grad(str(tmp_path)) as cap:
        torch.compile(model)(x)
    torch._dynamo.reset()
    assert len(cap.files) == 1
    with torch.no_grad():
        ref = model(x)
    _check(_run(cap.files[0], tmp_path), ref)
