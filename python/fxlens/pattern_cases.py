# SPDX-License-Identifier: MIT
"""The pattern test corpus: for every built-in pattern, small programs on which it must fire
(positive) and near misses on which it must not (negative, with the expected failure reason), captured
in the IRs the pattern applies to (Torch IR from Dynamo, ATen IR from torch.export).

    .venv/bin/python -m fxlens.pattern_cases tests/data/patterns   # regenerate the corpus

The C++ test (tests/core/tst_Patterns.cpp) checks each case against its golden text and failure
reason; the Python test (python/tests/test_pattern_cases.py) runs every positive case before and
after `fxlens-cli optimize` and compares the outputs numerically."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F


@dataclass
class Case:
    name: str
    pattern: str
    fn: Callable
    shapes: Sequence[Tuple[int, ...]]
    irs: Tuple[str, ...] = ("torch", "aten")
    reason: Optional[str] = None      # None: positive; else a substring of the expected failure
    normalize: bool = True            # run the IR's normalizations alongside the pattern
    decompose: bool = True            # ATen: lower to core ATen (run_decompositions)
    edit: Optional[Callable] = None   # post-edit of the exported JSON dict (hand-made near misses)
    runnable: bool = True             # False when the edit makes the graph invalid for PyTorch
    ids: Tuple[int, ...] = ()         # inputs holding ids (random integers below `vocab`, as floats)
    vocab: int = 10

    @property
    def positive(self) -> bool:
        return self.reason is None


def inputs_for(case: Case, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randint(0, case.vocab, s, generator=g).float() if i in case.ids else torch.randn(*s, generator=g)
                 for i, s in enumerate(case.shapes))


def _split_meta_drop(d):
    for n in d["nodes"]:
        if n["target"] == "aten.split.Tensor":
            n["meta"].pop("val", None)
    return d


def _dead_getitem(d):
    """Adds an unused getitem of the first split and an unused relu."""
    nodes = d["nodes"]
    split = next(n for n in nodes if "split" in n["target"])
    at = nodes.index(split) + 1
    val = split["meta"]["val"]["seq"][0]
    nodes.insert(at, {"name": "dead_piece", "op": "call_function", "target": "operator.getitem",
                      "args": [{"node": split["name"]}, 0], "kwargs": {}, "meta": {"val": val}})
    return d


def _dead_relu(d):
    nodes = d["nodes"]
    ph = next(n for n in nodes if n["op"] == "placeholder")
    tgt = "aten.relu.default" if d.get("ir") == "aten" else "torch.relu"
    nodes.insert(nodes.index(ph) + 1, {"name": "dead_relu", "op": "call_function", "target": tgt,
                                       "args": [{"node": ph["name"]}], "kwargs": {}, "meta": {"val": ph["meta"]["val"]}})
    return d


def _detach_extra_arg(d):
    for n in d["nodes"]:
        if n["op"] == "call_method" and n["target"] == "detach":
            n["args"].append(1)
    return d


def _heads_of_fused(x):
    """Q/K/V heads of one fused projection, each spelled its own way (view / reshape, transpose / permute)."""
    q, k, v = torch.split(x, 4, -1)
    q = q.view(B, 4, 2, 2).transpose(1, 2)
    k = torch.reshape(k, [B, 4, 2, 2]).permute(0, 2, 3, 1)
    v = v.reshape(B, 4, 2, 2).transpose(1, 2)
    return (q @ k) @ v


B = 4
CASES: List[Case] = [
    # --- normalizations (Torch IR) ---
    Case("normalize_split_pos", "normalize_split", lambda x: torch.relu(x.split(4, -1)[1]), [(B, 8)], ("torch",), normalize=False),
    Case("normalize_split_neg", "normalize_split", lambda x: torch.relu(torch.split(x, [4, 4], dim=1)[1]), [(B, 8)], ("torch",),
         reason="already canonical", normalize=False),
    Case("normalize_unbind_pos", "normalize_unbind", lambda x: torch.relu(x.unbind(-1)[1]), [(B, 3)], ("torch",), normalize=False),
    Case("normalize_unbind_neg", "normalize_unbind", lambda x: torch.relu(torch.unbind(x, dim=1)[1]), [(B, 3)], ("torch",),
         reason="already canonical", normalize=False),
    Case("normalize_cat_pos", "normalize_cat", lambda x, y: torch.cat([x, y], -1), [(B, 2), (B, 3)], ("torch",), normalize=False),
    Case("normalize_cat_neg", "normalize_cat", lambda x, y: torch.cat([x, y], dim=1), [(B, 2), (B, 3)], ("torch",),
         reason="already canonical", normalize=False),
    Case("normalize_stack_pos", "normalize_stack", lambda x, y: torch.stack([x, y], -1), [(B, 2), (B, 2)], ("torch",), normalize=False),
    Case("normalize_stack_neg", "normalize_stack", lambda x, y: torch.stack([x, y], dim=2), [(B, 2), (B, 2)], ("torch",),
         reason="already canonical", normalize=False),
    Case("normalize_squeeze_pos", "normalize_squeeze", lambda x: x.squeeze(-1) + 1, [(B, 3, 1)], ("torch",), normalize=False),
    Case("normalize_squeeze_neg", "normalize_squeeze", lambda x: torch.squeeze(x, dim=2) + 1, [(B, 3, 1)], ("torch",),
         reason="already canonical", normalize=False),
    Case("normalize_reshape_pos", "normalize_reshape", lambda x: x.reshape(2, -1) + 1, [(B, 3)], ("torch",), normalize=False),
    Case("normalize_reshape_neg", "normalize_reshape", lambda x: torch.reshape(x, [2, 6]) + 1, [(B, 3)], ("torch",),
         reason="already canonical", normalize=False),
    Case("normalize_clamp_pos", "normalize_clamp", lambda x: x.clamp(-0.5, 0.5) + 1, [(B, 3)], ("torch",), normalize=False),
    Case("normalize_clamp_neg", "normalize_clamp", lambda x: torch.clamp(x, min=-0.5, max=0.5) + 1, [(B, 3)], ("torch",),
         reason="already canonical", normalize=False),
    Case("normalize_detach_pos", "normalize_detach", lambda x: x.detach() + 1, [(B, 3)], ("torch",), normalize=False),
    Case("normalize_detach_neg", "normalize_detach", lambda x: x.detach() + 1, [(B, 3)], ("torch",),
         reason="fits the schema", normalize=False, edit=_detach_extra_arg, runnable=False),
    Case("numpy_compat_pos", "numpy_compat", lambda x: torch.sum(x, axis=1), [(B, 3)], ("torch",), normalize=False),
    Case("numpy_compat_neg", "numpy_compat", lambda x: torch.sum(x, dim=1), [(B, 3)], ("torch",),
         reason="numpy spelling", normalize=False),
    # --- normalizations (ATen IR) ---
    Case("normalize_cat_aten_pos", "normalize_cat_aten", lambda x, y: torch.cat([x, y], -1), [(B, 2), (B, 3)], ("aten",), normalize=False),
    Case("normalize_cat_aten_neg", "normalize_cat_aten", lambda x, y: torch.cat([x, y], 1), [(B, 2), (B, 3)], ("aten",),
         reason="already canonical", normalize=False),
    Case("normalize_split_aten_pos", "normalize_split_aten", lambda x: [p + 1 for p in torch.split(x, 4, 1)], [(B, 10)], ("aten",),
         normalize=False, decompose=False),
    Case("normalize_split_aten_neg", "normalize_split_aten", lambda x: [p + 1 for p in torch.split(x, 4, 1)], [(B, 10)], ("aten",),
         reason="output shapes", normalize=False, decompose=False, edit=_split_meta_drop),
    Case("normalize_split_with_size_aten_pos", "normalize_split_with_size_aten", lambda x: [p + 1 for p in torch.split(x, [3, 7], -1)],
         [(B, 10)], ("aten",), normalize=False),
    Case("normalize_split_with_size_aten_neg", "normalize_split_with_size_aten", lambda x: [p + 1 for p in torch.split(x, [3, 7], 1)],
         [(B, 10)], ("aten",), reason="already canonical", normalize=False),
    # --- vertical ---
    Case("remove_split_with_size_one_pos", "remove_split_with_size_one", lambda x: torch.relu(torch.split(x, 8, 1)[0]), [(B, 8)]),
    Case("remove_split_with_size_one_neg", "remove_split_with_size_one", lambda x: torch.relu(torch.split(x, 4, 1)[0]), [(B, 8)],
         reason="exactly one section"),
    Case("merge_splits_pos", "merge_splits", lambda x: [torch.relu(p) for p in torch.split(x, [2, 6], 1)[:1] + torch.split(torch.split(x, [2, 6], 1)[1], [3, 3], 1)], [(B, 8)]),
    Case("merge_splits_neg", "merge_splits", lambda x: [torch.relu(p) for p in torch.split(x, [2, 6], 1)[:1] + torch.split(torch.split(x, [2, 6], 1)[1], [2, 2], 0)], [(B, 8)],
         reason="outer split dim"),
    Case("merge_split_squeeze_pos", "merge_split_squeeze", lambda x: [torch.squeeze(p, 1) * 2 for p in torch.split(x, 1, 1)], [(B, 3, 2)]),
    Case("merge_split_squeeze_neg", "merge_split_squeeze", lambda x: [torch.squeeze(p, 1) * 2 for p in torch.split(x, 2, 1)], [(B, 4, 1)],
         reason="all of size 1"),
    Case("split_cat_pos", "split_cat", lambda x: torch.relu(torch.cat(torch.split(x, [2, 3, 3], 1), 1)), [(B, 8)]),
    Case("split_cat_neg", "split_cat", lambda x: torch.relu(torch.cat(torch.split(x, [2, 2], 1), 0)), [(B, 4)],
         reason="every piece of one split"),
    Case("merge_getitem_cat_pos", "merge_getitem_cat", lambda x: [torch.relu(torch.cat([s[1], s[2]], 1)), s[0] * 2, s[3] * 3]
         if (s := torch.split(x, [2, 3, 4, 5], 1)) else None, [(B, 14)]),
    Case("merge_getitem_cat_neg", "merge_getitem_cat", lambda x: [torch.relu(torch.cat([s[1], s[2]], 1)), s[1] * 2, s[3] * 3]
         if (s := torch.split(x, [2, 3, 4, 5], 1)) else None, [(B, 14)], reason="also used elsewhere"),
    Case("mutate_cat_pos", "mutate_cat", lambda x: [torch.relu(torch.cat([s[1], s[2]], 1)), s[1] * 2]
         if (s := torch.split(x, [2, 3, 4, 5], 1)) else None, [(B, 14)]),
    Case("mutate_cat_neg", "mutate_cat", lambda x: [torch.relu(torch.cat([s[0], s[2]], 1)), s[1] * 2]
         if (s := torch.split(x, [2, 3, 4, 5], 1)) else None, [(B, 14)], reason="consecutive sub-range"),
    Case("merge_stack_tanh_unbind_pos", "merge_stack_tanh_unbind", lambda x: [u * (i + 1) for i, u in enumerate(
        torch.unbind(torch.tanh(torch.stack(torch.split(x, 4, 1)[1:3], 1)), 1))], [(B, 16)], ("torch",)),
    Case("merge_stack_tanh_unbind_neg", "merge_stack_tanh_unbind", lambda x: [u * (i + 1) for i, u in enumerate(
        torch.unbind(torch.tanh(torch.stack(torch.split(x, 4, 1)[1:3], 1)), 2))], [(B, 16)], ("torch",), reason="the stack dim"),
    Case("split_cat_to_slices_pos", "split_cat_to_slices", lambda x, z: torch.relu(torch.cat([z] + list(torch.split(x, 2, 1)[2:14]) + [z], 1)),
         [(B, 32), (B, 3)], ("torch",)),
    Case("split_cat_to_slices_neg", "split_cat_to_slices", lambda x, z: torch.relu(torch.cat([z] + list(torch.split(x, 2, 1)[2:7]) + [z], 1)),
         [(B, 32), (B, 3)], ("torch",), reason=">= 10"),
    Case("merge_split_cat_aten_pos", "merge_split_cat_aten", lambda x, z: torch.relu(torch.cat([z] + list(torch.split(x, 2, 1)[2:14]) + [z], 1)),
         [(B, 32), (B, 3)], ("aten",)),
    Case("merge_split_cat_aten_neg", "merge_split_cat_aten", lambda x, z: torch.relu(torch.cat([z] + list(torch.split(x, 2, 1)[2:7]) + [z], 1)),
         [(B, 32), (B, 3)], ("aten",), reason=">= 10"),
    Case("unbind_cat_to_view_pos", "unbind_cat_to_view", lambda x: torch.relu(torch.cat(torch.unbind(x, 1), 1)), [(B, 3, 5)]),
    Case("unbind_cat_to_view_cross_pos", "unbind_cat_to_view", lambda x: torch.relu(torch.cat(torch.unbind(x, 2), 0)), [(B, 3, 5)]),
    Case("unbind_cat_to_view_neg", "unbind_cat_to_view", lambda x: torch.relu(torch.cat(torch.unbind(x, 1)[:2], 1)), [(B, 3, 5)],
         reason="every output of one unbind"),
    Case("split_stack_to_cats_pos", "split_stack_to_cats", lambda x: torch.relu(torch.stack(torch.split(x, 4, 1)[1:4], 0)), [(B, 16)], ("torch", "aten"), decompose=False),
    Case("split_stack_to_cats_neg", "split_stack_to_cats", lambda x: torch.relu(torch.stack(torch.split(x, [4, 4, 2, 2], 1)[1:3], 0))
         if False else torch.relu(torch.stack([torch.split(x, [4, 4, 4], 1)[0], x[:, :4]], 0)), [(B, 12)], ("torch", "aten"), decompose=False,
         reason="consecutive pieces of one split"),
    Case("unbind_stack_pos", "unbind_stack", lambda x: torch.relu(torch.stack(torch.unbind(x, 1), 2)), [(B, 3, 5)], ("torch", "aten"), decompose=False),
    Case("unbind_stack_neg", "unbind_stack", lambda x: torch.relu(torch.stack(torch.unbind(x, 1)[1:3], 2)), [(B, 3, 5)], ("torch", "aten"), decompose=False,
         reason="every output of the unbind"),
    Case("unbind_stack_to_slices_pos", "unbind_stack_to_slices", lambda x: torch.relu(torch.stack(torch.unbind(x, 1)[1:3], 0)), [(B, 4, 5)], ("torch", "aten"), decompose=False),
    Case("unbind_stack_to_slices_neg", "unbind_stack_to_slices", lambda x: torch.relu(torch.stack([torch.unbind(x, 1)[0], torch.unbind(x, 1)[2]], 0)),
         [(B, 4, 5)], ("torch", "aten"), decompose=False, reason="consecutive outputs of one unbind"),
    Case("move_reshape_out_of_split_stack_pos", "move_reshape_out_of_split_stack", lambda x: torch.relu(torch.stack(
        [p.reshape(B, 2, 3) for p in torch.split(x, 6, 1)], 1)), [(B, 18)], ("torch",)),
    Case("move_reshape_out_of_split_stack_neg", "move_reshape_out_of_split_stack", lambda x: torch.relu(torch.stack(
        [p.reshape(B, 2, 3) for p in torch.split(x, 6, 1)] + [x[:, :6].reshape(B, 2, 3)], 1)), [(B, 18)], ("torch",),
         reason="consecutive pieces of one split"),
    Case("einsum_to_pointwise_pos", "einsum_to_pointwise", lambda x, w: torch.einsum("bni,bnij->bnj", x, w) + 1, [(2, 3, 4), (2, 3, 4, 5)], ("torch",)),
    Case("einsum_to_pointwise_neg", "einsum_to_pointwise", lambda x, w: torch.einsum("bij,bjk->bik", x, w) + 1, [(2, 3, 4), (2, 4, 5)], ("torch",),
         reason="w.ndim == 4"),
    Case("cat_single_pos", "cat_single", lambda x: torch.relu(torch.cat([x], 1)), [(B, 3)]),
    Case("cat_single_neg", "cat_single", lambda x: torch.relu(torch.cat([x, x], 1)), [(B, 3)], reason="a list of 1"),
    Case("stack_unbind_pos", "stack_unbind", lambda x, y: [u * 2 for u in torch.unbind(torch.stack([x, y, x], 1), 1)], [(B, 3), (B, 3)], ("torch", "aten"), decompose=False),
    Case("stack_unbind_neg", "stack_unbind", lambda x, y: [u * 2 for u in torch.unbind(torch.stack([x, y], 1), 0)], [(B, 3), (B, 3)], ("torch", "aten"), decompose=False,
         reason="the stack dim"),
    Case("fold_view_pos", "fold_view", lambda x: torch.relu(x.reshape(B, 2, 3).reshape(B, 6, 1)), [(B, 6)]),
    Case("fold_view_chain_pos", "fold_view_chain", lambda x: torch.relu(
        x.reshape(B, 3, 6).movedim(1, 0).reshape(3, B, 2, 3).permute(1, 0, 2, 3)), [(B, 18)]),
    Case("fold_view_chain_permute_pos", "fold_view_chain", lambda x: torch.relu(
        x.reshape(B, 2, 3).unsqueeze(1).transpose(2, 3).squeeze(1).unflatten(0, (2, B // 2))), [(B, 6)]),
    Case("fold_view_chain_neg", "fold_view_chain", lambda x: torch.relu(x.reshape(B, 2, 3).transpose(1, 2).reshape(B, 6)), [(B, 6)],
         ("torch",), reason="a view of the chain so far"),
    Case("split_view_chains_pos", "split_view_chains", lambda x: [p.view(B, 2, 2, 3).transpose(1, 2) * (i + 1) for i, p in
                                                                  enumerate(torch.split(x, 6, -1))], [(B, 2, 18)]),
    Case("split_view_chains_spellings_pos", "split_view_chains", _heads_of_fused, [(B, 4, 12)], ("torch",)),
    Case("split_view_chains_neg", "split_view_chains", lambda x: (lambda s: [s[0].transpose(1, 2) * 2, s[1] * 2])(
        torch.split(x, 6, -1)), [(B, 2, 12)],
         reason="bring every piece to one layout"),
    Case("stack_runs_to_cat_view_pos", "stack_runs_to_cat_view", lambda x, y: torch.relu(
        torch.stack([y, *torch.split(x, 3, 1), y * 2], 1)), [(B, 12), (B, 3)], ("torch",)),
    Case("stack_runs_to_cat_view_unbind_pos", "stack_runs_to_cat_view", lambda x, y: torch.relu(
        torch.stack([y, *torch.unbind(x, 1), y * 2], 2)), [(B, 4, 3), (B, 3)], ("torch",)),
    Case("stack_runs_to_cat_view_neg", "stack_runs_to_cat_view", lambda x, y: torch.relu(torch.stack([x, y, x], 1)),
         [(B, 3), (B, 3)], ("torch",), reason="runs of split or unbind pieces"),
    Case("fold_view_neg", "fold_view", lambda x: torch.relu(x.reshape(B, 2, 3)), [(B, 6)], reason="same shape or another view"),
    Case("remove_dead_views_pos", "remove_dead_views", lambda x: torch.relu(torch.split(x, 2, 1)[1]), [(B, 4)], edit=_dead_getitem),
    Case("dedupe_views_pos", "dedupe_views", lambda x: x.reshape(B, 2, 2) + x.reshape(B, 2, 2).sum(), [(B, 4)]),
    Case("dedupe_views_neg", "dedupe_views", lambda x: x.reshape(B, 2, 2) + x.reshape(B, 4, 1).sum(), [(B, 4)],
         reason="an earlier identical call"),
    Case("remove_dead_views_neg", "remove_dead_views", lambda x: torch.relu(x) + 1, [(B, 4)], reason="view-like op", edit=_dead_relu),
    # --- ATen only ---
    Case("merge_unbind_stack_aten_pos", "merge_unbind_stack_aten", lambda x: torch.relu(torch.cat([x[:, i].unsqueeze(1) for i in range(3)], 1)),
         [(B, 3, 5)], ("aten",)),
    Case("merge_unbind_stack_aten_neg", "merge_unbind_stack_aten", lambda x: torch.relu(torch.cat([x[:, i].unsqueeze(1) for i in (0, 2, 1)], 1)),
         [(B, 3, 5)], ("aten",), reason="consecutive indices"),
    Case("merge_select_cat_aten_pos", "merge_select_cat_aten", lambda x: torch.relu(torch.cat([x[:, 0], x[:, 1], x[:, 2]], 1)), [(B, 3, 5)], ("aten",)),
    Case("merge_select_cat_aten_neg", "merge_select_cat_aten", lambda x: torch.relu(torch.cat([x[:, 0], x[:, 1], x[:, 2]], 0)), [(B, 3, 5)], ("aten",),
         reason="(bound before)"),
    Case("move_view_after_cat_pos", "move_view_after_cat", lambda x: torch.relu(torch.cat([p.reshape(B, 2, 4) for p in torch.split(x, 8, 1)], 1)),
         [(B, 16)]),
    Case("move_view_after_cat_neg", "move_view_after_cat", lambda x: torch.relu(torch.cat([p.reshape(B, 2, 4) for p in torch.split(x, 8, 1)], 2)),
         [(B, 16)], reason="the split dim"),
    Case("decompose_mm_pos", "decompose_mm", lambda a, b: torch.mm(a, b) + 1, [(10240, 16), (16, 8)], ("aten",)),
    Case("decompose_mm_neg", "decompose_mm", lambda a, b: torch.mm(a, b) + 1, [(64, 16), (16, 8)], ("aten",), reason="a = xs_0 f32[64, 16]"),
    Case("decompose_addmm_pos", "decompose_addmm", lambda a, b, c: torch.addmm(c, a, b) + 1, [(10240, 16), (16, 8), (8,)], ("aten",)),
    Case("decompose_addmm_neg", "decompose_addmm", lambda a, b, c: torch.addmm(c, a, b) + 1, [(10240, 64), (64, 8), (8,)], ("aten",),
         reason="a.shape[1] < 32"),
    Case("decompose_bmm_pos", "decompose_bmm", lambda a, b: torch.bmm(a, b) + 1, [(10240, 4, 8), (10240, 8, 4)], ("aten",)),
    Case("decompose_bmm_neg", "decompose_bmm", lambda a, b: torch.bmm(a, b) + 1, [(16, 4, 8), (16, 8, 4)], ("aten",), reason="a.shape[0] >= 10240"),
]

# --- pattern files of the catalog family (patterns/*.fxpat, label "catalog") ---
def _s4(x):
    return torch.split(x, [2, 3, 4, 5], 1)


CASES += [
    Case("split_with_one_section_pos", "split_with_one_section", lambda x: torch.relu(torch.split(x, [4], 1)[0]), [(B, 4)]),
    Case("split_with_one_section_neg", "split_with_one_section", lambda x: torch.relu(torch.split(x, [2, 2], 1)[0]), [(B, 4)],
         reason="len(sizes) == 1"),
    Case("split_cat_full_pos", "split_cat_full", lambda x: torch.relu(torch.cat(torch.split(x, [1, 2, 3], 1), 1)), [(B, 6)]),
    Case("split_cat_full_neg", "split_cat_full", lambda x: (lambda s: torch.relu(torch.cat([s[0], s[2], s[1]], 1)))(_s4(x)), [(B, 14)],
         reason="consecutive indices"),
    Case("unbind_stack_full_pos", "unbind_stack_full", lambda x: torch.relu(torch.stack(torch.unbind(x, 1), 2)), [(B, 3, 5)], ("torch",)),
    Case("unbind_stack_full_neg", "unbind_stack_full", lambda x: torch.relu(torch.stack(torch.unbind(x, 1)[:2], 2)), [(B, 3, 5)], ("torch",),
         reason="every output of the unbind"),
    Case("merge_getitem_cat_range_pos", "merge_getitem_cat_range", lambda x: (lambda s: torch.relu(torch.cat([s[1], s[2]], 1)))(_s4(x)), [(B, 14)],
         ("torch",)),
    Case("merge_getitem_cat_range_neg", "merge_getitem_cat_range", lambda x: torch.relu(torch.cat(list(_s4(x)), 1)), [(B, 14)], ("torch",),
         reason="not all pieces"),
    Case("mutate_cat_range_pos", "mutate_cat_range", lambda x: (lambda s: torch.relu(torch.cat([s[1], s[2], s[3]], 1)))(_s4(x)), [(B, 14)],
         ("torch",)),
    Case("mutate_cat_range_neg", "mutate_cat_range", lambda x: torch.relu(torch.cat(list(torch.split(x, [2, 2], 1)), 2)), [(B, 4, 3)],
         ("torch",), reason="(bound before)"),
    Case("unbind_cat_full_pos", "unbind_cat_full", lambda x: torch.relu(torch.cat(torch.unbind(x, 1), 1)), [(B, 3, 5)], ("torch",)),
    Case("unbind_cat_full_neg", "unbind_cat_full", lambda x: torch.relu(torch.cat(torch.unbind(x, 1)[1:], 1)), [(B, 3, 5)], ("torch",),
         reason="range start"),
    Case("split_stack_equal_pos", "split_stack_equal", lambda x: torch.relu(torch.stack(torch.split(x, [2, 2, 2], 1), 2)), [(B, 6)],
         ("torch",)),
    Case("split_stack_equal_neg", "split_stack_equal", lambda x: torch.relu(torch.stack(torch.split(x, [2, 2, 2], 1)[:2], 2)), [(B, 6)],
         ("torch",), reason="every piece, all of one width"),
    Case("unbind_stack_range_pos", "unbind_stack_range", lambda x: torch.relu(torch.stack(torch.unbind(x, 1)[1:3], 2)), [(B, 4, 5)],
         ("torch",)),
    Case("unbind_stack_range_neg", "unbind_stack_range",
         lambda x: (lambda u: torch.relu(torch.stack([u[2], u[1]], 2)))(torch.unbind(x, 1)), [(B, 4, 5)], ("torch",),
         reason="consecutive indices"),
    Case("merge_split_cat_aten_full_pos", "merge_split_cat_aten_full", lambda x: torch.relu(torch.cat(torch.split(x, [1, 2, 3], 1), 1)),
         [(B, 6)], ("aten",)),
    Case("merge_split_cat_aten_full_neg", "merge_split_cat_aten_full",
         lambda x: torch.relu(torch.cat(torch.split(x, [1, 2, 3], 1)[:2], 1)), [(B, 6)], ("aten",), reason="every piece of the split"),
]

# --- horizontal fusion: five independent, identical ops (Inductor's min_fuse_set_size) ---
K = 5


def _unary(op, k=K):
    return lambda x: [op(x[i]) for i in range(k)]


def _relu_then_inplace(x):
    out = []
    for i in range(K):
        y = torch.relu(x[i])
        y.add_(1)
        out.append(y)
    return out


CASES += [
    Case("batch_linear_pos", "batch_linear", lambda x, w, b: [F.linear(x[i], w[i], b[i]) for i in range(K)],
         [(K, 4, 8), (K, 6, 8), (K, 6)], ("torch",)),
    Case("batch_linear_neg", "batch_linear", lambda x, w, b: [F.linear(x[i], w[i], b[i]) for i in range(K - 1)],
         [(K, 4, 8), (K, 6, 8), (K, 6)], ("torch",), reason="5 or more"),
    Case("batch_layernorm_pos", "batch_layernorm", lambda x, w, b: [F.layer_norm(x[i], (8,), w[i], b[i]) for i in range(K)],
         [(K, 4, 8), (K, 8), (K, 8)], ("torch",)),
    Case("batch_layernorm_neg", "batch_layernorm", lambda x, w, b: [F.layer_norm(x[i], (8,), w[i], b[i], eps=1e-5 * (1 + i % 2))
                                                                    for i in range(K)], [(K, 4, 8), (K, 8), (K, 8)], ("torch",),
         reason="5 or more"),
    Case("batch_tanh_pos", "batch_tanh", _unary(torch.tanh), [(K, 4, 8)], ("torch",)),
    Case("batch_tanh_neg", "batch_tanh", _unary(torch.tanh, K - 1), [(K, 4, 8)], ("torch",), reason="5 or more"),
    Case("batch_sigmoid_pos", "batch_sigmoid", _unary(torch.sigmoid), [(K, 4, 8)], ("torch",)),
    Case("batch_sigmoid_neg", "batch_sigmoid", lambda x: [torch.sigmoid(x[i][: 2 + i % 2]) for i in range(K)], [(K, 4, 8)], ("torch",),
         reason="5 or more"),
    Case("batch_relu_pos", "batch_relu", _unary(torch.relu), [(K, 4, 8)], ("torch",)),
    Case("batch_relu_neg", "batch_relu", _relu_then_inplace, [(K, 4, 8)], ("torch",), reason="in-place"),
    Case("batch_detach_pos", "batch_detach", _unary(lambda t: t.detach() * 2), [(K, 4, 8)], ("torch",)),
    Case("batch_detach_neg", "batch_detach", _unary(lambda t: t.detach() * 2, K - 2), [(K, 4, 8)], ("torch",), reason="5 or more"),
    Case("batch_nan_to_num_pos", "batch_nan_to_num", _unary(lambda t: torch.nan_to_num(t, nan=0.5)), [(K, 4, 8)], ("torch",)),
    Case("batch_nan_to_num_neg", "batch_nan_to_num", lambda x: [torch.nan_to_num(x[i], nan=0.1 * i) for i in range(K)], [(K, 4, 8)],
         ("torch",), reason="5 or more"),
    Case("batch_clamp_pos", "batch_clamp", _unary(lambda t: torch.clamp(t, min=-0.5, max=0.5)), [(K, 4, 8)], ("torch",)),
    Case("batch_clamp_neg", "batch_clamp", lambda x: [torch.clamp(x[i], min=-0.1 * i) for i in range(K)], [(K, 4, 8)], ("torch",),
         reason="5 or more"),
    Case("batch_dropout_pos", "batch_dropout", _unary(lambda t: F.dropout(t, p=0.5, training=False) * 2), [(K, 4, 8)], ("torch",)),
    Case("batch_dropout_neg", "batch_dropout", _unary(lambda t: F.dropout(t, p=0.5, training=False) * 2, K - 1), [(K, 4, 8)], ("torch",),
         reason="5 or more"),
    Case("batch_add_pos", "batch_add", lambda x, y: [x[i] + y[i] for i in range(K)], [(K, 4, 8), (K, 4, 8)], ("torch",)),
    Case("batch_add_neg", "batch_add", lambda x, y: [x[i] + 1.5 for i in range(K)], [(K, 4, 8), (K, 4, 8)], ("torch",),
         reason="two tensors of one static shape"),
    Case("batch_mul_pos", "batch_mul", lambda x, y: [x[i] * y[i] for i in range(K)], [(K, 4, 8), (K, 4, 8)], ("torch",)),
    Case("batch_mul_neg", "batch_mul", lambda x, y: [x[i] * y[i] for i in range(K - 1)], [(K, 4, 8), (K, 4, 8)], ("torch",),
         reason="5 or more"),
    Case("batch_linear_post_grad_pos", "batch_linear_post_grad", lambda x, w, b: [F.linear(x[i], w[i], b[i]) for i in range(K)],
         [(K, 4, 8), (K, 6, 8), (K, 6)], ("aten",)),
    Case("batch_linear_post_grad_neg", "batch_linear_post_grad", lambda x, w, b: [F.linear(x[i], w[i], b[i]) for i in range(K - 1)],
         [(K, 4, 8), (K, 6, 8), (K, 6)], ("aten",), reason="5 or more"),
    Case("batch_layernorm_aten_pos", "batch_layernorm_aten", lambda x, w, b: [F.layer_norm(x[i], (8,), w[i], b[i]) for i in range(K)],
         [(K, 4, 8), (K, 8), (K, 8)], ("aten",)),
    Case("batch_layernorm_aten_neg", "batch_layernorm_aten", lambda x, w, b: [F.layer_norm(x[i], (8,), w[i], b[i]) for i in range(K - 1)],
         [(K, 4, 8), (K, 8), (K, 8)], ("aten",), reason="5 or more"),
]
def _inplace_relu_view_read_after(x):
    y = x * 2
    v = y.view(-1)
    z = F.relu(y, inplace=True)
    return z + v.sum()


def _dead_inplace(x):
    y = x * 2
    y.add_(1)
    return y


def _qkv(x, wq, wk, wv, bq, bk, bv):
    return F.linear(x, wq, bq) * F.linear(x, wk, bk) + F.linear(x, wv, bv)


torch.manual_seed(0)
_QKV = torch.nn.ModuleList([torch.nn.Linear(8, 8) for _ in range(3)]).eval()


def _qkv_params(x):
    """Q/K/V projections of one input with the module's own weights (get_attr in every IR)."""
    q, k, v = (lin(x) for lin in _QKV)
    return q * k + v


