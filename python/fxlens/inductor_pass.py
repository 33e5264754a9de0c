# SPDX-License-Identifier: MIT
"""fxlens' patterns where Inductor lowers: ``torch._inductor.config.post_grad_custom_post_pass``.

    from torch._inductor import config
    p = fxlens.post_grad_pass(patterns=["my_patterns/"])
    with config.patch(post_grad_custom_post_pass=p):
        torch.compile(model)(x)
    p.stats   # per graph: nodes before/after, steps, rewrites by pattern

Inductor's post-grad graph is functional ATen IR with a fake value on every node, which lowering
reads; the nodes a rewrite creates get theirs by fake-tensor propagation in the compile's own fake
mode. The pass is a CustomGraphPass, so Inductor's caches key on its uuid (the preset and the
pattern files' contents).
"""
from __future__ import annotations

import torch.fx as fx
from torch._inductor.custom_graph_pass import CustomGraphPass

from .backend import PreGradPass


def propagate_fake_values(graph: fx.Graph) -> int:
    """Gives every node of `graph` that lacks one a fake value (meta["val"]), computed from the
    placeholders' in their fake mode. Returns how many nodes got one."""
    from torch._guards import detect_fake_mode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    missing = [n for n in graph.nodes if n.op not in ("placeholder", "output") and "val" not in n.meta]
    if not missing:
        return 0
    vals = [n.meta.get("val") for n in graph.nodes if n.op == "placeholder"]
    mode = detect_fake_mode(vals)
    if mode is None or graph.owning_module is None:
        raise RuntimeError("the post-grad graph's placeholders carry no fake values")
    FakeTensorProp(graph.owning_module, mode).propagate_dont_convert_inputs(*vals)
    return len(missing)


class PostGradPass(PreGradPass, CustomGraphPass):
    """fxlens' engine on Inductor's post-grad graph (see the module's text); `stats` as the backend's."""

    where, ir, source = "post_grad", "aten", "inductor_post_grad"

    def _after(self, graph: fx.Graph) -> None:
        propagate_fake_values(graph)
