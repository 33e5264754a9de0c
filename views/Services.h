// SPDX-License-Identifier: MIT
// What the app gives the window: where the pattern files are, and how to check a rewrite step by
// running the graph. The views never link the executor; the app injects it (app/gui/main.cpp).
#pragma once

#include "ir/Graph.h"

#include <functional>
#include <string>

namespace fxlens::views {

/// A per-step check: "" when a version computes what the original computes, else why not.
using StepVerifier = std::function<std::string(const ir::Graph &)>;

struct Services {
    /// Pattern files (*.fxpat) loaded with the built-in C++ patterns; "" loads none.
    std::string patternDir;
    /// Makes the per-step check for `original` (its outputs are the reference); nullptr with
    /// `error` when the original does not run. Unset when this build cannot run graphs: the
    /// debugger's "Verify each step" is then disabled and says why.
    std::function<StepVerifier(const ir::Graph &original, std::string &error)> makeVerifier;
};

} // namespace fxlens::views
