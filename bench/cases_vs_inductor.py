# SPDX-License-Identifier: MIT
"""fxlens' `all` preset against Inductor's own pre-grad passes (Optimus: normalization, the split/cat
family, batch fusions including batch_linear_lhs, dead-code elimination) on the same Dynamo graphs of
small modules: the pattern corpus (Torch IR cases), the mutation-safety suite and the bundled CTR model.

    .venv/bin/python bench/cases_vs_inductor.py [--only SUBSTRING] [--show-worse]

Per case: nodes before, after Inductor, after fxlens, and whether each result still computes the
original's outputs (run by PyTorch on the same inputs). Exit code 1 when fxlens is wrong anywhere.
"""
import argparse
import copy
import os
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
import fxlens  # noqa: E402
from fxlens.pattern_cases import CASES, inputs_for  # noqa: E402

CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))
FUSIONS = ["batch_linear", "batch_linear_lhs", "batch_layernorm", "batch_tanh", "batch_relu", "batch_sigmoid",
           "batch_detach", "batch_nan_to_num", "batch_clamp", "batch_dropout"]
VERTICAL = ["normalization_pass", "merge_splits_pass", "split_cat_pass", "unbind_stack_pass", "unbind_cat_to_view_pass",
            "merge_getitem_cat_pass", "mutate_cat_pass", "merge_stack_tahn_unbind_pass", "split_cat_to_slices_pass",
            "unbind_cat_to_view_pass", "split_stack_to_cats_pass", "unbind_stack_to_slices_pass",
            "move_reshape_out_of_split_stack_pass", "remove_split_with_size_one_pass", "einsum_to_pointwise_pass"]


def _flat(o):
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (list, tuple)):
        return [t for x in o for t in _flat(x)]
    return []


def _aliased_inputs(mod, inputs):
    ins = [t.clone() for t in inputs]
    ptrs = {t.untyped_storage().data_ptr(): i for i, t in enumerate(ins) if isinstance(t, torch.Tensor)}
    return [ptrs.get(o.untyped_storage().data_ptr()) for o in _flat(mod(*ins))]


def _new_input_aliases(before, after, inputs):
    return any(b is not None and b != a for a, b in zip(_aliased_inputs(before, inputs), _aliased_inputs(after, inputs)))


def inductor(gm, inputs):
    """Nodes after Inductor's pre_grad_passes with every Optimus pass on, and whether it still computes."""
    from torch._inductor import config
    from torch._inductor.fx_passes import pre_grad
    g = copy.deepcopy(gm)
    opts = {p: {} for p in FUSIONS + VERTICAL}
    try:
        with config.patch(pre_grad_fusion_options=opts, pattern_matcher=True):
            g = pre_grad.pre_grad_passes(g, [t.clone() for t in inputs])
        g.graph.lint()
        g.recompile()
        with torch.no_grad():
            ok = all(torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in
                     zip(_flat(g(*[t.clone() for t in inputs])), _flat(gm(*[t.clone() for t in inputs]))))
            # The aliasing rule: an output that now shares storage with an input the original's
            # did not share is wrong (a caller writing to it would write to its input).
            if ok and _new_input_aliases(gm, g, inputs):
                ok = "output aliases an input"
        return len(g.graph.nodes), ok
    except Exception as e:  # noqa: BLE001 - Inductor's failures are data here
        return None, f"{type(e).__name__}"


def capture(fn, inputs, tmp, name):
    holder = {}

    class M(torch.nn.Module):
        def forward(self, *xs):
            out = fn(*xs)
            return tuple(out) if isinstance(out, list) else out

    def inner(gm, example_inputs):
        holder["gm"] = gm
        # Parameters Dynamo lifted to inputs come too; copies, since the run may write to its inputs.
        holder["inputs"] = [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in example_inputs]
        return gm.forward

    torch._dynamo.reset()
    be = fxlens.compile_backend(tmp, name=name, weights=True, inner=inner)
    torch.compile(M(), backend=be)(*[t.clone() for t in inputs])
    return be.files[0], holder["gm"], holder["inputs"]


def fxlens_count(path):
    out = path[:-5] + ".opt.json"
    r = subprocess.run([CLI, "optimize", path, "-o", out, "--preset", "all", "--verify"], capture_output=True, text=True)
    nodes = None
    for line in r.stdout.splitlines():
        if line.startswith("nodes:"):
            nodes = int(line.split("->")[1])
    return nodes, r.returncode == 0 and "outputs match" in r.stdout, r.stderr.strip()


def cases():
    extra = os.environ.get("FXLENS_EXTRA_CASES")  # a module with CASES = [(fn, inputs), ...]
    if extra:
        import importlib.util
        spec = importlib.util.spec_from_file_location("extra_cases", extra)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["extra_cases"] = mod  # Dynamo looks functions up by their module
        spec.loader.exec_module(mod)
        for fn, inputs in mod.CASES:
            yield "extra_" + fn.__name__, fn, inputs
        return
    for c in CASES:
        if "torch" in c.irs and c.edit is None:
            yield c.name, c.fn, inputs_for(c)
    import test_mutation_safety as ms
    for fn, shapes in ms.CASES:
        g = torch.Generator().manual_seed(0)
        yield "mutation_" + fn.__name__, fn, [torch.randn(*s, generator=g) for s in shapes]
    from fxlens.models import CTRModel, ctr_inputs
    torch.manual_seed(0)
    m = CTRModel().eval()
    yield "ctr_model", lambda d, s: m(d, s), list(ctr_inputs(m))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--show-worse", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(2)
    rows, wrong, worse = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn, inputs in cases():
            if a.only not in name:
                continue
            try:
                path, gm, gm_inputs = capture(fn, inputs, tmp, name)
            except Exception as e:  # noqa: BLE001
                print(f"{name}: capture failed: {type(e).__name__}")
                continue
            before = len(gm.graph.nodes)
            ind, ind_ok = inductor(gm, gm_inputs)
            fx, fx_ok, err = fxlens_count(path)
            wrong += not fx_ok
            bad = ind is not None and ind_ok is True and fx is not None and fx > ind  # fewer nodes by a wrong result do not count
            worse += bad
            rows.append((name, before, ind, ind_ok, fx, fx_ok))
            if not a.show_worse or bad or not fx_ok:
                print(f"{name:45s} {before:5d} inductor {str(ind):>5s} ({'ok' if ind_ok is True else ind_ok}) "
                      f"fxlens {str(fx):>5s} ({'ok' if fx_ok else 'FAILED ' + err[:80]}){'  WORSE' if bad else ''}", flush=True)
    print(f"{len(rows)} cases; fxlens wrong or failed on {wrong}; more nodes than Inductor on {worse}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
