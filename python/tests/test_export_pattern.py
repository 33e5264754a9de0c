# SPDX-License-Identifier: MIT
"""`fxlens-cli export-pattern`: a pattern file exported as Python works with torch.fx's
subgraph_rewriter.replace_pattern on a traced module, and keeps its outputs."""
import os
import subprocess

import torch
import torch.fx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))


def _export(name):
    r = subprocess.run([CLI, "export-pattern", name], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ns = {}
    exec(compile(r.stdout, f"<{name}>", "exec"), ns)
    return ns


class _Mm(torch.nn.Module):
    def forward(self, a, b):
        return torch.ops.aten.mm.default(a, b) + 1


class _CatSingle(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.cat([x]))


def _rewrite_and_compare(module, name, inputs, gone, present):
    gm = torch.fx.symbolic_trace(module)
    expected = gm(*inputs)
    ns = _export(name)
    matches = torch.fx.subgraph_rewriter.replace_pattern(gm, ns["pattern"], ns["replacement"])
    assert len(matches) == 1
    targets = [str(n.target) for n in gm.graph.nodes]
    assert not any(gone in t for t in targets) and any(present in t for t in targets), targets
    torch.testing.assert_close(gm(*inputs), expected)


def test_exported_aten_pattern_rewrites_a_traced_module():
    a, b = torch.randn(64, 16), torch.randn(16, 8)
    _rewrite_and_compare(_Mm(), "decompose_mm", (a, b), "aten.mm.default", "aten.sum.dim_IntList")


def test_exported_torch_pattern_rewrites_a_traced_module():
    _rewrite_and_compare(_CatSingle(), "cat_single", (torch.randn(4, 3),), "method cat", "method relu")
