# SPDX-License-Identifier: MIT
"""A file never becomes running code. Crafted, lint-clean graph and pattern files try to run code when
their exports run (each payload writes a marker file); every case must be refused or written inert:
convert --to python, export-pattern, load_graph, and a graph's weights path. A fuzz test mutates every
string of a real graph with payloads and runs whatever Python comes out."""
import copy
import os
import random
import subprocess
import sys

import pytest
import torch

import fxlens
from fxlens.graph_format import FormatError, read_dict, write_dict

from clitools import CLI, ROOT
EX = os.path.join(ROOT, "resources", "examples")

pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason="fxlens-cli not built")


def _payload(marker):
    return f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"


def _base_graph(tmp_path):
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x).sum(dim=1, keepdim=True) + 1
    path = str(tmp_path / "g.json")
    fxlens.export_module(M(), [torch.randn(2, 3)], path)
    return read_dict(path)


def _run_python(codes, tmp_path):
    """Imports each generated module and runs Model() on random inputs, in one child process."""
    if isinstance(codes, str):
        codes = [codes]
    files = []
    for i, code in enumerate(codes):
        mod = tmp_path / f"gen{i}.py"
        mod.write_text(code)
        files.append(str(mod))
    runner = ("import importlib.util, torch, sys\n"
              f"for i, path in enumerate({files!r}):\n"
              "    try:\n"
              "        spec = importlib.util.spec_from_file_location(f'gen{i}', path)\n"
              "        m = importlib.util.module_from_spec(spec)\n"
              "        spec.loader.exec_module(m)\n"
              "        m.Model()(torch.randn(2, 3))\n"
              "    except BaseException:\n"
              "        pass\n")
    subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True, timeout=300)


def _convert(data, tmp_path):
    path = str(tmp_path / "crafted.json")
    write_dict(data, path)
    r = subprocess.run([CLI, "convert", path, "--to", "python"], capture_output=True, text=True)
    return r


def _craft_cases(marker):
    p = _payload(marker)

    def node_name(d):
        d["nodes"][1]["name"] = f"relu = {p}; relu"
        d["nodes"][2]["args"][0] = {"node": d["nodes"][1]["name"]}

    def target(d):
        d["nodes"][1]["target"] = "builtins.exec"
        d["nodes"][1]["args"] = [p]

    def target_payload(d):
        d["nodes"][1]["target"] = f"torch.relu if {p} else torch.relu"

    def kwarg_name(d):
        d["nodes"][2]["kwargs"] = {f"dim=1, **{{}}) if {p} else (1": 1}

    def opaque(d):
        d["nodes"][2]["kwargs"]["dim"] = {"opaque": p}

    def layout(d):
        d["nodes"][2]["kwargs"]["dtype"] = {"dtype": f"float32 if {p} else torch.float32"}

    def method(d):
        d["nodes"][2]["op"] = "call_method"
        d["nodes"][2]["target"] = f"sum(dim=1) if {p} else x.sum"

    def graph_name(d):
        d["name"] = f"g\r{p}\r"

    return {"node_name": node_name, "target": target, "target_payload": target_payload, "kwarg_name": kwarg_name,
            "opaque": opaque, "layout": layout, "method": method, "graph_name": graph_name}


@pytest.mark.parametrize("case", list(_craft_cases("/dev/null")))
def test_convert_to_python_is_refused_or_inert(case, tmp_path):
    marker = tmp_path / "marker"
    data = _base_graph(tmp_path)
    _craft_cases(marker)[case](data)
    r = _convert(data, tmp_path)
    if r.returncode == 0:
        _run_python(r.stdout, tmp_path)
    else:
        assert "cannot write Python" in r.stderr or "error" in r.stderr, r.stderr
    assert not marker.exists(), f"{case}: generated Python ran code from the file"


def test_benign_graph_still_converts(tmp_path):
    r = _convert(_base_graph(tmp_path), tmp_path)
    assert r.returncode == 0, r.stderr
    ns = {}
    exec(compile(r.stdout, "gen", "exec"), ns)
    out = ns["Model"]()(torch.ones(2, 3))
    assert torch.equal(out, torch.full((2, 1), 4.0))


