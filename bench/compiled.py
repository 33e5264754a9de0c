# SPDX-License-Identifier: MIT
"""fxlens-cli profile --compiled on tangle N=200, BERT-base and a CTR model, original and optimized
(`optimize --preset all`): every kernel of the Inductor-compiled run attributed to FX nodes or listed
with the reason, and the attributed time against the busy time. One run per table (docs/BENCHMARKS.md).

    python bench/compiled.py --device cuda --out /tmp/fxlens-compiled --jobs 3   # on the GPU machine
    python bench/compiled.py --device cpu --models ctr --iters 3                 # a quick CPU check

The profiles are written as OUT/MODEL[_opt].fxprof.json beside their graphs OUT/MODEL[_opt].json, which
is where the app looks for a graph's profile.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from typing import Any, Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("FXLENS_CLI", os.path.join(ROOT, "build", "app", "fxlens-cli"))
MODELS = {
    "tangle200": "resources/examples/tangle200_torch.json.gz",
    "bert_base": "resources/examples/bert_base_dynamo.json.gz",
    "ctr": "resources/examples/ctr_dynamo.json",
}


def _copy_graph(src: str, dst_json: str) -> None:
    """The bundled graph as OUT/NAME.json with the side files it names (weights, inputs) beside it."""
    if src.endswith(".gz"):
        with gzip.open(src, "rb") as f, open(dst_json, "wb") as g:
            shutil.copyfileobj(f, g)
    else:
        shutil.copyfile(src, dst_json)
    data = json.load(open(dst_json))
    for key in ("weights", "inputs"):
        side = data.get(key)
        if not isinstance(side, str):
            continue
        if os.path.exists(os.path.join(os.path.dirname(src), side)):
            shutil.copyfile(os.path.join(os.path.dirname(src), side), os.path.join(os.path.dirname(dst_json), side))
        else:  # the bundled graph names side files it does not ship: seeded random values
            data.pop(key)
            json.dump(data, open(dst_json, "w"))


def _cli(args: List[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout)


def attribution(profile: str) -> Dict[str, Any]:
    """Kernels, busy and attributed time per iteration of a compiled profile, and the unattributed
    kernels by reason."""
    p = json.load(open(profile))
    cols = p["kernel_columns"]
    name, dur = cols.index("name"), cols.index("dur_us")
    iters = max(1, int(p.get("iterations", 1)))
    busy = sum(k[dur] for k in p["kernels"])
    attributed = sum(k[dur] for k, pv in zip(p["kernels"], p["provenance"]["kernels"]) if pv["nodes"])
    missing = Counter()
    for k, pv in zip(p["kernels"], p["provenance"]["kernels"]):
        if not pv["nodes"]:
            missing[f"{k[name]}: {pv.get('reason', '')}"] += 1
    return {"kernels_per_iter": len(p["kernels"]) / iters, "busy_us": busy / iters, "attributed_us": attributed / iters,
            "attributed_share": attributed / busy if busy else 1.0, "wall_us": p.get("summary", {}).get("wall_us"),
            "unattributed": {k: v / iters for k, v in missing.most_common()}}


def run(model: str, version: str, a) -> Dict[str, Any]:
    base = os.path.join(a.out, model)
    graph = base + ".json" if version == "original" else base + "_opt.json"
    row: Dict[str, Any] = {"model": model, "version": version}
    t0 = time.time()
    try:
        if version == "optimized":
            r = _cli(["optimize", base + ".json", "--preset", "all", "-o", graph], 300)
            if r.returncode != 0:
                return dict(row, error="optimize: " + (r.stderr.strip().splitlines() or ["?"])[-1])
        prof = graph[:-len(".json")] + ".fxprof.json"
        r = _cli(["profile", graph, "--compiled", "--device", a.device, "--iters", str(a.iters), "--warmup", "3",
                  "-o", prof], a.timeout)
        row["seconds"] = round(time.time() - t0, 1)
        with open(prof[:-len(".json")] + ".log", "w") as f:
            f.write(r.stdout + r.stderr)
        if r.returncode != 0:
            return dict(row, error=(r.stderr.strip().splitlines() or ["?"])[-1])
        row["nodes"] = len(json.load(open(graph))["nodes"])
        row.update(attribution(prof))
    except subprocess.TimeoutExpired:
        row["error"] = f"timed out after {a.timeout} s"
    return row


def markdown(rows: List[Dict[str, Any]], device: str) -> str:
    out = [f"| model | version | FX nodes | kernels / iteration | GPU busy µs | attributed | unattributed kernels (reason) | "
           f"profile --compiled s |" if device.startswith("cuda") else
           "| model | version | FX nodes | kernels / iteration | busy µs | attributed | unattributed kernels (reason) | "
           "profile --compiled s |", "|---|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['model']} | {r['version']} | | | | | failed: {r['error']} | {r.get('seconds', '')} |")
            continue
        un = "; ".join(f"{n:g}× {k}" for k, n in list(r["unattributed"].items())[:3]) or "none"
        out.append(f"| {r['model']} | {r['version']} | {r['nodes']} | {r['kernels_per_iter']:g} | {r['busy_us']:.1f} | "
                   f"{100 * r['attributed_share']:.2f}% | {un} | {r['seconds']} |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1, help="profiles at once (each compiles on the host)")
    ap.add_argument("--timeout", type=float, default=500)
    ap.add_argument("--out", default="/tmp/fxlens-compiled")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    models = [m for m in a.models.split(",") if m]
    for m in models:
        _copy_graph(os.path.join(ROOT, MODELS[m]), os.path.join(a.out, m + ".json"))
    # The slowest compiles first (the original tangle), so that the jobs end together.
    work = [(m, v) for v in ("original", "optimized") for m in models]
    work.sort(key=lambda mv: (mv[0] != "tangle200" or mv[1] != "original"))
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        done = list(pool.map(lambda mv: run(mv[0], mv[1], a), work))
    rows = sorted(done, key=lambda r: (models.index(r["model"]), r["version"] != "original"))
    for r in rows:
        print(json.dumps(r), file=sys.stderr)
    print(markdown(rows, a.device))
    if a.json:
        json.dump({"device": a.device, "rows": rows}, open(a.json, "w"), indent=1)
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
