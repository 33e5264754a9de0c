// SPDX-License-Identifier: MIT
#include "layout/Layered.h"
#include "layout/Rank.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <unordered_map>

namespace fxlens::layout {

std::set<std::string> allModules(const ir::Graph &g)
{
    std::set<std::string> out;
    for (ir::Node *n = g.first(); n; n = n->next())
        for (const auto &f : n->meta().moduleStack)
            if (!f.path.empty())
                out.insert(f.path);
    return out;
}

const std::vector<ir::ModuleFrame> &displayModules(const ir::Node *n)
{
    static const std::vector<ir::ModuleFrame> none;
    // Inputs and the output are always top-level items, never hidden in a module's box.
    if (n->op() == ir::OpKind::Placeholder || n->op() == ir::OpKind::Output)
        return none;
    const auto &own = n->meta().moduleStack;
    if (own.empty() && n->op() == ir::OpKind::GetAttr && !n->users().empty())
        return n->users().front()->meta().moduleStack;
    return own;
}

namespace {

/// The outermost collapsed module on the node's chain (the box that stands for it), or nullptr.
const ir::ModuleFrame *collapsedBox(const ir::Node *n, const std::set<std::string> &expanded)
{
    for (const auto &f : displayModules(n))
        if (!f.path.empty() && !expanded.count(f.path))
            return &f;
    return nullptr;
}

void sizeItem(ViewItem &i)
{
    if (i.kind == ViewItem::Kind::Module) {
        i.detail = (i.detail.empty() ? std::string() : i.detail + ", ") + std::to_string(i.nodeCount) + " nodes";
        i.h = 40;
    } else {
        i.h = 32;
    }
    const size_t chars = std::max(i.label.size(), std::min<size_t>(i.detail.size() + (i.value.empty() ? 0 : i.value.size() + 3), 40));
    i.w = std::clamp(double(chars) * 6.5 + 16, 60.0, 260.0);
}

} // namespace

ViewGraph buildView(const ir::Graph &g, const std::set<std::string> &expanded, const ViewOptions &o)
{
    ViewGraph v;
    v.itemOfNode.assign(g.idBound(), -1);
    const std::vector<uint8_t> hidden = o.showConstants ? std::vector<uint8_t>(g.idBound(), 0) : constantNodes(g);
    // The box of each collapsed module's current call; a call is over once a node outside the box
    // has read its output, and the module running again then gets a box of its own.
    struct Call {
        int32_t item = -1;
        bool over = false;
        int calls = 0;
    };
    std::unordered_map<std::string, Call> calls;
    std::unordered_map<int32_t, std::string> pathOfBox;
    for (ir::Node *n = g.first(); n; n = n->next()) {
        if (hidden[n->id()])
            continue;
        int32_t item = -1;
        if (const ir::ModuleFrame *box = collapsedBox(n, expanded)) {
            Call &c = calls[box->path];
            if (c.item < 0 || c.over) {
                ViewItem m;
                m.kind = ViewItem::Kind::Module;
                m.category = OpCategory::Module;
                m.module = box->path;
                m.call = c.calls++;
                m.label = m.call == 0 ? box->path : box->path + " (call " + std::to_string(m.call + 1) + ")";
                for (const auto &f : displayModules(n)) { // the frames outside the box are expanded
                    if (&f == box)
                        break;
                    if (!f.path.empty())
                        m.cluster = f.path;
                }
                m.detail = box->type;
                m.nodeCount = 0;
                v.items.push_back(std::move(m));
                c.item = int32_t(v.items.size() - 1);
                c.over = false;
                pathOfBox[c.item] = box->path;
            }
            item = c.item;
            ++v.items[size_t(item)].nodeCount;
        } else {
            ViewItem i;
            i.node = n;
            i.category = opCategory(n);
            i.module = n->meta().modulePath();
            for (const auto &f : displayModules(n))
                if (!f.path.empty())
                    i.cluster = f.path;
            i.label = n->name();
            i.detail = n->op() == ir::OpKind::CallFunction || n->op() == ir::OpKind::CallMethod || n->op() == ir::OpKind::CallModule
                ? n->target()
                : std::string(ir::opKindName(n->op()));
            if (n->meta().val.kind != ir::ValueMeta::Kind::Unknown)
                i.value = n->meta().val.toString();
            v.items.push_back(std::move(i));
            item = int32_t(v.items.size() - 1);
        }
        v.itemOfNode[n->id()] = item;
        for (ir::Node *in : n->inputNodes()) {
            const int32_t from = hidden[in->id()] ? -1 : v.itemOfNode[in->id()];
            if (from < 0 || from == item)
                continue;
            if (auto p = pathOfBox.find(from); p != pathOfBox.end())
                if (Call &c = calls[p->second]; c.item == from)
                    c.over = true;
        }
    }
    // Hidden parameters and constants go with their first reader that is shown (through the
    // hidden nodes computed from them): selecting one shows the reader; its tooltip lists them.
    std::vector<ir::Node *> hiddenNodes;
    for (ir::Node *n = g.first(); n; n = n->next())
        if (hidden[n->id()])
            hiddenNodes.push_back(n);
    for (auto k = hiddenNodes.rbegin(); k != hiddenNodes.rend(); ++k) {
        ir::Node *n = *k;
        for (ir::Node *u : n->users()) {
            const int32_t r = v.itemOfNode[u->id()];
            if (r < 0)
                continue;
            v.itemOfNode[n->id()] = r;
            auto &reader = v.items[size_t(r)];
            if (++reader.hiddenInputs <= 3) {
                std::string what = n->target().empty() || n->op() != ir::OpKind::GetAttr ? n->name() : n->target();
                if (n->meta().val.kind != ir::ValueMeta::Kind::Unknown)
                    what += " " + n->meta().val.toString();
                reader.hiddenSummary = what + (reader.hiddenSummary.empty() ? "" : ", ") + reader.hiddenSummary;
            }
            break;
        }
    }
    for (auto &i : v.items)
        sizeItem(i);
    // Edges between the items that stand for a node and its visible inputs (once each, with how
    // many node edges they stand for and the first value they carry).
    struct Key {
        uint64_t key;
        const ir::Node *value;
    };
    std::vector<Key> keys;
    for (ir::Node *n = g.first(); n; n = n->next()) {
        if (hidden[n->id()])
            continue;
        const int32_t to = v.itemOfNode[n->id()];
        for (ir::Node *in : n->inputNodes()) {
            if (hidden[in->id()])
                continue;
            const int32_t from = v.itemOfNode[in->id()];
            if (from >= 0 && to >= 0 && from != to)
                keys.push_back({(uint64_t(uint32_t(from)) << 32) | uint32_t(to), in});
        }
    }
    std::stable_sort(keys.begin(), keys.end(), [](const Key &a, const Key &b) { return a.key < b.key; });
    for (size_t k = 0; k < keys.size();) {
        size_t e = k;
        while (e < keys.size() && keys[e].key == keys[k].key)
            ++e;
        ViewEdge edge;
        edge.from = uint32_t(keys[k].key >> 32);
        edge.to = uint32_t(keys[k].key & 0xffffffffu);
        edge.value = keys[k].value;
        edge.count = uint32_t(e - k);
        v.edges.push_back(std::move(edge));
        k = e;
    }
    return v;
}

void layeredLayout(ViewGraph &v, const LayoutOptions &o)
{
    const size_t n = v.items.size();
    if (n == 0) {
        v.width = v.height = 0;
        return;
    }
    if (o.layering == Layering::Auto) {
        // The layerings differ by view (the least total edge length is not always the fewest
        // crossings): small views try each and keep the picture with the fewest crossings.
        LayoutOptions each = o;
        each.layering = Layering::LongestPath;
        if (n > o.tryLayeringsItems || n < 3) {
            layeredLayout(v, each);
            return;
        }
        ViewGraph best;
        size_t fewest = SIZE_MAX;
        for (const Layering l : {Layering::LongestPath, Layering::NetworkSimplex, Layering::NetworkSimplexBalanced}) {
            ViewGraph candidate = v;
            each.layering = l;
            layeredLayout(candidate, each);
            const size_t crossings = measureLayout(candidate).crossings;
            if (crossings < fewest) {
                fewest = crossings;
                best = std::move(candidate);
            }
            if (fewest == 0)
                break;
        }
        v = std::move(best);
        return;
    }
    // Layers by data flow: a topological order of the items (program order among the ready
    // ones), so a module box is ranked by its inputs, not by its first node (often a weight read
    // early). A cycle between boxes (a module whose calls interleave with the rest) is broken at
    // the earliest item left; the edges it leaves pointing upwards are back edges.
    std::vector<std::vector<uint32_t>> out(n), in(n);
    for (const auto &e : v.edges) {
        out[e.from].push_back(e.to);
        in[e.to].push_back(e.from);
    }
    std::vector<uint32_t> order;
    order.reserve(n);
    {
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
    }
    std::vector<uint32_t> pos(n);
    for (size_t k = 0; k < n; ++k)
        pos[order[k]] = uint32_t(k);
    std::vector<std::vector<uint32_t>> preds(n), succs(n);
    for (auto &e : v.edges) {
        e.back = pos[e.from] > pos[e.to];
        if (e.back)
            continue;
        preds[e.to].push_back(e.from);
        succs[e.from].push_back(e.to);
    }
    int layers = 0;
    for (uint32_t i : order) {
        int l = 0;
        for (uint32_t p : preds[i])
            l = std::max(l, v.items[p].layer + 1);
        v.items[i].layer = l;
        layers = std::max(layers, l + 1);
    }
    bool ranked = false;
    if (o.layering != Layering::LongestPath) {
        // Network simplex (dot's ranking): the least total edge length.
        std::vector<std::pair<uint32_t, uint32_t>> forward;
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t t : succs[i])
                forward.push_back({i, t});
        const auto ranks = networkSimplexRanks(n, forward, 2 * n + 200, o.layering == Layering::NetworkSimplexBalanced);
        if (!ranks.empty()) {
            layers = 0;
            for (uint32_t i = 0; i < n; ++i) {
                v.items[i].layer = ranks[i];
                layers = std::max(layers, ranks[i] + 1);
            }
            ranked = true;
        }
    }
    // Longest path: work that does not depend on the model's inputs (weight-only chains: a
    // post-grad graph's folded batch-norm scales, an export's weight reshapes) is placed as late as
    // it can be, just above its first reader, instead of at the top with edges reaching down
    // hundreds of layers. Sources (inputs), and items with more readers than inputs, sit just
    // above their first reader too, instead of all in layer 0.
    if (!ranked) {
        std::vector<uint8_t> fromInput(n, 0);
        for (uint32_t i : order) {
            const auto &it = v.items[i];
            fromInput[i] = fromInput[i] || (it.node && it.category == OpCategory::Input);
            if (fromInput[i])
                for (uint32_t t : succs[i])
                    fromInput[t] = 1;
        }
        for (auto k = order.rbegin(); k != order.rend(); ++k) {
            const uint32_t i = *k;
            if (succs[i].empty() || (fromInput[i] && !preds[i].empty() && succs[i].size() <= preds[i].size()))
                continue;
            int first = layers;
            for (uint32_t t : succs[i])
                first = std::min(first, v.items[t].layer);
            if (first < layers && first - 1 > v.items[i].layer)
                v.items[i].layer = first - 1;
        }
    }
    // Long edges get a chain of dummies, one per layer they pass (small views: the ordering then
    // places their routes like items, which keeps them straight and uncrossed). Slots 0..n-1 are
    // the items, n.. the dummies.
    std::vector<int> layerOf(n);
    std::vector<double> widthOf(n), heightOf(n);
    for (size_t i = 0; i < n; ++i)
        layerOf[i] = v.items[i].layer, widthOf[i] = v.items[i].w, heightOf[i] = v.items[i].h;
    std::vector<std::vector<uint32_t>> up(preds), down(succs); // ordering neighbours (chains for long edges)
    struct Chain {
        size_t edge;
        uint32_t first;
        int count;
    };
    std::vector<Chain> chains;
    std::vector<std::pair<uint32_t, int>> trunks; // each bundle's first dummy and length
    {
        // Long edges from one item share one chain (a bundle: one line down the side of the
        // picture, branching off to each reader, instead of a lane per reader), placed and
        // ordered once.
        std::vector<int> reach(n, 0); // the longest span of each item's edges
        for (const auto &e : v.edges)
            if (!e.back)
                reach[e.from] = std::max(reach[e.from], v.items[e.to].layer - v.items[e.from].layer);
        size_t dummies = 0;
        for (int r : reach)
            dummies += size_t(std::max(0, r - 1));
        constexpr size_t kDummyItems = 5000, kDummies = 40000;
        if (n <= kDummyItems && dummies <= kDummies) {
            for (auto &l : up)
                l.clear();
            for (auto &l : down)
                l.clear();
            std::vector<uint32_t> trunk(n, 0); // the first dummy of each item's bundle
            for (uint32_t i = 0; i < n; ++i) {
                if (reach[i] < 2)
                    continue;
                trunk[i] = uint32_t(layerOf.size());
                trunks.push_back({trunk[i], reach[i] - 1});
                uint32_t prev = i;
                for (int k = 1; k < reach[i]; ++k) {
                    const uint32_t d = uint32_t(layerOf.size());
                    layerOf.push_back(v.items[i].layer + k);
                    widthOf.push_back(6);
                    heightOf.push_back(0);
                    up.emplace_back();
                    down.emplace_back();
                    up[d].push_back(prev);
                    down[prev].push_back(d);
                    prev = d;
                }
            }
            for (size_t ei = 0; ei < v.edges.size(); ++ei) {
                const auto &e = v.edges[ei];
                if (e.back)
                    continue;
                const int span = v.items[e.to].layer - v.items[e.from].layer;
                uint32_t prev = e.from;
                if (span > 1) {
                    chains.push_back({ei, trunk[e.from], span - 1});
                    prev = trunk[e.from] + uint32_t(span - 2);
                }
                up[e.to].push_back(prev);
                down[prev].push_back(e.to);
            }
        }
    }
    const size_t slots = layerOf.size();
    std::vector<std::vector<uint32_t>> byLayer(static_cast<size_t>(layers));
    for (size_t i = 0; i < slots; ++i)
        byLayer[size_t(layerOf[i])].push_back(uint32_t(i));
    // Order within layers (dot's mincross): sweeps down and up, each slot moving to the weighted
    // median position of its neighbours in the layer just passed (slots without neighbours there
    // keep their place), each sweep followed by transposition (neighbours swapped while that
    // removes crossings); the order with the fewest crossings seen is kept.
    //
    // Nodes of one expanded module stay together in each layer (so its frame holds its own nodes):
    // in the grouped order, each sorted layer is grouped by the mean position of its modules,
    // outermost first, and transposition keeps the groups. Grouping costs crossings where data
    // flows across modules (a tangle of blocks), so it is kept only when it costs few crossings
    // against the free order; else frames that would hold others are not drawn.
    using Layers = std::vector<std::vector<uint32_t>>;
    std::vector<uint32_t> clusterId(slots, 0);          // 0: no module
    std::vector<std::vector<uint32_t>> chainOf(1);      // cluster id -> its module and those around it, outermost first
    bool framed = false;
    {
        std::unordered_map<std::string, uint32_t> ids;
        ids.emplace(std::string(), 0u);
        for (size_t i = 0; i < n; ++i) {
            const std::string &path = v.items[i].cluster;
            if (path.empty())
                continue;
            framed = true;
            // The path's prefixes, outermost first, each with the chain of those around it.
            uint32_t id = 0;
            for (size_t k = path.find('.');; k = path.find('.', k + 1)) {
                const std::string prefix = k == std::string::npos ? path : path.substr(0, k);
                auto [it, fresh] = ids.emplace(prefix, uint32_t(chainOf.size()));
                if (fresh) {
                    std::vector<uint32_t> chain = chainOf[id];
                    chain.push_back(it->second);
                    chainOf.push_back(std::move(chain));
                }
                id = it->second;
                if (k == std::string::npos)
                    break;
            }
            clusterId[i] = id;
        }
    }
    std::vector<uint32_t> idx(slots); // each slot's index in its layer
    auto renumber = [&](const Layers &bl) {
        for (const auto &layer : bl)
            for (size_t k = 0; k < layer.size(); ++k)
                idx[layer[k]] = uint32_t(k);
    };
    // A layer grouped by modules: slots by the mean index of their modules, outermost first, then their own.
    std::vector<double> sum(chainOf.size()), cnt(chainOf.size());
    auto group = [&](std::vector<uint32_t> &layer) {
        for (uint32_t i : layer)
            for (uint32_t c : chainOf[clusterId[i]])
                sum[c] = 0, cnt[c] = 0;
        for (uint32_t i : layer)
            for (uint32_t c : chainOf[clusterId[i]])
                sum[c] += idx[i], cnt[c] += 1;
        std::stable_sort(layer.begin(), layer.end(), [&](uint32_t a, uint32_t b) {
            const auto &x = chainOf[clusterId[a]], &y = chainOf[clusterId[b]];
            for (size_t k = 0; k < std::min(x.size(), y.size()); ++k) {
                if (x[k] == y[k])
                    continue;
                const double ka = sum[x[k]] / cnt[x[k]], kb = sum[y[k]] / cnt[y[k]];
                if (ka != kb)
                    return ka < kb;
                return x[k] < y[k];
            }
            const double ka = x.size() > y.size() ? sum[x[y.size()]] / cnt[x[y.size()]] : idx[a];
            const double kb = y.size() > x.size() ? sum[y[x.size()]] / cnt[y[x.size()]] : idx[b];
            return ka != kb ? ka < kb : idx[a] < idx[b];
        });
        for (size_t k = 0; k < layer.size(); ++k)
            idx[layer[k]] = uint32_t(k);
    };
    // One sweep: each layer sorted by the weighted median of its neighbours in the layer before it.
    std::vector<double> key(slots), key2(slots);
    std::vector<uint32_t> near;
    auto sweep = [&](Layers &bl, bool downward, bool grouped) {
        for (int li = downward ? 1 : layers - 2; downward ? li < layers : li >= 0; li += downward ? 1 : -1) {
            auto &layer = bl[size_t(li)];
            const int from = li + (downward ? -1 : 1);
            std::vector<uint32_t> movable, places;
            for (size_t k = 0; k < layer.size(); ++k) {
                const uint32_t i = layer[k];
                near.clear();
                for (uint32_t j : downward ? up[i] : down[i])
                    if (layerOf[j] == from)
                        near.push_back(idx[j]);
                if (near.empty())
                    continue; // keeps its place
                std::sort(near.begin(), near.end());
                const size_t m = near.size() / 2;
                double med;
                if (near.size() % 2 || near.size() == 2)
                    med = near.size() == 2 ? (near[0] + near[1]) / 2.0 : near[m];
                else {
                    const double l = near[m - 1] - near.front(), r = near.back() - near[m];
                    med = l + r == 0 ? (near[m - 1] + near[m]) / 2.0 : (near[m - 1] * r + near[m] * l) / (l + r);
                }
                key[i] = med;
                // Ties go by the neighbours on the other side (a side chain joining the node its
                // neighbour joins stays on the side it leaves from).
                double other = 0, cnt = 0;
                for (uint32_t j : downward ? down[i] : up[i])
                    if (layerOf[j] == li + (downward ? 1 : -1))
                        other += idx[j], cnt += 1;
                key2[i] = cnt ? other / cnt : double(k); // (no neighbours there: its own place)
                movable.push_back(i);
                places.push_back(uint32_t(k));
            }
            std::stable_sort(movable.begin(), movable.end(), [&](uint32_t a, uint32_t b) {
                return key[a] != key[b] ? key[a] < key[b] : key2[a] < key2[b];
            });
            for (size_t k = 0; k < movable.size(); ++k)
                layer[places[k]] = movable[k];
            for (size_t k = 0; k < layer.size(); ++k)
                idx[layer[k]] = uint32_t(k);
            if (grouped)
                group(layer);
        }
    };
    // Transposition (as dot's): swap neighbours in a layer while that removes crossings with the
    // layers above and below; in the grouped order a module's nodes stay together (dummies move
    // freely: frames hold nodes only).
    auto pairCrossings = [&](uint32_t left, uint32_t right) {
        size_t c = 0;
        for (const auto *nb : {&up, &down})
            for (uint32_t a : (*nb)[left])
                for (uint32_t b : (*nb)[right])
                    c += layerOf[a] == layerOf[b] && idx[a] > idx[b];
        return c;
    };
    // In the grouped order, whole modules swap places too: two neighbouring runs of nodes (each
    // all of its module's nodes in the layer, below the module the two share) trade places when
    // that removes crossings.
    auto inBranch = [&](uint32_t node, uint32_t branch, size_t depth) {
        const auto &c = chainOf[clusterId[node]];
        return c.size() > depth && c[depth] == branch;
    };
    auto swapBlocks = [&](std::vector<uint32_t> &layer) {
        bool improved = false;
        const size_t size = layer.size();
        for (size_t k = 0; k < size;) {
            if (layer[k] >= n) {
                ++k;
                continue;
            }
            size_t m = k;
            while (m < size && layer[m] < n && clusterId[layer[m]] == clusterId[layer[k]])
                ++m;
            if (m >= size || layer[m] >= n) {
                k = m;
                continue;
            }
            size_t r = m;
            while (r < size && layer[r] < n && clusterId[layer[r]] == clusterId[layer[m]])
                ++r;
            const auto &ca = chainOf[clusterId[layer[k]]], &cb = chainOf[clusterId[layer[m]]];
            size_t d = 0;
            while (d < ca.size() && d < cb.size() && ca[d] == cb[d])
                ++d;
            bool ok = true;
            if (ca.size() > d)
                for (size_t j = k; j-- > 0;)
                    if (layer[j] < n) {
                        ok = !inBranch(layer[j], ca[d], d);
                        break;
                    }
            if (ok && cb.size() > d)
                for (size_t j = r; j < size; ++j)
                    if (layer[j] < n) {
                        ok = !inBranch(layer[j], cb[d], d);
                        break;
                    }
            if (ok) {
                size_t before = 0, after = 0;
                for (size_t a = k; a < m; ++a)
                    for (size_t b = m; b < r; ++b) {
                        before += pairCrossings(layer[a], layer[b]);
                        after += pairCrossings(layer[b], layer[a]);
                    }
                if (after < before) {
                    std::rotate(layer.begin() + std::ptrdiff_t(k), layer.begin() + std::ptrdiff_t(m), layer.begin() + std::ptrdiff_t(r));
                    for (size_t j = k; j < r; ++j)
                        idx[layer[j]] = uint32_t(j);
                    improved = true;
                    k += r - m;
                    continue;
                }
            }
            k = m;
        }
        return improved;
    };
    auto transpose = [&](Layers &bl, bool grouped) {
        for (int pass = 0; pass < 16; ++pass) {
            bool improved = false;
            for (auto &layer : bl)
                for (size_t k = 0; k + 1 < layer.size(); ++k) {
                    const uint32_t u = layer[k], w = layer[k + 1];
                    if (grouped && clusterId[u] != clusterId[w] && u < n && w < n)
                        continue;
                    const size_t c0 = pairCrossings(u, w), c1 = pairCrossings(w, u);
                    if (c1 < c0) {
                        std::swap(layer[k], layer[k + 1]);
                        std::swap(idx[u], idx[w]);
                        improved = true;
                    }
                }
            if (grouped)
                for (auto &layer : bl)
                    improved = swapBlocks(layer) || improved;
            if (!improved)
                break;
        }
    };
    // Crossings between adjacent layers (inversions of the edge pieces, counted with a Fenwick tree).
    std::vector<std::pair<uint32_t, uint32_t>> pieces;
    std::vector<uint32_t> fenwick;
    auto crossingsBelow = [&](const Layers &bl, size_t li) { // between layers li and li + 1
        size_t c = 0;
        pieces.clear();
        for (uint32_t a : bl[li])
            for (uint32_t b : down[a])
                if (layerOf[b] == int(li) + 1)
                    pieces.push_back({idx[a], idx[b]});
        std::sort(pieces.begin(), pieces.end());
        const size_t width = bl[li + 1].size();
        fenwick.assign(width + 1, 0);
        size_t inserted = 0;
        for (size_t k = 0; k < pieces.size();) {
            size_t e = k;
            for (; e < pieces.size() && pieces[e].first == pieces[k].first; ++e) {
                size_t atMost = 0; // inserted pieces ending at or left of this one's end
                for (size_t f = pieces[e].second + 1; f > 0; f -= f & (~f + 1))
                    atMost += fenwick[f];
                c += inserted - atMost;
            }
            for (; k < e; ++k, ++inserted)
                for (size_t f = pieces[k].second + 1; f <= width; f += f & (~f + 1))
                    ++fenwick[f];
        }
        return c;
    };
    auto countCrossings = [&](const Layers &bl) {
        size_t c = 0;
        for (size_t li = 0; li + 1 < bl.size(); ++li)
            c += crossingsBelow(bl, li);
        return c;
    };
    auto mincrossFrom = [&](Layers &bl, bool grouped, int iterations, bool downFirst) {
        renumber(bl);
        if (grouped)
            for (auto &layer : bl)
                group(layer);
        transpose(bl, grouped);
        size_t best = countCrossings(bl);
        Layers kept = bl;
        for (int it = 0, stale = 0; it < iterations && best > 0 && stale < 6; ++it) {
            sweep(bl, (it % 2 == 0) == downFirst, grouped);
            transpose(bl, grouped);
            const size_t c = countCrossings(bl);
            stale = c < best ? 0 : stale + 1;
            if (c <= best) {
                best = c;
                kept = bl;
            }
        }
        // A long bundle can lie on the wrong side of a whole run of blocks, which no swap of
        // neighbours mends: each bundle also tries the far left and the far right of its layers.
        bl = kept;
        renumber(bl);
        for (const auto &trunk : trunks) {
            const uint32_t first = trunk.first; // (plain names: lambdas below capture them)
            const int count = trunk.second;
            if (count < 4 || best == 0)
                continue;
            const size_t top = size_t(layerOf[first]), bottom = top + size_t(count) - 1;
            auto crossingsAround = [&]() {
                size_t c = 0;
                for (size_t l = top - 1; l <= bottom && l + 1 < bl.size(); ++l)
                    c += crossingsBelow(bl, l);
                return c;
            };
            const size_t before = crossingsAround();
            size_t fewest = before;
            int side = 0; // 0: where it is, 1: far left, 2: far right
            std::vector<uint32_t> home(static_cast<size_t>(count));
            for (int k = 0; k < count; ++k)
                home[size_t(k)] = idx[first + uint32_t(k)];
            auto moveTo = [&](int where) {
                for (int k = 0; k < count; ++k) {
                    const uint32_t d = first + uint32_t(k);
                    auto &layer = bl[size_t(layerOf[d])];
                    layer.erase(layer.begin() + std::ptrdiff_t(idx[d]));
                    const size_t at = where == 1 ? 0 : where == 2 ? layer.size() : size_t(home[size_t(k)]);
                    layer.insert(layer.begin() + std::ptrdiff_t(at), d);
                    for (size_t j = 0; j < layer.size(); ++j)
                        idx[layer[j]] = uint32_t(j);
                }
            };
            for (int where : {1, 2}) {
                moveTo(where);
                if (const size_t c = crossingsAround(); c < fewest)
                    fewest = c, side = where;
            }
            moveTo(side == 2 ? 2 : 0);
            if (side == 1)
                moveTo(1);
        }
        if (const size_t c = countCrossings(bl); c <= best) {
            best = c;
            kept = bl;
        }
        bl.swap(kept);
        return best;
    };
    // Two starting orders (program order, and dot's: depth first from the sources), each swept
    // first down and first up; the best result is kept.
    auto depthFirstOrder = [&]() {
        Layers depthFirst(static_cast<size_t>(layers));
        std::vector<uint8_t> seen(slots, 0);
        std::vector<uint32_t> stack;
        for (uint32_t s0 = 0; s0 < slots; ++s0) {
            if (seen[s0] || !up[s0].empty())
                continue;
            stack.push_back(s0);
            seen[s0] = 1;
            while (!stack.empty()) {
                const uint32_t i = stack.back();
                stack.pop_back();
                depthFirst[size_t(layerOf[i])].push_back(i);
                for (auto t = down[i].rbegin(); t != down[i].rend(); ++t)
                    if (!seen[*t]) {
                        seen[*t] = 1;
                        stack.push_back(*t);
                    }
            }
        }
        for (uint32_t i = 0; i < slots; ++i)
            if (!seen[i])
                depthFirst[size_t(layerOf[i])].push_back(i);
        return depthFirst;
    };
    Layers depthFirst;
    auto mincross = [&](Layers &bl, bool grouped, int iterations) {
        if (depthFirst.empty())
            depthFirst = depthFirstOrder();
        size_t best = SIZE_MAX;
        Layers result;
        for (const Layers *start : {&bl, &depthFirst})
            for (const bool downFirst : {true, false}) {
                Layers l = *start;
                const size_t c = mincrossFrom(l, grouped, iterations, downFirst);
                if (c < best) {
                    best = c;
                    result.swap(l);
                }
                if (best == 0)
                    break;
            }
        bl.swap(result);
        renumber(bl);
        return best;
    };
    if (slots <= 20000) {
        const int iterations = slots <= 5000 ? 24 : 8;
        if (framed) {
            Layers plain = byLayer;
            const size_t free = mincross(plain, false, iterations);
            const size_t grouped = mincross(byLayer, true, iterations);
            if (double(grouped) > double(free) * 1.25 + 8)
                byLayer.swap(plain);
        } else {
            mincross(byLayer, false, iterations);
        }
    } else {
        // Very large views: a few median sweeps (fractions of a second at 100k items).
        renumber(byLayer);
        for (int s = 0; s < o.sweeps; ++s)
            sweep(byLayer, s % 2 == 0, false);
    }
    // Coordinates: layers top to bottom, slots left to right. A layer wider than the wrap width
    // (hundreds of parallel blocks) continues on further rows, so the scene keeps a shape a
    // screen can show; each row is centred.
    double area = 0;
    for (const auto &it : v.items)
        area += (it.w + o.itemGap) * (it.h + o.layerGap);
    const double wrap = n <= o.wrapItems ? 1e300 : std::max(o.minWrapWidth, 2.0 * std::sqrt(area));
    struct Row {
        std::vector<uint32_t> items;
        double width = 0, height = 0;
    };
    std::vector<std::vector<Row>> rows(static_cast<size_t>(layers));
    double widest = 0;
    for (int li = 0; li < layers; ++li) {
        auto &lr = rows[size_t(li)];
        lr.emplace_back();
        for (uint32_t i : byLayer[size_t(li)]) {
            if (!lr.back().items.empty() && lr.back().width + widthOf[i] > wrap)
                lr.emplace_back();
            lr.back().items.push_back(i);
            lr.back().width += widthOf[i] + o.itemGap;
            lr.back().height = std::max(lr.back().height, heightOf[i]);
        }
        for (const auto &r : lr)
            widest = std::max(widest, r.width);
    }
    std::vector<Point> at(slots);
    double y = 0;
    for (int li = 0; li < layers; ++li) {
        for (const auto &r : rows[size_t(li)]) {
            double x = (widest - r.width) / 2;
            for (uint32_t i : r.items) {
                at[i] = {x, y};
                if (i < n) {
                    v.items[i].x = x;
                    v.items[i].y = y;
                }
                x += widthOf[i] + o.itemGap;
            }
            y += std::max(r.height, 8.0) + o.itemGap;
        }
        y += o.layerGap - o.itemGap;
    }
    v.width = widest;
    v.height = y;
    for (auto &e : v.edges)
        e.via.clear();
    for (const auto &c : chains)
        for (int k = 0; k < c.count; ++k)
            v.edges[c.edge].via.push_back({at[c.first + uint32_t(k)].x + 3, at[c.first + uint32_t(k)].y});
    routeEdges(v, o.itemGap);
}

} // namespace fxlens::layout
