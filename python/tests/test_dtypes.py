# SPDX-License-Identifier: MIT
"""Every dtype torch has goes through the graph format and fxlens' safetensors reader and writer:
a graph whose inputs, weights and outputs have the dtype runs with `fxlens-cli run -o` and the
file it writes reads back (with the `safetensors` package) equal to eager PyTorch, bit for bit. A
dtype safetensors has no code for (complex32, complex128, quantized, bits, sub-byte integers) is
refused with one line naming the dtype and the node, and no file is written. Errors ATen raises
arrive as one line naming the node, never a C++ backtrace.

Each fxlens-cli launch costs LibTorch's start-up, so the kept dtypes share one graph (an input, a
weight and an output of every dtype; one `run -o`, one `run --expect`), the graph-format check is
one graph of every dtype name, and independent launches run two at a time (module-scoped fixtures;
the tests assert on their results, one test per dtype as before). A refusal names only the first
output it cannot save, so every refused dtype keeps a launch of its own."""
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
import torch.fx
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

WORKERS = 2  # the test command's two cores: launches two at a time


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


def _kept_module():
    """One module with, for every stored dtype, an input x_<dtype>, a buffer w_<dtype> and an output
    torch.cat([x_<dtype>, w_<dtype>]) (output k is STORED[k]); its example inputs; eager outputs."""
    root, graph, inputs, want = torch.nn.Module(), torch.fx.Graph(), [], []
    placeholders = [graph.placeholder(f"x_{name}") for name in STORED]
    outs = []
    for name, ph in zip(STORED, placeholders):
        dtype = getattr(torch, name)
        x, w = _example(dtype, (2, 3), 1), _example(dtype, (1, 3), 2)
        root.register_buffer(f"w_{name}", w)
        outs.append(graph.call_function(torch.cat, ([ph, graph.get_attr(f"w_{name}")],)))
        inputs.append(x)
        want.append(torch.cat([x, w]))
    graph.output(tuple(outs))
    return torch.fx.GraphModule(root, graph), inputs, want


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


# Ops whose outputs have a dtype their inputs do not: (id, module, example, output dtype).
NEW = [("fft", _FFT(), torch.randn(8), torch.complex64),
       ("view_as_complex", _ViewAsComplex(), torch.randn(4, 2), torch.complex64),
       ("bool", _Positive(), torch.randn(3, 4), torch.bool),
       ("hash_tensor", _Hash(), torch.randn(3, 4), torch.uint64)]


class _NewDtypes(torch.nn.Module):
    """Every op of NEW in one graph: input k goes to op k, output k is its result."""
    def __init__(self):
        super().__init__()
        self.ops = torch.nn.ModuleList(m for _, m, _, _ in NEW)

    def forward(self, a, b, c, d):
        return tuple(op(x) for op, x in zip(self.ops, (a, b, c, d)))


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """The kept dtypes' graph run with -o, then --expect on that file; beside it (the other worker)
    the NEW ops' graph run with -o."""
    d = tmp_path_factory.mktemp("kept")
    gm, inputs, want = _kept_module()
    path, out = str(d / "g.json"), str(d / "out.safetensors")
    fxlens.export_module(gm, inputs, path, weights=True)
    new_path, new_out = str(d / "new.json"), str(d / "new.safetensors")
    fxlens.export_module(_NewDtypes(), [e for _, _, e, _ in NEW], new_path, weights=True)

    def round_trip():
        # The file fxlens wrote is an inputs file too (its reader), and --expect compares it.
        r = _run(["run", path, "-o", out])
        return r, (_run(["run", path, "--expect", out]) if r.returncode == 0 else None)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        rt, new = pool.submit(round_trip), pool.submit(_run, ["run", new_path, "-o", new_out])
        (run, expect), new = rt.result(), new.result()
    return {"graph": json.load(open(path)), "want": want, "run": run, "expect": expect,
            "out": load_file(out) if run.returncode == 0 else None,
            "new": new, "new_out": load_file(new_out) if new.returncode == 0 else None}


