// SPDX-License-Identifier: MIT
// Measure: the executor as rewrite::tune's cost model. Whole versions run on one Runner (inputs and
// weights prepared once from the reference graph): `warmup` runs, then the median of `iters` timed
// ones and half their interquartile range; on CUDA one run is captured as a CUDA graph and replayed
// (no per-node host work), on the CPU the host clock times plain runs. No LibTorch type here.
#pragma once

#include "exec/Executor.h"
#include "rewrite/Tune.h"

#include <memory>
#include <string>

namespace fxlens::exec {

struct MeasureOptions {
    int iters = 10;
    int warmup = 3;
    bool freeze = false; ///< fold weight-only nodes before timing (inference with frozen weights)
};

/// The cost model, and in `note` how it measures ("cuda:0, CUDA graph replay, median of 10 after
/// 3 warm-up"); a Diagnostic when the reference does not run.
Result<std::unique_ptr<rewrite::CostModel>> measuringCostModel(const ir::Graph &reference, const ExecOptions &o, const MeasureOptions &m,
                                                               std::string &note);

} // namespace fxlens::exec
