# SPDX-License-Identifier: MIT
"""fxlens-cli tune on the model zoo: original, greedy (`optimize --preset all`) and tuned versions of each
model, measured by tune itself (whole graph; CUDA graph replay on a GPU, host timer on the CPU) and
profiled once each for their kernel counts. One run per table (docs/BENCHMARKS.md).

    .venv/bin/python bench/tune.py --device cuda --budget 300 --out /tmp/tune   # on the GPU machine
    .venv/bin/python bench/tune.py --device cpu --models tangle4 --budget 30     # a quick CPU check

Models: the zoo's (bench/models.py, exported through torch.compile's graph capture, weights saved),
the bundled tangle model with N=200 blocks, and the bundled graphs named by path.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))
BUNDLED = {
    "tangle4": "resources/examples/tangle4_fx.json",
    "tangle200": "resources/examples/tangle200_torch.json.gz",
    "transformer": "resources/examples/transformer_fx.json",
    "ctr_bundled": "resources/examples/ctr_dynamo.json",
}


def graph_of(name: str, out: str) -> str:
    if name in BUNDLED:
        return os.path.join(ROOT, BUNDLED[name])
    import torch
    import models  # bench/models.py

    torch.manual_seed(0)
    model, inputs = models.ALL[name]()
    files = models.export(name, "dynamo", model.eval(), inputs, os.path.join(out, name))
    return files[0]


def kernels(graph: str, device: str) -> str:
    r = subprocess.run([CLI, "profile", graph, "--device", device, "--iters", "3", "--warmup", "1"], capture_output=True, text=True)
    m = re.search(r"^(?:kernels|ATen ops) per iteration\s+(\d+)", r.stdout, re.M)
    return m.group(1) if m else "?"


def run(name: str, a) -> dict:
    g = graph_of(name, a.out)
    stem = os.path.join(a.out, name)
    os.makedirs(os.path.dirname(stem + "x"), exist_ok=True)
    t0 = time.time()
    r = subprocess.run([CLI, "tune", g, "--device", a.device, "--budget", str(a.budget), "--iters", str(a.iters), "-o", stem + ".tuned.json",
                        "--trace", stem + ".trace.json", "--report", stem + ".report.html"], capture_output=True, text=True)
    wall = time.time() - t0
    row = {"model": name, "graph": os.path.relpath(g, ROOT) if g.startswith(ROOT) else g, "tune_s": wall}
    if r.returncode != 0:
        row["error"] = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return row
    t = json.load(open(stem + ".trace.json"))
    row.update(original_ms=t["original_s"] * 1e3, greedy_ms=t["greedy_s"] * 1e3, tuned_ms=t["tuned_s"] * 1e3, plan=t["plan"],
               measurements=len(t["trials"]), left_out=t["left_out"], band_ms=t["band_s"] * 1e3)
    greedy = stem + ".greedy.json"
    subprocess.run([CLI, "optimize", g, "--preset", "all", "-o", greedy], capture_output=True)
    if a.kernels:
        row.update(original_k=kernels(g, a.device), greedy_k=kernels(greedy, a.device), tuned_k=kernels(stem + ".tuned.json", a.device))
    return row


def markdown(rows, device: str) -> str:
    lines = [f"Device: {device}. Times: tune's own measurement of the whole graph (median); kernels: `fxlens-cli profile`.", "",
             "| model | original ms | greedy ms | tuned ms | kernels (orig / greedy / tuned) | left out | measurements | tune s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['error']} | | | | | | {r['tune_s']:.0f} |")
            continue
        left = "; ".join(f"{x['what'].split('#')[0]} ({x['steps']} steps, +{x['cost_s'] * 1e3:.3f} ms)" for x in r["left_out"]) or "–"
        k = f"{r.get('original_k', '–')} / {r.get('greedy_k', '–')} / {r.get('tuned_k', '–')}"
        lines.append(f"| {r['model']} | {r['original_ms']:.3f} | {r['greedy_ms']:.3f} | {r['tuned_ms']:.3f} | {k} | {left} | "
                     f"{r['measurements']} | {r['tune_s']:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="ctr,resnet50,bert_base,gpt2,tangle200")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--budget", type=float, default=300)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--no-kernels", dest="kernels", action="store_false")
    ap.add_argument("--out", default="/tmp/fxlens-tune")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for name in a.models.split(","):
        rows.append(run(name, a))
        print(json.dumps(rows[-1]), flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    print(markdown(rows, a.device))
    return 0 if all("error" not in r and r["tuned_ms"] <= min(r["greedy_ms"], r["original_ms"]) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
