# SPDX-License-Identifier: MIT
"""Every positive pattern case, run before and after `fxlens-cli optimize --patterns <pattern>`:
the optimized graph must compute the same outputs (the semantic check of each built-in pattern in
each IR). Negative cases must leave the graph unchanged."""
import os
import re
import subprocess

import pytest
import torch

import fxlens
from fxlens.graph_format import read_dict
from fxlens.pattern_cases import CASES, inputs_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "patterns")
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))

NORMALIZATIONS = {
    "torch": "normalize_split,normalize_unbind,normalize_cat,normalize_stack,normalize_squeeze,normalize_reshape,"
             "normalize_clamp,normalize_detach,numpy_compat",
    "aten": "normalize_cat_aten,normalize_split_aten,normalize_split_with_size_aten",
}


def _rows():
    for case in CASES:
        for ir in case.irs:
            yield pytest.param(case, ir, id=f"{case.name}.{ir}")


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


@pytest.mark.skipif(not os.path.exists(CLI), reason="fxlens-cli not built")
@pytest.mark.parametrize("case,ir", list(_rows()))
def test_case(tmp_path, case, ir):
    src = os.path.join(DATA, f"{case.name}.{ir}.json")
    out = str(tmp_path / "out.json")
    patterns = case.pattern + ("," + NORMALIZATIONS[ir] if case.normalize else "")
    r = subprocess.run([CLI, "optimize", src, "--patterns", patterns, "--checked", "-o", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    fired = f"  {case.pattern:<28} " in r.stdout
    assert fired == case.positive, r.stdout
    if not case.runnable:
        return
    inputs = inputs_for(case)
    # Dynamo orders (and drops unused) placeholders as it likes: feed each by the index in its name.
    placeholders = [n["name"] for n in read_dict(out)["nodes"] if n["op"] == "placeholder"]
    feed = [inputs[int(re.search(r"xs_(\d+)", p).group(1))] for p in placeholders]
    with torch.no_grad():
        want = _flat(case.fn(*inputs))
        weights = src.replace(".json", ".safetensors")  # cases over a module's own weights
        got = _flat(fxlens.load_graph(out, weights=weights if os.path.exists(weights) else None)(*feed))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.shape == b.shape
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-5), (a - b).abs().max()
    if not case.positive:
        assert [n["target"] for n in read_dict(out)["nodes"]] == [n["target"] for n in read_dict(src)["nodes"]] or case.normalize