def _stack_with_unbind_run(a, x, b):
    return torch.stack([a, *torch.unbind(x, 0), b], 0) * 2


def _stack_with_partial_unbind(a, x, b):
    u = torch.unbind(x, 0)
    return torch.stack([a, u[0], u[1], b], 0) * 2


def _lookups(x, t0, t1, t2):
    return torch.cat([F.embedding(x[:, 0].long(), t0), F.embedding(x[:, 1].long(), t1), F.embedding(x[:, 2].long(), t2)], 1)


def _split_run_in_stack(x, a, b):
    return torch.stack([a, *torch.split(x, 4, 1), b], 1) * 2


def _unequal_split_run_in_stack(x, a, b):
    s = torch.split(x, [4, 4, 8], 1)
    return torch.stack([a, s[0], s[1], b], 1) * 2 + s[2].sum()


def _split_run_in_cat_other_dim(x, a):
    return torch.cat([a, *torch.split(x, 4, 1)], 0) * 2


CASES += [
    Case("split_run_in_stack_cat_pos", "split_run_in_stack_cat", _split_run_in_stack, [(B, 16), (B, 4), (B, 4)], ("torch",)),
    Case("split_run_in_cat_other_dim_pos", "split_run_in_stack_cat", _split_run_in_cat_other_dim, [(B, 16), (B, 4)]),
    Case("split_run_in_stack_cat_neg", "split_run_in_stack_cat", _unequal_split_run_in_stack, [(B, 16), (B, 4), (B, 4)], ("torch",),
         reason="every piece of an equal split"),
    Case("batch_embedding_pos", "batch_embedding", _lookups, [(B, 3), (10, 4), (10, 4), (10, 4)], ids=(0,)),
    Case("batch_embedding_neg", "batch_embedding", lambda x, t0, t1: F.embedding(x[:, 0].long(), t0).sum() + F.embedding(x[:, 1].long(), t1).sum(),
         [(B, 3), (10, 4), (10, 6)], ids=(0,), reason="2 or more lookups"),
    Case("cast_through_stack_pos", "cast_through_stack", lambda x: torch.stack([x[:, 0].long(), x[:, 2].long()], 1) * 2, [(B, 3)],
         ("torch",), ids=(0,)),
    Case("cast_through_stack_neg", "cast_through_stack", lambda x: torch.stack([x[:, 0].long(), x[:, 2].long() + 1], 1) * 2,
         [(B, 3)], ("torch",), ids=(0,), reason="a dtype conversion"),
    Case("batch_linear_lhs_pos", "batch_linear_lhs", _qkv_params, [(2, 3, 8)]),
    Case("batch_linear_lhs_inputs_neg", "batch_linear_lhs", _qkv, [(2, 3, 8), (8, 8), (8, 8), (8, 8), (8,), (8,), (8,)],
         reason="the module's parameters"),
    Case("batch_linear_lhs_neg", "batch_linear_lhs", lambda x, w, b: F.linear(x, w, b) * 2, [(2, 3, 8), (8, 8), (8,)],
         reason="2 or more linears"),
    Case("batch_linear_3d_pos", "batch_linear", lambda x, w, b: [F.linear(x[i], w[i], b[i]) for i in range(K)],
         [(K, 2, 3, 8), (K, 6, 8), (K, 6)], ("torch",)),
    Case("split_cat_other_dim_pos", "split_cat_other_dim", lambda x: torch.cat(torch.split(x, 2, 1), 0) + 1, [(B, 8)]),
    Case("split_cat_other_dim_neg", "split_cat_other_dim", lambda x: torch.cat(torch.split(x, 2, 1)[:2], 0) + 1, [(B, 8)],
         reason="every piece of one split"),
    Case("split_cat_negative_dims_pos", "split_cat_other_dim", lambda x: torch.cat(torch.split(x, 2, -1), -2) + 1, [(2, B, 8)]),
    Case("unbind_run_in_stack_pos", "unbind_run_in_stack", _stack_with_unbind_run, [(B, 8), (3, B, 8), (B, 8)], ("torch",)),
    Case("unbind_run_in_stack_neg", "unbind_run_in_stack", _stack_with_partial_unbind, [(B, 8), (3, B, 8), (B, 8)], ("torch",),
         reason="every output of one unbind"),
    Case("dead_code_pos", "dead_code", lambda x: torch.relu(x) + 1, [(B, 4)], edit=_dead_relu),
    Case("dead_code_neg", "dead_code", _dead_inplace, [(B, 4)], ("torch",), reason="without side effects"),
    Case("functionalize_inplace_pos", "functionalize_inplace", lambda x: F.relu(x * 2, inplace=True) + 1, [(B, 4)], ("torch",)),
    Case("functionalize_inplace_neg", "functionalize_inplace", _inplace_relu_view_read_after, [(B, 4)], ("torch",),
         reason="read before the write"),
]
for _op in ("tanh", "sigmoid", "relu"):
    CASES += [
        Case(f"batch_aten_{_op}_pos", f"batch_aten_{_op}", _unary(getattr(torch, _op)), [(K, 4, 8)], ("aten",)),
        Case(f"batch_aten_{_op}_neg", f"batch_aten_{_op}", _unary(getattr(torch, _op), K - 1), [(K, 4, 8)], ("aten",), reason="5 or more"),
    ]