def test_fuzz_generated_python_runs_no_file_code(tmp_path):
    """Every string of a real graph replaced, one at a time, by a payload: nothing may run it."""
    marker = tmp_path / "marker"
    p = _payload(marker)
    base = read_dict(os.path.join(EX, "transformer_dynamo.json"))
    payloads = [p, f"x\n{p}\n#", f"x'\n{p}\n'", f'x"\n{p}\n"', f"x\r{p}", f"{p} #", f"a.b({p})", "x\u2028" + p]
    slots = []

    def collect(obj, path):
        if isinstance(obj, dict):
            for k, v in obj.items():
                slots.append(("key", path, k))
                collect(v, path + [k])
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                collect(v, path + [i])
        elif isinstance(obj, str):
            slots.append(("value", path, None))
    collect(base["nodes"], ["nodes"])
    collect(base["modules"], ["modules"])
    rng = random.Random(0)
    trials = rng.sample(slots, min(60, len(slots)))
    outputs = []
    for kind, path, key in trials:
        data = copy.deepcopy(base)
        parent = data
        for k in path[:-1]:
            parent = parent[k]
        payload = rng.choice(payloads)
        if kind == "value":
            parent[path[-1]] = payload
        else:
            obj = parent[path[-1]] if path else data
            obj[payload] = obj.pop(key)
        r = _convert(data, tmp_path)
        if r.returncode == 0:
            outputs.append(r.stdout)
    _run_python(outputs, tmp_path)
    assert not marker.exists(), "a payload ran"
    assert outputs  # the fuzz reached the writer, not only the reader


def test_export_pattern_description_stays_a_comment(tmp_path):
    marker = tmp_path / "marker"
    pdir = tmp_path / "pats"
    pdir.mkdir()
    desc = f"cat of one\\n{_payload(marker)}\\n# "
    (pdir / "evil.fxpat").write_text(
        'name = "evil_cat"\nlevel = "both"\nbenefit = 1\nlabels = ["user"]\n'
        f'description = "{desc}"\n\n'
        "def pattern(t: Tensor):\n    y = torch.cat([t])\n    return y\n\n"
        "def replacement(t):\n    return t\n")
    out = tmp_path / "evil.py"
    r = subprocess.run([CLI, "export-pattern", "evil_cat", "--pattern-dir", str(pdir), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    subprocess.run([sys.executable, str(out)], capture_output=True, timeout=120)
    assert not marker.exists()


def test_load_graph_refuses_targets_outside_torch(tmp_path):
    data = _base_graph(tmp_path)
    data["nodes"][1]["target"] = "builtins.exec"
    data["nodes"][1]["args"] = ["print('x')"]
    path = str(tmp_path / "exec.json")
    write_dict(data, path)
    with pytest.raises(FormatError, match="outside the namespaces"):
        fxlens.load_graph(path)
    for name in ("os.system", "subprocess.run", "torch.load", "torch.hub.load", "torch.utils.cpp_extension.load",
                 "importlib.import_module", "torch.__builtins__"):
        data["nodes"][1]["target"] = name
        write_dict(data, path)
        with pytest.raises(FormatError):
            fxlens.load_graph(path)


def test_weights_path_confined_to_graph_folder(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    sub = tmp_path / "g"
    sub.mkdir()
    data = _base_graph(sub)
    data["weights"] = "../secret.txt"
    path = str(sub / "w.json")
    write_dict(data, path)
    with pytest.raises(FormatError, match="outside the graph's folder"):
        fxlens.load_graph(path)
    r = subprocess.run([CLI, "run", path], capture_output=True, text=True)
    if "no LibTorch" not in r.stderr and "LibTorch" not in r.stderr:
        assert r.returncode != 0
        assert "outside the graph's folder" in r.stderr, r.stderr
    assert "TOP-SECRET" not in r.stdout + r.stderr


def test_profiles_and_weights_are_data_only(tmp_path):
    """The profile and safetensors readers take every string as data: payloads in node names, kernel
    names, tensor names and safetensors metadata are printed or ignored, never run."""
    import json
    import struct
    marker = tmp_path / "ran"
    payload = _payload(marker)
    r = subprocess.run([CLI, "profile", os.path.join(EX, "tangle4_fx.json"), "--device", "cpu", "--iters", "1", "--warmup", "0",
                        "-o", str(tmp_path / "p.json")], capture_output=True, text=True)
    if r.returncode == 0:
        p = json.load(open(tmp_path / "p.json"))
        p["graph"] = payload
        p["nodes"] = [[payload, "call_function", payload, payload] for _ in p["nodes"]]
        for k in p["kernels"]:
            k[0] = payload
        json.dump(p, open(tmp_path / "p2.json", "w"))
        r = subprocess.run([CLI, "profile", str(tmp_path / "p2.json"), "--trace", str(tmp_path / "t.json")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    header = {"__metadata__": {"fxlens.aliases": json.dumps({payload: payload}), "x": payload},
              payload: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}
    h = json.dumps(header).encode()
    (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", len(h)) + h + b"\0" * 4)
    g = json.load(open(os.path.join(EX, "tangle4_fx.json")))
    g["weights"] = "w.safetensors"
    json.dump(g, open(tmp_path / "g.json", "w"))
    subprocess.run([CLI, "run", str(tmp_path / "g.json"), "--random-inputs"], capture_output=True, text=True)
    assert not marker.exists()
