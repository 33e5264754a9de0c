// SPDX-License-Identifier: MIT
// Layering by network simplex (see Rank.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace fxlens::layout {

/// Layers 0.. for the nodes 0..n-1 of an acyclic graph (every edge a -> b gets rank(b) >= rank(a)
/// + 1) with the least total edge length, found by network simplex in at most maxIterations
/// pivots (the best layering found so far when the budget runs out). With `balance`, nodes with
/// as many edges in as out then move to the least crowded layer they may take (as dot does).
/// Empty on a cycle.
std::vector<int> networkSimplexRanks(size_t n, const std::vector<std::pair<uint32_t, uint32_t>> &edges, size_t maxIterations,
                                     bool balance = true);

} // namespace fxlens::layout
