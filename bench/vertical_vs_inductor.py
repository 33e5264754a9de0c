# SPDX-License-Identifier: MIT
"""The vertical preset: fxlens vs PyTorch Inductor's own Optimus pre-grad passes, on the same Dynamo
graph of the tangle model, in one run.

    .venv/bin/python bench/vertical_vs_inductor.py [N ...] [--repeat R] [--bench build/bench/bench_vertical]

For each N: Dynamo captures Tangle(N) once; a backend writes the graph as fxlens JSON and then runs
Inductor's vertical_opt passes (normalization, merge_splits, split_cat, unbind_stack,
unbind_cat_to_view; the set benchmarks/dynamo/optimus.py calls vertical_opt) on that very graph,
timing only the pattern passes. bench_vertical then times fxlens' vertical preset on the JSON.
Prints seconds, node counts and the ratio."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import torch

import fxlens
from fxlens.models import Tangle, tangle_inputs

VERTICAL_OPT = ["normalization_pass", "merge_splits_pass", "split_cat_pass", "unbind_stack_pass", "unbind_cat_to_view_pass"]
# benchmarks/dynamo/optimus.py's "all" = vertical_opt + horizontal_opt (batch_linear, batch_layernorm);
# batch_tanh and batch_relu added as in the catalog's measurement, so every op of the tangle can batch.
FUSIONS = ["batch_linear", "batch_layernorm", "batch_tanh", "batch_relu"]


def inductor_passes(gm, repeat, preset):
    """Best time of Inductor's Optimus passes (vertical_opt, or all) over fresh copies of gm; node counts."""
    import copy

    from torch._inductor import config
    from torch._inductor.fx_passes import pre_grad
    from torch._inductor.fx_passes.split_cat import PRE_GRAD_PATTERNS
    pre_grad.lazy_init()
    best, before, after = float("inf"), len(gm.graph.nodes), None
    options = {p: {} for p in VERTICAL_OPT + (FUSIONS if preset == "all" else [])}
    with config.patch(pre_grad_fusion_options=options, pattern_matcher=True):
        for _ in range(repeat):
            g = copy.deepcopy(gm)
            t = time.perf_counter()
            # pre_grad_passes' order: numpy compat, normalization, group/batch fusions, pattern passes.
            pre_grad.numpy_compat_normalization(g.graph)
            PRE_GRAD_PATTERNS["normalization_pass"].apply(g.graph)
            if preset == "all":
                from torch._inductor.fx_passes.group_batch_fusion import group_batch_fusion_passes
                group_batch_fusion_passes(g.graph, pre_grad=True)
            for name in VERTICAL_OPT[1:]:
                PRE_GRAD_PATTERNS[name].apply(g.graph)
            best = min(best, time.perf_counter() - t)
            after = len(g.graph.nodes)
    return best, before, after


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="*", default=[50, 200])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bench", default=os.path.join("build", "bench", "bench_vertical"))
    ap.add_argument("--preset", choices=["vertical", "all"], default="vertical")
    a = ap.parse_args()
    print(f"torch {torch.__version__}; preset {a.preset}; fxlens bench: {a.bench}")
    print(f"{'N':>6} {'nodes':>8} {'inductor s':>11} {'-> nodes':>9} {'fxlens s':>9} {'-> nodes':>9} {'ratio':>8}")
    for n in a.n:
        results = {}
        with tempfile.TemporaryDirectory() as tmp:
            def inner(gm, example_inputs):
                results["inductor"] = inductor_passes(gm, a.repeat, a.preset)
                return gm.forward

            torch._dynamo.reset()
            be = fxlens.compile_backend(tmp, name=f"tangle{n}", inner=inner)
            model, inputs = Tangle(n).eval(), tangle_inputs(n)
            with torch.no_grad():
                torch.compile(model, backend=be, fullgraph=True)(*inputs)
            out = subprocess.run([a.bench, be.files[0], str(a.repeat), a.preset], capture_output=True, text=True, check=True).stdout
        m = re.search(r"nodes=(\d+)->(\d+) .*best_s=([\d.]+)", out)
        fx_before, fx_after, fx_s = int(m.group(1)), int(m.group(2)), float(m.group(3))
        ind_s, ind_before, ind_after = results["inductor"]
        print(f"{n:>6} {fx_before:>8} {ind_s:>11.3f} {ind_after:>9} {fx_s:>9.4f} {fx_after:>9} {ind_s / fx_s:>7.0f}x", flush=True)


if __name__ == "__main__":
    sys.exit(main())
