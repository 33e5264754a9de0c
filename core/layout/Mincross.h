// SPDX-License-Identifier: MIT
// The order within layers (dot's mincross; internal to core/layout and its tests): sweeps down and
// up, each slot moving to the weighted median position of its neighbours in the layer just passed
// (slots without neighbours there keep their place), each sweep followed by transposition
// (neighbours swapped while that removes crossings); the order with the fewest crossings seen is
// kept.
//
// Nodes of one expanded module stay together in each layer (so its frame holds its own nodes): in
// the grouped order, each sorted layer is grouped by the mean position of its modules, outermost
// first, and transposition keeps the groups. Grouping costs crossings where data flows across
// modules (a tangle of blocks), so orderLayers keeps it only when it costs few crossings against
// the free order; else frames that would hold others are not drawn.
#pragma once

#include "layout/LayeredPhases.h"

namespace fxlens::layout::layered {

class Mincross {
public:
    /// Orders the slots of `s` (after addSlots and findClusters); `s` must outlive this.
    explicit Mincross(const LayeredState &s);

    /// The fewest crossings found from two starting orders (`bl` and depth first from the
    /// sources), each swept first down and first up, in at most `iterations` sweeps; `bl`
    /// becomes the best order.
    size_t run(Layers &bl, bool grouped, int iterations);

    /// Each slot's index in its layer, from `bl`.
    void renumber(const Layers &bl);
    /// One sweep: each layer sorted by the weighted median of its neighbours in the layer before it.
    void sweep(Layers &bl, bool downward, bool grouped);
    /// Swaps neighbours (and, grouped, neighbouring modules) while that removes crossings.
    void transpose(Layers &bl, bool grouped);
    /// A layer grouped by modules: slots by the mean index of their modules, outermost first, then their own.
    void group(std::vector<uint32_t> &layer);
    /// In the grouped order, neighbouring runs of whole modules trade places where that removes
    /// crossings; true when some did.
    bool swapBlocks(std::vector<uint32_t> &layer);
    /// Crossings between layers li and li + 1 (by the current indices).
    size_t crossingsBelow(const Layers &bl, size_t li);
    /// Crossings between all adjacent layers (by the current indices).
    size_t countCrossings(const Layers &bl);
    /// Crossings of `bl` (renumbers first).
    size_t crossingsOf(const Layers &bl);
    /// dot's starting order: depth first from the sources.
    Layers depthFirstOrder() const;

private:
    size_t mincrossFrom(Layers &bl, bool grouped, int iterations, bool downFirst);
    void placeTrunks(Layers &bl, size_t best);
    void sortByMedian(std::vector<uint32_t> &layer, int li, bool downward);
    size_t pairCrossings(uint32_t left, uint32_t right) const;
    bool inBranch(uint32_t node, uint32_t branch, size_t depth) const;
    bool blockCanMove(const std::vector<uint32_t> &layer, size_t k, size_t m, size_t r) const;

    const LayeredState &m_s;
    const size_t m_n;
    const int m_layers;
    std::vector<uint32_t> m_idx; ///< each slot's index in its layer
    Layers m_depthFirst;         ///< (computed once, on first use)
    // Scratch space, kept between calls.
    std::vector<double> m_sum, m_cnt;  ///< per cluster (group)
    std::vector<double> m_key, m_key2; ///< per slot (sweep)
    std::vector<uint32_t> m_near;
    std::vector<std::pair<uint32_t, uint32_t>> m_pieces;
    std::vector<uint32_t> m_fenwick;
};

} // namespace fxlens::layout::layered
