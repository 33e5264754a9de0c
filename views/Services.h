// SPDX-License-Identifier: MIT
// What the app gives the window: where the pattern files are, and how to check a rewrite step, to
// profile versions and to measure them for Tune by running the graph. The views never link the
// executor; the app injects it (app/gui/main.cpp, app/gui/AppServices.h).
#pragma once

#include "ir/Graph.h"
#include "profile/Profile.h"
#include "rewrite/Tune.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fxlens::views {

/// A per-step check: "" when a version computes what the original computes, else why not.
using StepVerifier = std::function<std::string(const ir::Graph &)>;

/// Graph versions to profile, with what the app's Profile actions chose.
struct ProfileRequest {
    std::vector<const ir::Graph *> graphs; ///< the versions, in order (weights prepared from the first)
    std::vector<std::string> labels;       ///< Profile::version of each
    std::vector<int> versionIds;           ///< Profile::versionId of each (the NVTX payloads')
    int iterations = 10, warmup = 3;
    bool freezeWeights = false;
    std::string graphName; ///< the file name, for the profiles
    std::string graphDir;  ///< where the graph was read from (its weights file)
};

struct ProfileOutcome {
    std::vector<prof::Profile> profiles; ///< one per version profiled
    std::string device;                  ///< "cuda:0", "cpu"
    std::string note;                    ///< why on the CPU (no GPU), when it is
    std::string error;                   ///< why it failed ("" when it did not)
    bool cancelled = false;
};

/// Profiles graph versions (off the GUI thread); `progress(done, total)` returns false to cancel.
using ProfileService = std::function<ProfileOutcome(const ProfileRequest &, const std::function<bool(size_t, size_t)> &progress)>;

/// How Tune's cost model measures: what the Tune dialog chose, and where the graph was read from.
struct CostModelRequest {
    int iterations = 10, warmup = 3;
    bool freezeWeights = false;
    std::string graphDir; ///< where the graph was read from (its weights file)
};

/// Makes the cost model rewrite::tune measures versions of `original` with (its inputs and weights
/// prepared once from it); `note` says how it measures ("cuda:0, CUDA graph replay, ..."). nullptr
/// with `error` when the original does not run. Called on the search's thread, which owns the model.
using CostModelFactory = std::function<std::unique_ptr<rewrite::CostModel>(const ir::Graph &original, const CostModelRequest &,
                                                                           std::string &note, std::string &error)>;

struct Services {
    /// Pattern files (*.fxpat) loaded with the built-in C++ patterns; "" loads none.
    std::string patternDir;
    /// Makes the per-step check for `original` (its outputs are the reference); nullptr with
    /// `error` when the original does not run. Unset when this build cannot run graphs: the
    /// debugger's "Verify each step" is then disabled and says why.
    std::function<StepVerifier(const ir::Graph &original, std::string &error)> makeVerifier;
    /// Profiles versions on the local GPU (the CPU when there is none), through the same code as
    /// `fxlens-cli profile` (exec::profileVersions). Unset when this build cannot run graphs.
    ProfileService profile;
    /// Tune's cost model: whole versions timed on the local GPU (the CPU when there is none), as
    /// `fxlens-cli tune` times them (exec::measuringCostModel). Unset when this build cannot run
    /// graphs: Rewrite ▸ Tune is then disabled and says why.
    CostModelFactory makeCostModel;
};

} // namespace fxlens::views
