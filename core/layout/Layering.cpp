// SPDX-License-Identifier: MIT
// The layered layout's first phase: layers by data flow (see LayeredPhases.h).
#include "layout/LayeredPhases.h"
#include "layout/Rank.h"

#include <algorithm>
#include <queue>

namespace fxlens::layout::layered {

std::vector<uint32_t> topologicalOrder(const Adjacency &out, const Adjacency &in)
{
    const size_t n = out.size();
    std::vector<uint32_t> order;
    order.reserve(n);
    std::vector<uint32_t> indeg(n);
    for (size_t i = 0; i < n; ++i)
        indeg[i] = uint32_t(in[i].size());
    std::vector<uint8_t> done(n, 0);
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i)
        if (indeg[i] == 0)
            ready.push(uint32_t(i));
    size_t next = 0; // the earliest item not placed yet (for breaking cycles)
    while (order.size() < n) {
        if (ready.empty()) {
            while (done[next])
                ++next;
            ready.push(uint32_t(next));
            indeg[next] = 0;
        }
        const uint32_t i = ready.top();
        ready.pop();
        if (done[i])
            continue;
        done[i] = 1;
        order.push_back(i);
        for (uint32_t t : out[i])
            if (!done[t] && indeg[t] > 0 && --indeg[t] == 0)
                ready.push(t);
    }
    return order;
}

namespace {

/// Edges against the order are back edges; the others are the forward graph (preds, succs).
void markBackEdges(LayeredState &s)
{
    std::vector<uint32_t> pos(s.n);
    for (size_t k = 0; k < s.n; ++k)
        pos[s.order[k]] = uint32_t(k);
    s.preds.assign(s.n, {});
    s.succs.assign(s.n, {});
    for (auto &e : s.v.edges) {
        e.back = pos[e.from] > pos[e.to];
        if (e.back)
            continue;
        s.preds[e.to].push_back(e.from);
        s.succs[e.from].push_back(e.to);
    }
}

/// Each item one layer below its lowest predecessor.
void longestPathLayers(LayeredState &s)
{
    s.layers = 0;
    for (uint32_t i : s.order) {
        int l = 0;
        for (uint32_t p : s.preds[i])
            l = std::max(l, s.v.items[p].layer + 1);
        s.v.items[i].layer = l;
        s.layers = std::max(s.layers, l + 1);
    }
}

/// Network simplex (dot's ranking): the least total edge length. False when it found none.
bool simplexLayers(LayeredState &s, bool balanced)
{
    const size_t n = s.n;
    std::vector<std::pair<uint32_t, uint32_t>> forward;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t t : s.succs[i])
            forward.emplace_back(i, t);
    const auto ranks = networkSimplexRanks(n, forward, 2 * n + 200, balanced);
    if (ranks.empty())
        return false;
    s.layers = 0;
    for (uint32_t i = 0; i < n; ++i) {
        s.v.items[i].layer = ranks[i];
        s.layers = std::max(s.layers, ranks[i] + 1);
    }
    return true;
}

/// Longest path: work that does not depend on the model's inputs (weight-only chains: a
/// post-grad graph's folded batch-norm scales, an export's weight reshapes) is placed as late as
/// it can be, just above its first reader, instead of at the top with edges reaching down
/// hundreds of layers. Sources (inputs), and items with more readers than inputs, sit just
/// above their first reader too, instead of all in layer 0.
void placeLate(LayeredState &s)
{
    auto &items = s.v.items;
    std::vector<uint8_t> fromInput(s.n, 0);
    for (uint32_t i : s.order) {
        const auto &it = items[i];
        fromInput[i] = fromInput[i] || (it.node && it.category == OpCategory::Input);
        if (fromInput[i])
            for (uint32_t t : s.succs[i])
                fromInput[t] = 1;
    }
    for (auto k = s.order.rbegin(); k != s.order.rend(); ++k) {
        const uint32_t i = *k;
        if (s.succs[i].empty() || (fromInput[i] && !s.preds[i].empty() && s.succs[i].size() <= s.preds[i].size()))
            continue;
        int first = s.layers;
        for (uint32_t t : s.succs[i])
            first = std::min(first, items[t].layer);
        if (first < s.layers && first - 1 > items[i].layer)
            items[i].layer = first - 1;
    }
}

} // namespace

// Layers by data flow: a topological order of the items (program order among the ready ones), so
// a module box is ranked by its inputs, not by its first node (often a weight read early). A cycle
// between boxes (a module whose calls interleave with the rest) is broken at the earliest item
// left; the edges it leaves pointing upwards are back edges.
void rankItems(LayeredState &s, Layering layering)
{
    Adjacency out(s.n), in(s.n);
    for (const auto &e : s.v.edges) {
        out[e.from].push_back(e.to);
        in[e.to].push_back(e.from);
    }
    s.order = topologicalOrder(out, in);
    markBackEdges(s);
    longestPathLayers(s);
    const bool ranked = layering != Layering::LongestPath && simplexLayers(s, layering == Layering::NetworkSimplexBalanced);
    if (!ranked)
        placeLate(s);
}

} // namespace fxlens::layout::layered
