# SPDX-License-Identifier: MIT
"""Every dtype torch has goes through the graph format and fxlens' safetensors reader and writer:
a one-op graph whose input, weight and output have the dtype runs with `fxlens-cli run -o` and the
file it writes reads back (with the `safetensors` package) equal to eager PyTorch, bit for bit. A
dtype safetensors has no code for (complex32, complex128, quantized, bits, sub-byte integers) is
refused with one line naming the dtype and the node, and no file is written. Errors ATen raises
arrive as one line naming the node, never a C++ backtrace."""
import json
import os
import subprocess

import pytest
import torch
from safetensors.torch import load_file

import fxlens
from fxlens.graph_format import DTYPE_NAMES, FormatError

from clitools import CLI, has_executor

pytestmark = pytest.mark.skipif(not has_executor(), reason="fxlens-cli without LibTorch")

# What safetensors holds (its codes: F64 F32 F16 BF16 C64 I8..I64 U8..U64 BOOL F8_* F4).
STORED = ["float64", "float32", "float16", "bfloat16", "complex64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
          "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2"]
REFUSED = [n for n in DTYPE_NAMES if n not in STORED]


def _run(args, **kw):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120, **kw)


def _bytes(t):
    return t.contiguous().view(torch.uint8)


def _example(dtype, shape, seed):
    """Values of every kind the dtype has (negatives, large integers, NaN bit patterns of float8)."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_complex or dtype.is_floating_point and dtype.itemsize > 1:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 100).to(dtype)
    if dtype.itemsize == 1:  # int8, uint8, float8, float4 pairs: every bit pattern
        return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8).view(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -2**62), min(info.max, 2**62), shape, generator=g, dtype=torch.int64).to(dtype)


class _Cat(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.register_buffer("w", w)

    def forward(self, x):
        return torch.cat([x, self.w])


def _lines(stderr):
    """stderr without PyTorch's warnings ([W...] lines)."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("[W")]


def _assert_one_line(r, *needles):
    lines = _lines(r.stderr)
    assert r.returncode != 0, r.stdout
    assert len(lines) == 1, r.stderr
    assert "Exception raised from" not in r.stderr and "frame #" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("name", STORED)
def test_dtype_round_trips(tmp_path, name):
    dtype = getattr(torch, name)
    x, w = _example(dtype, (2, 3), 1), _example(dtype, (1, 3), 2)
    path = str(tmp_path / "g.json")
    fxlens.export_module(_Cat(w), [x], path, weights=True)
    graph = json.load(open(path))
    assert graph["params"][0]["dtype"] == name
    assert [n for n in graph["nodes"] if n["op"] == "placeholder"][0]["meta"]["val"]["tensor"]["dtype"] == name
    out = str(tmp_path / "out.safetensors")
    r = _run(["run", path, "-o", out])
    assert r.returncode == 0, r.stderr
    assert "Exception raised from" not in r.stderr
    got = load_file(out)["output:0"]
    want = torch.cat([x, w])
    assert got.dtype == dtype and got.shape == want.shape
    assert torch.equal(_bytes(got), _bytes(want))
    # The file fxlens wrote is an inputs file too (its reader), and --expect compares it.
    r = _run(["run", path, "--expect", out])
    assert r.returncode == 0 and "expect:" in r.stdout, r.stdout + r.stderr


class _FFT(torch.nn.Module):
    def forward(self, x):
        return torch.fft.fft(x)


