# SPDX-License-Identifier: MIT
"""The CTR models of fxlens.models (DeepFM, DCN, xDeepFM, AutoInt): they run, give click
probabilities [B, 1] in (0, 1), and symbolic_trace, Dynamo and torch.export capture them whole with
the eager outputs."""
import pytest
import torch

from fxlens.models import CTR_KINDS, CTRModel, ctr_kind_inputs, ctr_model

BATCH = 16
KINDS = sorted(CTR_KINDS)


def _model(kind):
    torch.manual_seed(0)
    return ctr_model(kind).eval()


@pytest.mark.parametrize("kind", KINDS)
def test_runs_on_the_criteo_layout(kind):
    m = _model(kind)
    assert (m.n_dense, m.n_sparse, m.vocab, m.dim) == (13, 26, 1000, 16)
    assert len(m.embeddings) == 26 and all(isinstance(e, torch.nn.Embedding) for e in m.embeddings)
    dense, sparse = ctr_kind_inputs(m, BATCH, seed=1)
    assert dense.shape == (BATCH, 13) and sparse.shape == (BATCH, 26) and sparse.dtype == torch.float32
    with torch.no_grad():
        y = m(dense, sparse)
    assert y.shape == (BATCH, 1)
    assert torch.isfinite(y).all() and (y > 0).all() and (y < 1).all()
    assert y.std() > 0  # not a constant
    # int64 ids give the same outputs as the float ids
    _, ids = ctr_kind_inputs(m, BATCH, seed=1, long_ids=True)
    assert ids.dtype == torch.int64
    with torch.no_grad():
        torch.testing.assert_close(m(dense, ids), y, rtol=0, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_symbolic_trace_matches_eager(kind):
    m = _model(kind)
    inputs = ctr_kind_inputs(m, BATCH)
    gm = torch.fx.symbolic_trace(m)
    # one lookup per sparse feature in the traced graph
    lookups = [n for n in gm.graph.nodes if n.op == "call_module" and n.target.startswith("embeddings.")]
    assert len(lookups) == 26
    with torch.no_grad():
        torch.testing.assert_close(gm(*inputs), m(*inputs), rtol=1e-6, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_dynamo_captures_one_graph_matching_eager(kind):
    m = _model(kind)
    inputs = ctr_kind_inputs(m, BATCH)
    torch._dynamo.reset()
    try:
        with torch.no_grad():
            got = torch.compile(m, backend="eager", fullgraph=True)(*inputs)
            want = m(*inputs)
    finally:
        torch._dynamo.reset()
    assert got.shape == (BATCH, 1)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_torch_export_matches_eager(kind):
    m = _model(kind)
    inputs = ctr_kind_inputs(m, BATCH)
    with torch.no_grad():
        ep = torch.export.export(m, inputs)
        torch.testing.assert_close(ep.module()(*inputs), m(*inputs), rtol=1e-6, atol=1e-7)


def test_ctr_model_helpers():
    assert set(CTR_KINDS) == {"deepfm", "dcn", "xdeepfm", "autoint"}
    with pytest.raises(ValueError, match="unknown CTR kind"):
        ctr_model("wide_and_deep")
    m = ctr_model("dcn", vocab=50, dim=8, cross_layers=2)
    dense, sparse = ctr_kind_inputs(m, 4)
    assert int(sparse.max()) < 50
    with torch.no_grad():
        assert m(dense, sparse).shape == (4, 1)
    # the inputs helper serves the bundled CTRModel too
    c = CTRModel()
    dense, sparse = ctr_kind_inputs(c, 4)
    assert dense.shape == (4, 13) and sparse.shape == (4, 26) and int(sparse.max()) < c.vocab
