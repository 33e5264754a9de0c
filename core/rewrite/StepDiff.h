// SPDX-License-Identifier: MIT
// The diff of one rewrite step, from its recorded edits (no copy of the graph before the step).
#pragma once

#include "ir/GraphDiff.h"
#include "rewrite/Rewriter.h"

namespace fxlens::rewrite {

/// Lines in edit order: inserted nodes as the step left them ("+"), erased nodes that existed
/// before the step ("-"), input changes of nodes that existed before ("~ name = target(old)  ->
/// (new)"), and moves. Call it right after the step (nodes print as they are now).
ir::GraphDiff diffStep(const std::vector<Edit> &edits);

} // namespace fxlens::rewrite