def test_kept_dtypes_share_one_file(kept):
    assert kept["run"].returncode == 0, kept["run"].stderr
    assert sorted(kept["out"]) == sorted(f"output:{k}" for k in range(len(STORED)))
    assert kept["expect"].returncode == 0 and "outputs match" in kept["expect"].stdout, \
        kept["expect"].stdout + kept["expect"].stderr


@pytest.mark.parametrize("name", STORED)
def test_dtype_round_trips(kept, name):
    dtype, k = getattr(torch, name), STORED.index(name)
    graph = kept["graph"]
    assert {p["name"]: p["dtype"] for p in graph["params"]}[f"w_{name}"] == name
    ph = {n["name"]: n for n in graph["nodes"] if n["op"] == "placeholder"}[f"x_{name}"]
    assert ph["meta"]["val"]["tensor"]["dtype"] == name
    r = kept["run"]
    assert r.returncode == 0, r.stderr
    assert "Exception raised from" not in r.stderr
    got, want = kept["out"][f"output:{k}"], kept["want"][k]
    assert got.dtype == dtype and got.shape == want.shape
    assert torch.equal(_bytes(got), _bytes(want))
    # --expect read this output back with fxlens' reader and compared it (its own line; the exit
    # status covers all outputs: test_kept_dtypes_share_one_file).
    r = kept["expect"]
    assert r is not None and "expect:" in r.stdout, r and r.stdout + r.stderr
    compared = r.stdout[r.stdout.index("expect:"):].removeprefix("expect: ").splitlines()
    assert any(line.startswith(f"output {k}: ") and line.endswith(" ok") for line in compared), r.stdout


@pytest.mark.parametrize("case", NEW, ids=[c[0] for c in NEW])
def test_outputs_of_new_dtypes(kept, case):
    _, module, example, dtype = case
    r = kept["new"]
    assert r.returncode == 0, r.stderr
    got = kept["new_out"][f"output:{NEW.index(case)}"]
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


class _AllRefused(torch.nn.Module):
    """Every refusing graph's op in one graph (output k is REFUSED[k]), one input per example kind."""
    def __init__(self):
        super().__init__()
        graphs = [_refusing_graph(n) for n in REFUSED]
        self.kinds = sorted({e.dtype for _, e in graphs}, key=str)
        assert len(self.kinds) == 4
        self.ops = torch.nn.ModuleList(m for m, _ in graphs)
        self.which = [self.kinds.index(e.dtype) for _, e in graphs]

    def examples(self):
        return [_refusing_graph(REFUSED[self.which.index(i)])[1] for i in range(len(self.kinds))]

    def forward(self, a, b, c, d):
        xs = (a, b, c, d)
        return tuple(op(xs[i]) for op, i in zip(self.ops, self.which))


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """Every refused dtype's one-op graph run with -o, each in a directory of its own (two at a
    time, a graph exported while the launches before it run); and all their ops in one graph run
    without -o."""
    results = {}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        d = tmp_path_factory.mktemp("all_refused")
        together = _AllRefused()
        fxlens.export_module(together, together.examples(), str(d / "g.json"), weights=True)
        without_o = pool.submit(_run, ["run", str(d / "g.json")])
        for name in REFUSED:
            d = tmp_path_factory.mktemp(name)
            module, example = _refusing_graph(name)
            path = str(d / "g.json")
            fxlens.export_module(module, [example], path, weights=True)
            node = [n for n in json.load(open(path))["nodes"] if n["op"] not in ("placeholder", "output")][0]["name"]
            before = set(os.listdir(d))
            results[name] = (d, node, before, pool.submit(_run, ["run", path, "-o", str(d / "out.safetensors")]))
        results = {name: (d, node, before, f.result()) for name, (d, node, before, f) in results.items()}
        without_o = without_o.result()
    return results, without_o