class _ViewAsComplex(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_complex(x)


class _Positive(torch.nn.Module):
    def forward(self, x):
        return x > 0


class _Hash(torch.nn.Module):
    def forward(self, x):
        return torch.hash_tensor(x)


@pytest.mark.parametrize("module,example,dtype", [
    (_FFT(), torch.randn(8), torch.complex64),
    (_ViewAsComplex(), torch.randn(4, 2), torch.complex64),
    (_Positive(), torch.randn(3, 4), torch.bool),
    (_Hash(), torch.randn(3, 4), torch.uint64),
], ids=["fft", "view_as_complex", "bool", "hash_tensor"])
def test_outputs_of_new_dtypes(tmp_path, module, example, dtype):
    path = str(tmp_path / "g.json")
    fxlens.export_module(module, [example], path, weights=True)
    out = str(tmp_path / "out.safetensors")
    r = _run(["run", path, "-o", out])
    assert r.returncode == 0, r.stderr
    got = load_file(out)["output:0"]
    want = module(example)
    assert got.dtype == dtype and got.shape == want.shape
    if dtype.is_complex:
        torch.testing.assert_close(got, want)
    else:
        assert torch.equal(got, want)


def _refusing_graph(name):
    """A one-op graph from a stored dtype to `name`, and its example input."""
    dtype = getattr(torch, name)
    if name == "complex128":
        return _FFT(), torch.randn(8, dtype=torch.float64)
    if name == "complex32":
        class M(torch.nn.Module):
            def forward(self, x):
                return x.to(torch.complex32)
        return M(), torch.randn(8, dtype=torch.float16)
    if name.startswith(("qint", "quint")):
        class Q(torch.nn.Module):
            def forward(self, x):
                return torch.quantize_per_tensor(x, 0.1, 0, dtype)
        return Q(), torch.randn(8)

    class V(torch.nn.Module):  # bits and sub-byte integers: a view of the bytes
        def forward(self, x):
            return x.view(dtype)
    return V(), torch.arange(8, dtype=torch.uint8)


@pytest.mark.parametrize("name", REFUSED)
def test_dtype_without_code_is_refused(tmp_path, name):
    module, example = _refusing_graph(name)
    path = str(tmp_path / "g.json")
    fxlens.export_module(module, [example], path, weights=True)
    node = [n for n in json.load(open(path))["nodes"] if n["op"] not in ("placeholder", "output")][0]["name"]
    before = set(os.listdir(tmp_path))
    out = str(tmp_path / "out.safetensors")
    line = _assert_one_line(_run(["run", path, "-o", out]), name, f"node '{node}'", "output:0",
                            "nothing was written")
    assert "safetensors has no code for" in line
    assert set(os.listdir(tmp_path)) == before  # no output, no temporary file left behind
    # Without -o the run itself succeeds and names the dtype.
    r = _run(["run", path])
    assert r.returncode == 0 and f"output 0: {name}[" in r.stdout, r.stdout + r.stderr


class _Pass(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.register_buffer("w", w)

    def forward(self, x):
        return x, self.w


@pytest.mark.parametrize("name", ["complex128", "qint8"])
def test_exporter_refuses_what_safetensors_cannot_hold(tmp_path, name):
    bad = torch.randn(3, dtype=torch.complex128) if name == "complex128" else \
        torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.qint8)
    path = str(tmp_path / "g.json")
    with pytest.raises(FormatError, match=f"'w' \\({name}\\).*safetensors has no code for {name}"):
        fxlens.export_module(_Pass(bad), [torch.randn(3)], path, weights=True)
    with pytest.raises(FormatError, match=f"'input:0' \\({name}\\).*safetensors has no code for {name}"):
        fxlens.export_module(_Pass(torch.randn(3)), [bad], path, weights=True)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_graph_format_knows_every_dtype(tmp_path, name):
    """The C++ reader and writer keep every dtype name: meta, params and dtype arguments."""
    tensor = {"shape": [2], "dtype": name, "stride": [1], "requires_grad": False}
    g = {"format": "fxlens-graph", "version": 1, "name": "d", "ir": "aten", "source": "fx",
         "params": [{"name": "w", "kind": "buffer", "shape": [2], "dtype": name, "requires_grad": False}],
         "nodes": [
             {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}, "meta": {"val": {"tensor": tensor}}},
             {"name": "w", "op": "get_attr", "target": "w", "args": [], "kwargs": {}, "meta": {"val": {"tensor": tensor}}},
             {"name": "y", "op": "call_function", "target": "aten.view.dtype", "args": [{"node": "x"}, {"dtype": name}],
              "kwargs": {}, "meta": {"val": {"tensor": tensor}}},
             {"name": "output", "op": "output", "target": "output", "args": [[{"node": "y"}, {"node": "w"}]],
              "kwargs": {}, "meta": {}}]}
    src, dst = tmp_path / "g.json", tmp_path / "again.json"
    src.write_text(json.dumps(g))
    r = _run(["convert", str(src), "--to", "json", "-o", str(dst)])
    assert r.returncode == 0, r.stderr
    again = json.loads(dst.read_text())
    assert again["params"][0]["dtype"] == name
    assert again["nodes"][2]["args"][1] == {"dtype": name}
    assert all(n["meta"]["val"]["tensor"]["dtype"] == name for n in again["nodes"][:3])
    assert fxlens.graph_format.decode_arg({"dtype": name}, {}, "") is getattr(torch, name)


def test_every_torch_dtype_is_named():
    """The tables cover every dtype this torch has (a new torch dtype fails here first)."""
    have = {v for v in vars(torch).values() if isinstance(v, torch.dtype)}
    assert have == {getattr(torch, n) for n in DTYPE_NAMES if hasattr(torch, n)}


def _sparse_graph(tmp_path, then_view=False):
    nodes = [{"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {},
              "meta": {"val": {"tensor": {"shape": [4, 4], "dtype": "float32", "stride": [4, 1], "requires_grad": False}}}},
             {"name": "to_sparse", "op": "call_method", "target": "to_sparse", "args": [{"node": "x"}], "kwargs": {},
              "meta": {}}]
    last = "to_sparse"
    if then_view:
        nodes.append({"name": "flat", "op": "call_method", "target": "view", "args": [{"node": "to_sparse"}, 16],
                      "kwargs": {}, "meta": {}})
        last = "flat"
    nodes.append({"name": "output", "op": "output", "target": "output", "args": [{"node": last}], "kwargs": {}, "meta": {}})
    path = tmp_path / "sparse.json"
    path.write_text(json.dumps({"format": "fxlens-graph", "version": 1, "name": "s", "ir": "torch",
                                "source": "fx", "params": [], "nodes": nodes}))
    return str(path)


def test_aten_errors_are_one_line_naming_the_node(tmp_path):
    # A kernel that throws (view of a sparse tensor): c10::Error's text carries a backtrace.
    _assert_one_line(_run(["run", _sparse_graph(tmp_path, then_view=True)]), "node 'flat'", "view")
    # A sparse output written to a file: refused before anything is written, naming the node.
    g = _sparse_graph(tmp_path)
    out = str(tmp_path / "out.safetensors")
    _assert_one_line(_run(["run", g, "-o", out]), "node 'to_sparse'", "layout Sparse", "output:0")
    assert not os.path.exists(out)
    # Runs, repeats and comparisons of a sparse output still work.
    r = _run(["run", g, "--repeat", "2"])
    assert r.returncode == 0, r.stderr
    assert "Exception raised from" not in r.stderr
