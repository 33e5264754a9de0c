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

from clitools import CLI, has_executor, flat_tensors

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


def _run(path, tmp_path):
    out = tmp_path / "out.safetensors"
    r = subprocess.run([CLI, "run", path, "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from safetensors.torch import load_file
    got = load_file(str(out))
    return [got[k] for k in sorted(got, key=lambda k: int(k.split(":")[1]))]


def _check(got, ref):
    ref = flat_tensors(ref)
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


@pytest.mark.slow
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


# ----------------------------------------------------------------------------- custom operators

def _torchvision_library():
    tv = pytest.importorskip("torchvision")
    import glob
    found = glob.glob(os.path.join(os.path.dirname(tv.__file__), "_C*.so"))
    if not found:
        pytest.skip("torchvision without its C++ library")
    return found[0]


class _RoiAlign(torch.nn.Module):
    def forward(self, x, boxes):
        import torchvision
        return torchvision.ops.roi_align(x, boxes, output_size=(2, 2), spatial_scale=1.0, sampling_ratio=2, aligned=True)


def test_custom_operator_with_a_cpp_kernel(tmp_path):
    """An operator registered in C++ (TORCH_LIBRARY, tests/ops): refused with a message naming
    --load-library, run through the dispatcher once the library is loaded."""
    so = os.environ.get("FXLENS_TEST_OPS")
    if not so or not os.path.exists(so):
        pytest.skip("the tests' operator library (tests/ops) is not built")
    torch.ops.load_library(so)

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.ops.fxlens_test_cpp.scaled_shift(x, 3.0).relu()

    x = _r(3, 4)
    path = str(tmp_path / "ops.json")
    fxlens.export_program(torch.export.export(M(), (x,)), path, weights=True)
    r = subprocess.run([CLI, "run", path], capture_output=True, text=True)
    assert r.returncode != 0 and "custom operator fxlens_test_cpp::scaled_shift has a C++ kernel" in r.stderr, r.stderr
    assert "--load-library" in r.stderr and "torch.export or torch.compile" not in r.stderr
    out = tmp_path / "out.safetensors"
    r = subprocess.run([CLI, "run", path, "--load-library", so, "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from safetensors.torch import load_file
    torch.testing.assert_close(load_file(str(out))["output:0"], M()(x))
    r = subprocess.run([CLI, "run", path, "--load-library", str(tmp_path / "missing.so")], capture_output=True, text=True)
    assert r.returncode != 0 and "missing.so: cannot load the operator library" in r.stderr


def test_torchvision_library_needs_python(tmp_path):
    """torchvision's _C.so links PyTorch's Python bindings: the message says a Python process runs it."""
    so = _torchvision_library()
    x = _r(1, 2, 8, 8)
    boxes = torch.tensor([[0, 0.0, 0.0, 4.0, 4.0], [0, 2.0, 2.0, 7.0, 6.0]])
    path = str(tmp_path / "roi.json")
    fxlens.export_program(torch.export.export(_RoiAlign(), (x, boxes)), path, weights=True)
    r = subprocess.run([CLI, "run", path], capture_output=True, text=True)
    assert r.returncode != 0 and "custom operator torchvision::roi_align has a C++ kernel" in r.stderr, r.stderr
    r = subprocess.run([CLI, "run", path, "--load-library", so], capture_output=True, text=True)
    assert r.returncode != 0
    assert "cannot load the operator library" in r.stderr and ("Python" in r.stderr or "undefined symbol" in r.stderr)
    gm = fxlens.load_graph(path, allow_namespaces=["torchvision"])
    torch.testing.assert_close(flat_tensors(gm(x, boxes))[0], _RoiAlign()(x, boxes))


@torch.library.custom_op("fxlens_test::scaled", mutates_args=())
def _scaled(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k + 1


@_scaled.register_fake
def _(x, k):
    return torch.empty_like(x)


class _UsesCustom(torch.nn.Module):
    def forward(self, x):
        return torch.ops.fxlens_test.scaled(x, 3.0).relu()


def test_custom_operator_defined_in_python(tmp_path):
    """An operator with a Python kernel only: the CLI says so and names the Python route; load_graph
    runs it once the namespace is allowed explicitly."""
    x = _r(3, 4)
    path = str(tmp_path / "c.json")
    fxlens.export_program(torch.export.export(_UsesCustom(), (x,)), path, weights=True)
    r = subprocess.run([CLI, "run", path], capture_output=True, text=True)
    assert r.returncode != 0 and "custom operator fxlens_test::scaled" in r.stderr
    assert "allow_namespaces=['fxlens_test']" in r.stderr
    with pytest.raises(fxlens.FormatError, match=r"allow_namespaces=\['fxlens_test'\]"):
        fxlens.load_graph(path)
    gm = fxlens.load_graph(path, allow_namespaces=["fxlens_test"])
    torch.testing.assert_close(flat_tensors(gm(x))[0], _UsesCustom()(x))


@pytest.mark.slow
def test_moe_decoder_python_custom_operator(tmp_path):
    """An MoE decoder from transformers (Mixtral, tiny) calls transformers::grouped_mm_fallback, a
    custom operator with a Python kernel only: fxlens-cli says exactly that and names the Python route,
    which runs the graph with the namespace allowed."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.MixtralConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                                     num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, vocab_size=100,
                                     max_position_embeddings=64, attn_implementation="eager", use_cache=False)
    torch.manual_seed(0)
    model = transformers.MixtralModel(cfg).eval()
    ids = torch.randint(0, 100, (2, 8), generator=torch.Generator().manual_seed(0))
    torch._dynamo.reset()
    be = fxlens.compile_backend(str(tmp_path), weights=True)
    with torch.no_grad():
        torch.compile(model, backend=be)(input_ids=ids)
        ref = model(input_ids=ids).last_hidden_state
    torch._dynamo.reset()
    assert len(be.files) == 1
    r = subprocess.run([CLI, "run", be.files[0]], capture_output=True, text=True)
    assert r.returncode != 0 and "transformers::grouped_mm_fallback has only a Python kernel" in r.stderr, r.stderr
    assert "allow_namespaces=['transformers']" in r.stderr
    gm = fxlens.load_graph(be.files[0], allow_namespaces=["transformers"])
    with torch.no_grad():
        out = gm(*be.inputs[0])
    torch.testing.assert_close(flat_tensors(out)[0], ref, rtol=1e-4, atol=1e-5)


def test_sizes_sliced_from_a_shape(tmp_path):
    """DeepLabV3's head: size = x.shape[-2:] (a slice of a size), then interpolate to it — the
    slice runs on the sequence, and the decomposition of interpolate holds the recorded size."""
    class Head(torch.nn.Module):
        def forward(self, x, feats):
            size = x.shape[-2:]
            return F.interpolate(feats, size=size, mode="bilinear", align_corners=False)

    x, feats = _r(1, 3, 12, 10), _r(1, 4, 3, 3)
    path = str(tmp_path / "g.json")
    fxlens.export_module(Head(), (x, feats), path, weights=True)
    _check(_run(path, tmp_path), Head()(x, feats))
