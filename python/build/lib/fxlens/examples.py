# SPDX-License-Identifier: MIT
"""Regenerates the bundled example graphs in resources/examples/.

    python -m fxlens.examples [--out resources/examples] [--only NAME ...] [--tangle-sizes 50 200 800]

Large graphs are written gzip-compressed (*.json.gz); fxlens reads both forms.
"""
from __future__ import annotations

import argparse
import os
import time

import torch

from . import export_module, export_program, compile_backend
from .models import CTRModel, Tangle, TransformerLayer, ctr_inputs, tangle_inputs, transformer_inputs


def _dynamo(model, inputs, path, name, weights=False):
    torch._dynamo.reset()
    out_dir = os.path.dirname(path)
    be = compile_backend(out_dir, name=name + ".tmp", weights=weights)
    with torch.no_grad():
        torch.compile(model, backend=be, fullgraph=True)(*inputs)
    assert len(be.files) == 1, be.files
    # Re-write under the final name (and compress when asked).
    from .graph_format import read_dict, write_dict
    data = read_dict(be.files[0])
    data["name"] = name
    if weights:
        final_w = path.replace(".json.gz", ".safetensors").replace(".json", ".safetensors")
        os.replace(os.path.join(out_dir, data["weights"]), final_w)
        data["weights"] = os.path.basename(final_w)
        if data.get("inputs"):
            final_i = final_w[:-len(".safetensors")] + ".inputs.safetensors"
            os.replace(os.path.join(out_dir, data["inputs"]), final_i)
            data["inputs"] = os.path.basename(final_i)
    write_dict(data, path)
    if be.files[0] != path:
        os.remove(be.files[0])


def build(out: str, only=None, tangle_sizes=(50, 200, 800)) -> None:
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    jobs = []

    def add(name, fn):
        if not only or any(o in name for o in only):
            jobs.append((name, fn))

    def resnet():
        import torchvision
        return torchvision.models.resnet50(weights=None).eval(), (torch.randn(1, 3, 224, 224),)

    add("resnet50_fx", lambda: export_module(*resnet(), os.path.join(out, "resnet50_fx.json.gz"), name="resnet50"))
    add("resnet50_aten", lambda: export_program(torch.export.export(*resnet()),
                                                os.path.join(out, "resnet50_aten.json.gz"), name="resnet50"))
    tr = lambda: (TransformerLayer().eval(), transformer_inputs())
    add("transformer_fx", lambda: export_module(*tr(), os.path.join(out, "transformer_fx.json"),
                                                name="transformer", weights=True))
    add("transformer_dynamo", lambda: _dynamo(*tr(), os.path.join(out, "transformer_dynamo.json"), "transformer"))
    add("transformer_aten", lambda: export_program(torch.export.export(*tr()),
                                                   os.path.join(out, "transformer_aten.json"), name="transformer"))
    def ctr():
        torch.manual_seed(0)
        m = CTRModel().eval()
        return m, ctr_inputs(m)
    add("ctr_dynamo", lambda: _dynamo(*ctr(), os.path.join(out, "ctr_dynamo.json"), "ctr", weights=True))
    add("ctr_aten", lambda: export_program(torch.export.export(*ctr()), os.path.join(out, "ctr_aten.json"), name="ctr",
                                           weights=True))
    add("tangle4_fx", lambda: export_module(Tangle(4).eval(), tangle_inputs(4), os.path.join(out, "tangle4_fx.json"),
                                            name="tangle4", weights=True))
    for n in tangle_sizes:
        suffix = ".json.gz" if n >= 200 else ".json"
        add(f"tangle{n}_torch", lambda n=n, s=suffix: _dynamo(Tangle(n).eval(), tangle_inputs(n),
                                                             os.path.join(out, f"tangle{n}_torch{s}"), f"tangle{n}"))
        add(f"tangle{n}_aten", lambda n=n, s=suffix: export_program(
            torch.export.export(Tangle(n).eval(), tangle_inputs(n)), os.path.join(out, f"tangle{n}_aten{s}"),
            name=f"tangle{n}"))
    for name, fn in jobs:
        t = time.time()
        fn()
        print(f"{name}: {time.time() - t:.1f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join("resources", "examples"))
    ap.add_argument("--only", nargs="*", help="substrings of example names to build")
    ap.add_argument("--tangle-sizes", nargs="*", type=int, default=[50, 200, 800])
    a = ap.parse_args()
    build(a.out, a.only, a.tangle_sizes)


if __name__ == "__main__":
    main()
