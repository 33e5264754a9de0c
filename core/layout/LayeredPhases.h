// SPDX-License-Identifier: MIT
// The phases of the layered layout (internal to core/layout and its tests). layeredLayout runs
// them in turn over one LayeredState, as dot does (rank, mincross, position):
//   rankItems     layers by data flow: a topological order, back edges, longest path or network
//                 simplex ranks (Layering.cpp)
//   addSlots      the slots to order: the items, and a chain of dummies per bundle of long edges
//                 (Dummies.cpp)
//   findClusters  each item's expanded module and those around it, for grouping (Dummies.cpp)
//   orderLayers   the order within layers: a Mincross (Mincross.h)
//   placeSlots    coordinates, wide layers wrapped onto rows, the via points of long edges
//                 (Coordinates.cpp); routeEdges then routes every edge.
#pragma once

#include "layout/Layered.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace fxlens::layout::layered {

/// Slots by layer, each layer left to right.
using Layers = std::vector<std::vector<uint32_t>>;
using Adjacency = std::vector<std::vector<uint32_t>>;

/// The dummies of one long edge: a run of its source's bundle.
struct Chain {
    size_t edge;    ///< index in ViewGraph::edges
    uint32_t first; ///< the bundle's first dummy (slot)
    int count;      ///< dummies the edge passes (layers between its ends)
};

struct LayeredState {
    explicit LayeredState(ViewGraph &view) : v(view), n(view.items.size()) {}
    ViewGraph &v;
    size_t n; ///< items: slots 0..n-1 (n.. are dummies)

    // rankItems (layers themselves are in v.items[i].layer)
    std::vector<uint32_t> order; ///< a topological order of the items (program order among the ready ones)
    Adjacency preds, succs;      ///< forward edges only (back edges left out)
    int layers = 0;

    // addSlots
    std::vector<int> layerOf;
    std::vector<double> widthOf, heightOf;
    Adjacency up, down;                           ///< ordering neighbours (chains for long edges)
    std::vector<Chain> chains;                    ///< one per long edge (when dummies are used)
    std::vector<std::pair<uint32_t, int>> trunks; ///< each bundle's first dummy and length
    size_t slots() const { return layerOf.size(); }

    // findClusters
    std::vector<uint32_t> clusterId;            ///< per slot; 0: no module (dummies: 0)
    std::vector<std::vector<uint32_t>> chainOf; ///< cluster id -> its module and those around it, outermost first
    std::vector<double> titleOf;                ///< cluster id -> its frame's title width (frameTitleWidth)
    bool framed = false;                        ///< some item is inside an expanded module

    // orderLayers
    Layers byLayer;
};

/// A topological order of 0..n-1 by `out`/`in` (the smallest ready one first); a cycle is broken
/// at the earliest item left.
std::vector<uint32_t> topologicalOrder(const Adjacency &out, const Adjacency &in);

void rankItems(LayeredState &s, Layering layering);
void addSlots(LayeredState &s);
void findClusters(LayeredState &s);
void orderLayers(LayeredState &s, const LayoutOptions &o);
void placeSlots(LayeredState &s, const LayoutOptions &o);

} // namespace fxlens::layout::layered
