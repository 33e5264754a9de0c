// SPDX-License-Identifier: MIT
// Weight freezing as graph edits: which nodes depend on weights and constants only, which of their
// values the rest of the graph reads, and how a graph is cut into a frozen graph (those values become
// new weights) and a fold graph (computes them from the original weights, so existing checkpoints
// still load). The values themselves come from the executor; this file holds no tensor.
#pragma once

#include "ir/Graph.h"

#include <memory>
#include <string>
#include <vector>

namespace fxlens::rewrite {

/// The call's result may differ between calls on equal inputs (random ops, `empty`), or it writes
/// to an input: never folded.
bool impureForFreezing(const std::string &target);

/// By node id: get_attr nodes, and pure calls whose inputs are all such nodes (none: a constant).
std::vector<bool> weightOnlyNodes(const ir::Graph &g);

/// Folded calls (not get_attr) that an unfolded node reads: the values freezing keeps. A view at that
/// edge that reorders or broadcasts (permute, expand), or whose recorded layout is not contiguous, is
/// not kept: it stays in the graph, reading the value it views (kept instead, unless it is a weight),
/// since a written view is a materialized copy (other strides, other rounding in the matmul that
/// reads it; an expand many times the weight's size).
std::vector<ir::Node *> freezeBoundary(const ir::Graph &g, const std::vector<bool> &folded);

/// The prefix of the weights a frozen graph reads instead of a folded value: `_frozen_<fold node>`.
inline constexpr const char *kFrozenPrefix = "_frozen_"; // flat: `_frozen.to` would clash with Module.to

struct FrozenSplit {
    /// `g` with each chosen boundary node replaced by get_attr `_frozen_<name>` and what became
    /// dead removed; its params list the original weights it still reads (new ones are added by the
    /// caller, who knows their shapes).
    std::unique_ptr<ir::Graph> frozen;
    /// The folded nodes the chosen values need, returning them as a tuple in `targets` order;
    /// reads the original weights (get_attr), has no placeholder.
    std::unique_ptr<ir::Graph> fold;
    /// The new get_attr targets, one per chosen node, in the fold graph's output order.
    std::vector<std::string> targets;
};

/// Cuts `g` at `chosen` (boundary nodes of `g`, by name): see FrozenSplit.
FrozenSplit splitFrozen(const ir::Graph &g, const std::vector<std::string> &chosen);

/// Removes nodes without users that have no side effects (never placeholders or the output).
size_t eliminateDeadCode(ir::Graph &g);

/// Removes every node the output does not read, placeholders and side-effecting calls included:
/// what a fold graph is (splitFrozen writes one so; readers apply it to fold graphs written by older
/// versions, which could keep an input placeholder that an assert read). Returns how many went.
size_t keepOnlyOutputInputs(ir::Graph &g);

} // namespace fxlens::rewrite
