// SPDX-License-Identifier: MIT
// The layered layout's slots: the items, the dummies of long edges, and the modules the items are
// grouped by (see LayeredPhases.h).
#include "layout/LayeredPhases.h"

#include <algorithm>
#include <climits>
#include <string>
#include <unordered_map>

namespace fxlens::layout::layered {

namespace {

// Views with more items or dummies than these order their items only (long edges then run
// through the gaps routeEdges finds).
constexpr size_t kDummyItems = 5000, kDummies = 40000;

/// A chain of dummies below each item with long edges (one per layer its longest edge passes),
/// and the ordering neighbours through them: each long edge leaves its bundle where it ends.
void addDummies(LayeredState &s, const std::vector<int> &reach)
{
    const auto &items = s.v.items;
    for (auto &l : s.up)
        l.clear();
    for (auto &l : s.down)
        l.clear();
    std::vector<uint32_t> trunk(s.n, 0); // the first dummy of each item's bundle
    for (uint32_t i = 0; i < s.n; ++i) {
        if (reach[i] < 2)
            continue;
        trunk[i] = uint32_t(s.layerOf.size());
        s.trunks.emplace_back(trunk[i], reach[i] - 1);
        uint32_t prev = i;
        for (int k = 1; k < reach[i]; ++k) {
            const uint32_t d = uint32_t(s.layerOf.size());
            s.layerOf.push_back(items[i].layer + k);
            s.widthOf.push_back(6);
            s.heightOf.push_back(0);
            s.up.emplace_back();
            s.down.emplace_back();
            s.up[d].push_back(prev);
            s.down[prev].push_back(d);
            prev = d;
        }
    }
    for (size_t ei = 0; ei < s.v.edges.size(); ++ei) {
        const auto &e = s.v.edges[ei];
        if (e.back)
            continue;
        const int span = items[e.to].layer - items[e.from].layer;
        uint32_t prev = e.from;
        if (span > 1) {
            s.chains.push_back({ei, trunk[e.from], span - 1});
            prev = trunk[e.from] + uint32_t(span - 2);
        }
        s.up[e.to].push_back(prev);
        s.down[prev].push_back(e.to);
    }
}

/// The cluster a long edge's dummy at `layer` lies in: the innermost module of either end whose
/// layers reach it (top..bottom, `span`), else the innermost around both ends. An edge into a
/// module runs inside its frame from the layer where the frame opens, as one out of a module
/// does until the frame closes: it crosses the frame's border once, never running beside it.
uint32_t dummyCluster(const LayeredState &s, const std::vector<std::pair<int, int>> &span, uint32_t from, uint32_t to, int layer)
{
    const auto &a = s.chainOf[s.clusterId[from]], &b = s.chainOf[s.clusterId[to]];
    size_t common = 0;
    while (common < a.size() && common < b.size() && a[common] == b[common])
        ++common;
    size_t inB = common, inA = common; // how deep along each end's chain the layer is reached
    while (inB < b.size() && span[b[inB]].first <= layer)
        ++inB;
    while (inA < a.size() && span[a[inA]].second >= layer)
        ++inA;
    if (inB > common && inB >= inA)
        return b[inB - 1];
    if (inA > common)
        return a[inA - 1];
    return common ? a[common - 1] : 0;
}

/// The innermost cluster around both (a prefix of both chains).
uint32_t commonCluster(const LayeredState &s, uint32_t a, uint32_t b)
{
    const auto &x = s.chainOf[a], &y = s.chainOf[b];
    uint32_t common = 0;
    for (size_t k = 0; k < std::min(x.size(), y.size()) && x[k] == y[k]; ++k)
        common = x[k];
    return common;
}

/// A long edge's dummies lie in the frames its route passes (dummyCluster); a bundle's shared
/// dummies in the innermost module around all the edges they carry.
void placeDummies(LayeredState &s)
{
    std::vector<std::pair<int, int>> span(s.chainOf.size(), {INT32_MAX, -1}); // per cluster: its items' layers
    for (size_t i = 0; i < s.n; ++i)
        for (uint32_t c : s.chainOf[s.clusterId[i]])
            span[c] = {std::min(span[c].first, s.layerOf[i]), std::max(span[c].second, s.layerOf[i])};
    std::vector<uint8_t> set(s.slots(), 0);
    for (const auto &c : s.chains) {
        const auto &e = s.v.edges[c.edge];
        for (int k = 0; k < c.count; ++k) {
            const uint32_t d = c.first + uint32_t(k);
            const uint32_t inner = dummyCluster(s, span, e.from, e.to, s.layerOf[d]);
            s.clusterId[d] = set[d] ? commonCluster(s, s.clusterId[d], inner) : inner;
            set[d] = 1;
        }
    }
}

} // namespace

// Long edges get a chain of dummies, one per layer they pass (small views: the ordering then
// places their routes like items, which keeps them straight and uncrossed). Long edges from one
// item share one chain (a bundle: one line down the side of the picture, branching off to each
// reader, instead of a lane per reader), placed and ordered once.
void addSlots(LayeredState &s)
{
    const auto &items = s.v.items;
    s.layerOf.resize(s.n);
    s.widthOf.resize(s.n);
    s.heightOf.resize(s.n);
    for (size_t i = 0; i < s.n; ++i)
        s.layerOf[i] = items[i].layer, s.widthOf[i] = items[i].w, s.heightOf[i] = items[i].h;
    s.up = s.preds;
    s.down = s.succs;
    std::vector<int> reach(s.n, 0); // the longest span of each item's edges
    for (const auto &e : s.v.edges)
        if (!e.back)
            reach[e.from] = std::max(reach[e.from], items[e.to].layer - items[e.from].layer);
    size_t dummies = 0;
    for (int r : reach)
        dummies += size_t(std::max(0, r - 1));
    if (s.n <= kDummyItems && dummies <= kDummies)
        addDummies(s, reach);
}

// Each item's innermost expanded module as a cluster id, and every cluster's chain of modules,
// outermost first (the prefixes of its path: "a", "a.b", "a.b.c").
void findClusters(LayeredState &s)
{
    s.clusterId.assign(s.slots(), 0);
    s.chainOf.assign(1, {});
    s.titleOf.assign(1, 0);
    s.framed = false;
    std::unordered_map<std::string, uint32_t> ids;
    ids.emplace(std::string(), 0u);
    for (size_t i = 0; i < s.n; ++i) {
        const std::string &path = s.v.items[i].cluster;
        if (path.empty())
            continue;
        s.framed = true;
        uint32_t id = 0;
        for (size_t k = path.find('.');; k = path.find('.', k + 1)) {
            const std::string prefix = k == std::string::npos ? path : path.substr(0, k);
            if (!s.v.modules.empty() && !s.v.modules.count(prefix)) { // a ModuleList: no frame of its own
                if (k == std::string::npos)
                    break;
                continue;
            }
            auto [it, fresh] = ids.emplace(prefix, uint32_t(s.chainOf.size()));
            if (fresh) {
                std::vector<uint32_t> chain = s.chainOf[id];
                chain.push_back(it->second);
                s.chainOf.push_back(std::move(chain));
                s.titleOf.push_back(frameTitleWidth(prefix));
            }
            id = it->second;
            if (k == std::string::npos)
                break;
        }
        s.clusterId[i] = id;
    }
    placeDummies(s);
}

} // namespace fxlens::layout::layered