@pytest.mark.parametrize("name", REFUSED)
def test_dtype_without_code_is_refused(refused, name):
    d, node, before, r = refused[0][name]
    line = _assert_one_line(r, name, f"node '{node}'", "output:0", "nothing was written")
    assert "safetensors has no code for" in line
    assert set(os.listdir(d)) == before  # no output, no temporary file left behind
    # Without -o the run itself succeeds and names the dtype (all refused dtypes in one graph).
    r = refused[1]
    assert r.returncode == 0 and f"output {REFUSED.index(name)}: {name}[" in r.stdout, r.stdout + r.stderr


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


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """One graph with, for every dtype name, a placeholder x_<dtype>, a buffer w_<dtype> (param and
    get_attr node) and y_<dtype> = aten.view.dtype(x_<dtype>, <dtype>), all outputs; converted to
    json by the C++ reader and writer in one launch."""
    def tensor(name):
        return {"shape": [2], "dtype": name, "stride": [1], "requires_grad": False}

    def meta(name):
        return {"val": {"tensor": tensor(name)}}

    nodes = [{"name": f"x_{n}", "op": "placeholder", "target": f"x_{n}", "args": [], "kwargs": {}, "meta": meta(n)}
             for n in DTYPE_NAMES]
    nodes += [{"name": f"w_{n}", "op": "get_attr", "target": f"w_{n}", "args": [], "kwargs": {}, "meta": meta(n)}
              for n in DTYPE_NAMES]
    nodes += [{"name": f"y_{n}", "op": "call_function", "target": "aten.view.dtype",
               "args": [{"node": f"x_{n}"}, {"dtype": n}], "kwargs": {}, "meta": meta(n)} for n in DTYPE_NAMES]
    nodes.append({"name": "output", "op": "output", "target": "output",
                  "args": [[{"node": f"{p}_{n}"} for n in DTYPE_NAMES for p in ("y", "w")]], "kwargs": {}, "meta": {}})
    g = {"format": "fxlens-graph", "version": 1, "name": "d", "ir": "aten", "source": "fx",
         "params": [{"name": f"w_{n}", "kind": "buffer", "shape": [2], "dtype": n, "requires_grad": False}
                    for n in DTYPE_NAMES],
         "nodes": nodes}
    d = tmp_path_factory.mktemp("convert")
    src, dst = d / "g.json", d / "again.json"
    src.write_text(json.dumps(g))
    r = _run(["convert", str(src), "--to", "json", "-o", str(dst)])
    return g, r, (json.loads(dst.read_text()) if r.returncode == 0 else None)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_graph_format_knows_every_dtype(converted, name):
    """The C++ reader and writer keep every dtype name: meta, params and dtype arguments."""
    g, r, again = converted
    assert r.returncode == 0, r.stderr
    assert [n["name"] for n in again["nodes"]] == [n["name"] for n in g["nodes"]]
    assert [p["name"] for p in again["params"]] == [p["name"] for p in g["params"]]
    assert {p["name"]: p for p in again["params"]}[f"w_{name}"]["dtype"] == name
    nodes = {n["name"]: n for n in again["nodes"]}
    assert nodes[f"y_{name}"]["args"][1] == {"dtype": name}
    assert all(nodes[f"{p}_{name}"]["meta"]["val"]["tensor"]["dtype"] == name for p in ("x", "w", "y"))
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
    path = tmp_path / ("sparse_view.json" if then_view else "sparse.json")
    path.write_text(json.dumps({"format": "fxlens-graph", "version": 1, "name": "s", "ir": "torch",
                                "source": "fx", "params": [], "nodes": nodes}))
    return str(path)


def test_aten_errors_are_one_line_naming_the_node(tmp_path):
    g = _sparse_graph(tmp_path)
    out = str(tmp_path / "out.safetensors")
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        view = pool.submit(_run, ["run", _sparse_graph(tmp_path, then_view=True)])
        write = pool.submit(_run, ["run", g, "-o", out])
        repeat = pool.submit(_run, ["run", g, "--repeat", "2"])
    # A kernel that throws (view of a sparse tensor): c10::Error's text carries a backtrace.
    _assert_one_line(view.result(), "node 'flat'", "view")
    # A sparse output written to a file: refused before anything is written, naming the node.
    _assert_one_line(write.result(), "node 'to_sparse'", "layout Sparse", "output:0")
    assert not os.path.exists(out)
    # Runs, repeats and comparisons of a sparse output still work.
    r = repeat.result()
    assert r.returncode == 0, r.stderr
    assert "Exception raised from" not in r.stderr
