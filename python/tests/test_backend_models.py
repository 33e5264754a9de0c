# SPDX-License-Identifier: MIT
"""fxlens.backend on real architectures (ctest label `models`): every model of bench/models.py through
torch.compile(backend=fxlens.backend(...)) and the four CTR kinds (DeepFM, DCN, xDeepFM, AutoInt),
outputs equal eager. Inference folds weights; the CTR kinds also go through Inductor and through a
training step (gradients equal the model's)."""
import copy
import os
import sys

import pytest
import torch

import fxlens
from fxlens import models as fxmodels

from clitools import ROOT, flat_tensors

sys.path.insert(0, os.path.join(ROOT, "bench"))
import models as zoo  # noqa: E402  (bench/models.py)

torch.set_num_threads(2)
RTOL, ATOL = 1e-4, 1e-4


def _close(a, b):
    fa, fb = flat_tensors(a), flat_tensors(b)
    assert len(fa) == len(fb) and fa
    for x, y in zip(fa, fb):
        torch.testing.assert_close(x, y, rtol=RTOL, atol=ATOL)


def _run(model, inputs, **kw):
    torch._dynamo.reset()
    be = fxlens.backend(strict=True, **kw)
    with torch.no_grad():
        ref = model(*inputs)
        out = torch.compile(model, backend=be)(*inputs)
    torch._dynamo.reset()
    _close(out, ref)
    assert be.stats and all(s["mode"] == "inference" for s in be.stats), be.stats
    return be


@pytest.mark.parametrize("name", sorted(zoo.MODELS))
def test_zoo_model(name):
    try:
        model, inputs = zoo.MODELS[name]()
    except ImportError as e:
        pytest.skip(f"{name}: {e}")
    torch.manual_seed(0)
    be = _run(model.eval(), inputs, then="inductor")
    assert sum(s["steps"] for s in be.stats) > 0 or name in ("resnet50", "mobilenet_v3_large", "efficientnet_b0")


@pytest.mark.parametrize("kind", sorted(fxmodels.CTR_KINDS))
def test_ctr_kind_inductor(kind):
    torch.manual_seed(0)
    model = fxmodels.ctr_model(kind).eval()
    inputs = fxmodels.ctr_kind_inputs(model, batch=16)
    be = _run(model, inputs, then="inductor")
    assert sum(s["steps"] for s in be.stats) > 0 and sum(s["frozen"] for s in be.stats) > 0
    assert sum(s["nodes_after"] for s in be.stats) < sum(s["nodes_before"] for s in be.stats)


@pytest.mark.parametrize("kind", sorted(fxmodels.CTR_KINDS))
def test_ctr_kind_training(kind):
    torch.manual_seed(0)
    model = fxmodels.ctr_model(kind).train()
    inputs = fxmodels.ctr_kind_inputs(model, batch=16)
    twin = copy.deepcopy(model)
    torch._dynamo.reset()
    be = fxlens.backend(then="eager", strict=True)
    compiled = torch.compile(model, backend=be)
    for m, f in ((twin, twin), (model, compiled)):
        m.zero_grad()
        f(*inputs).sum().backward()
    torch._dynamo.reset()
    assert be.stats[0]["mode"] == "training" and be.stats[0]["steps"] > 0
    for (n, p), (_, q) in zip(twin.named_parameters(), model.named_parameters()):
        if p.grad is None:
            assert q.grad is None, n
            continue
        torch.testing.assert_close(q.grad, p.grad, rtol=RTOL, atol=ATOL, msg=n)
