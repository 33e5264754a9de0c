# SPDX-License-Identifier: MIT
"""Writes a tangle graph of any size for the benchmarks (not committed: large).

    .venv/bin/python bench/make_tangle.py N OUT.json [--source fx|dynamo|aten]

fx (symbolic_trace + shape propagation) is the fastest to produce at large N; dynamo gives the graph
Inductor's pre-grad passes see (minutes at N >= 3200)."""
import argparse
import time

import torch

import fxlens
from fxlens.models import Tangle, tangle_inputs

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("out")
ap.add_argument("--source", choices=["fx", "dynamo", "aten"], default="fx")
a = ap.parse_args()
t = time.time()
model, inputs = Tangle(a.n).eval(), tangle_inputs(a.n)
if a.source == "fx":
    fxlens.export_module(model, inputs, a.out, name=f"tangle{a.n}")
elif a.source == "aten":
    fxlens.export_program(torch.export.export(model, inputs), a.out, name=f"tangle{a.n}")
else:
    from fxlens.examples import _dynamo
    _dynamo(model, inputs, a.out, f"tangle{a.n}")
print(f"wrote {a.out} in {time.time() - t:.1f} s")
