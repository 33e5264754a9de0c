# SPDX-License-Identifier: MIT
"""Every file of the malformed corpus (tests/data/malformed: graphs, profiles, safetensors weights,
pattern files) gets a clear message naming the file from the reader that opens it, and never a crash,
a hang or an out-of-memory kill. Each file is a regression: a crash, an overflow or an exhaustion
found by hand or by the fuzzers."""
import glob
import json
import os
import shutil
import subprocess

import pytest

from clitools import CLI, ROOT, has_executor

BAD = os.path.join(ROOT, "tests", "data", "malformed")
GRAPHS = sorted(glob.glob(os.path.join(BAD, "*.json")) + glob.glob(os.path.join(BAD, "*.json.gz")))
PROFILES = sorted(glob.glob(os.path.join(BAD, "profiles", "*.json")))
WEIGHTS = sorted(glob.glob(os.path.join(BAD, "safetensors", "*.safetensors")))
PATTERNS = sorted(glob.glob(os.path.join(BAD, "patterns", "*.fxpat")))
pytestmark = pytest.mark.skipif(not os.path.exists(CLI), reason="fxlens-cli not built")


def _run(args, timeout=60):
    r = subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {args}\n{r.stderr[-2000:]}"
    return r


def test_corpus_covers_every_reader():
    assert len(GRAPHS) >= 30 and len(PROFILES) >= 10 and len(WEIGHTS) >= 10 and len(PATTERNS) >= 10
    assert len(GRAPHS) + len(PROFILES) + len(WEIGHTS) + len(PATTERNS) >= 50


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_graph_files(path):
    for cmd in (["lint"], ["optimize", "--preset", "all"]):  # lint reads as info does, and checks
        r = _run(cmd + [path])
        if r.returncode == 0:  # lint-clean near misses (an unknown op) load; they must not crash
            continue
        assert path in r.stderr and "error" in r.stderr, r.stderr


@pytest.mark.parametrize("path", PROFILES, ids=os.path.basename)
def test_profile_files(path, tmp_path):
    r = _run(["profile", path, "--trace", str(tmp_path / "t.json")])
    assert r.returncode == 3 and path in r.stderr and "error" in r.stderr, r.stderr


@pytest.mark.skipif(not has_executor(), reason="the weights reader runs with the executor")
@pytest.mark.parametrize("path", WEIGHTS, ids=os.path.basename)
def test_weight_files(path, tmp_path):
    graph = json.load(open(os.path.join(ROOT, "resources", "examples", "tangle4_fx.json")))
    graph["weights"] = "w.safetensors"
    json.dump(graph, open(tmp_path / "g.json", "w"))
    shutil.copy(path, tmp_path / "w.safetensors")
    r = _run(["run", str(tmp_path / "g.json"), "--random-inputs"])
    assert r.returncode != 0 and "w.safetensors: error" in r.stderr, r.stderr


@pytest.mark.parametrize("path", PATTERNS, ids=os.path.basename)
def test_pattern_files(path, tmp_path):
    """Refused when compiled (with line and column), or evaluated to a reported error: never a crash,
    and within seconds (evaluation is bounded)."""
    graph = os.path.join(ROOT, "tests", "data", "patterns", "cat_single_pos.torch.json")
    r = _run(["explain", graph, "--pattern", path, "--node", "cat"], timeout=30)
    text = r.stdout + r.stderr
    assert ("error" in text and os.path.basename(path) in text) or "found an error" in text, text
    shutil.copy(path, tmp_path)
    r = _run(["optimize", graph, "--pattern-dir", str(tmp_path), "--preset", "all"], timeout=30)
    assert r.returncode in (0, 3), r.stderr


REGRESS = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "regress", "*.json")))


@pytest.mark.parametrize("path", REGRESS, ids=os.path.basename)
def test_engine_regressions(path, tmp_path):
    """Well-formed graphs on which the engine fuzzer found a fault: `optimize --preset all` in checked
    mode lints after every step, and (with the executor) keeps the outputs."""
    args = ["optimize", path, "--preset", "all", "--checked", "-o", str(tmp_path / "o.json")]
    if has_executor():
        args += ["--verify", "--random-inputs"]
    r = _run(args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rolled back" not in r.stdout + r.stderr