for _op, _f in (("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div)):
    CASES += [
        Case(f"batch_aten_{_op}_pos", f"batch_aten_{_op}", lambda x, y, f=_f: [f(x[i], y[i]) for i in range(K)], [(K, 4, 8), (K, 4, 8)],
             ("aten",)),
        Case(f"batch_aten_{_op}_neg", f"batch_aten_{_op}", lambda x, y, f=_f: [f(x[i], y[i][:1]) for i in range(K)], [(K, 4, 8), (K, 4, 8)],
             ("aten",), reason="two tensors of one static shape"),
    ]


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        out = self.fn(*xs)
        return tuple(out) if isinstance(out, list) else out


def export_case(case: Case, ir: str, path: str) -> None:
    from .export import export_program
    from .examples import _dynamo
    from .graph_format import read_dict, write_dict
    model, inputs = _Fn(case.fn).eval(), inputs_for(case)
    name = f"{case.name}_{ir}"
    def export(weights):
        if ir == "torch":
            _dynamo(model, inputs, path, name, weights=weights)
        else:
            export_program(torch.export.export(model, inputs), path, name=name, decompose=case.decompose, weights=weights)
    export(False)
    if any(n["op"] == "get_attr" for n in read_dict(path)["nodes"]):
        export(True)  # the module's own weights: saved beside the graph (<case>.<ir>.safetensors)
        for extra in (path.replace(".json", ".inputs.safetensors"),):
            if os.path.exists(extra):
                os.remove(extra)  # the test feeds its own inputs
        data = read_dict(path)
        data.pop("inputs", None)
        write_dict(data, path)
    if case.edit:
        write_dict(case.edit(read_dict(path)), path)


def build(out: str, only: Sequence[str] = ()) -> None:
    """Writes the corpus; with `only` (case names), just those cases, merged into the existing manifest."""
    os.makedirs(out, exist_ok=True)
    manifest = []
    if only:
        with open(os.path.join(out, "cases.json")) as f:
            manifest = [c for c in json.load(f) if c["case"] not in only]
    for case in CASES:
        if only and case.name not in only:
            continue
        for ir in case.irs:
            file = f"{case.name}.{ir}.json"
            export_case(case, ir, os.path.join(out, file))
            manifest.append({"case": case.name, "file": file, "ir": ir, "pattern": case.pattern,
                             "expect": "match" if case.positive else "no match", "reason": case.reason or "",
                             "normalize": case.normalize})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"wrote {len(manifest)} cases to {out}")


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else "tests/data/patterns", sys.argv[2:])
