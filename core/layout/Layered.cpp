// SPDX-License-Identifier: MIT
#include "layout/Layered.h"

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
    std::vector<uint8_t> hidden(g.idBound(), 0);
    if (!o.showConstants)
        for (ir::Node *n = g.first(); n; n = n->next())
            hidden[n->id()] = isConstant(n, g);
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
    // Hidden parameters and constants go with their first visible reader (selecting one shows the
    // reader; the reader's tooltip lists them).
    for (ir::Node *n = g.first(); n; n = n->next()) {
        if (!hidden[n->id()])
            continue;
        for (ir::Node *u : n->users()) {
            const int32_t r = v.itemOfNode[u->id()];
            if (r < 0 || hidden[u->id()])
                continue;
            v.itemOfNode[n->id()] = r;
            auto &reader = v.items[size_t(r)];
            if (++reader.hiddenInputs <= 3) {
                std::string what = n->target().empty() ? n->name() : n->target();
                if (n->meta().val.kind != ir::ValueMeta::Kind::Unknown)
                    what += " " + n->meta().val.toString();
                reader.hiddenSummary += (reader.hiddenSummary.empty() ? "" : ", ") + what;
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
    // Work that does not depend on the model's inputs (weight-only chains: a post-grad graph's
    // folded batch-norm scales, an export's weight reshapes) is placed as late as it can be, just
    // above its first reader, instead of at the top with edges reaching down hundreds of layers.
    // Sources (inputs) sit just above their first reader too, instead of all in layer 0.
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
        if (succs[i].empty() || (fromInput[i] && !preds[i].empty()))
            continue;
        int first = layers;
        for (uint32_t t : succs[i])
            first = std::min(first, v.items[t].layer);
        if (first < layers && first - 1 > v.items[i].layer)
            v.items[i].layer = first - 1;
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
    {
        size_t dummies = 0;
        for (const auto &e : v.edges)
            if (!e.back)
                dummies += size_t(std::max(0, v.items[e.to].layer - v.items[e.from].layer - 1));
        constexpr size_t kDummyItems = 5000, kDummies = 40000;
        if (n <= kDummyItems && dummies <= kDummies) {
            for (auto &l : up)
                l.clear();
            for (auto &l : down)
                l.clear();
            for (size_t ei = 0; ei < v.edges.size(); ++ei) {
                const auto &e = v.edges[ei];
                if (e.back)
                    continue;
                const int span = v.items[e.to].layer - v.items[e.from].layer;
                uint32_t prev = e.from;
                if (span > 1) {
                    chains.push_back({ei, uint32_t(layerOf.size()), span - 1});
                    for (int k = 1; k < span; ++k) {
                        const uint32_t d = uint32_t(layerOf.size());
                        layerOf.push_back(v.items[e.from].layer + k);
                        widthOf.push_back(6);
                        heightOf.push_back(0);
                        up.emplace_back();
                        down.emplace_back();
                        up[d].push_back(prev);
                        down[prev].push_back(d);
                        prev = d;
                    }
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
    // Barycenter ordering: each slot moves to the mean position of its neighbours in the layer
    // above (down sweeps) or below (up sweeps); program order breaks ties.
    std::vector<double> position(slots);
    auto number = [&](const std::vector<uint32_t> &layer) {
        for (size_t k = 0; k < layer.size(); ++k)
            position[layer[k]] = double(k) / double(std::max<size_t>(layer.size(), 1));
    };
    for (auto &l : byLayer)
        number(l);
    std::vector<double> key(slots);
    // Small views get more sweeps (fewer crossings; still milliseconds).
    const int sweeps = n <= 3000 ? std::max(o.sweeps, 12) : o.sweeps;
    for (int s = 0; s < sweeps; ++s) {
        const bool downward = s % 2 == 0;
        for (int li = downward ? 1 : layers - 2; downward ? li < layers : li >= 0; li += downward ? 1 : -1) {
            auto &layer = byLayer[size_t(li)];
            for (uint32_t i : layer) {
                const auto &nb = downward ? up[i] : down[i];
                double sum = 0;
                size_t cnt = 0;
                for (uint32_t j : nb)
                    if (layerOf[j] == li + (downward ? -1 : 1)) {
                        sum += position[j];
                        ++cnt;
                    }
                key[i] = cnt ? sum / double(cnt) : position[i];
            }
            std::stable_sort(layer.begin(), layer.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
            number(layer);
        }
    }
    // Nodes of one expanded module stay together in each layer (so its frame holds its own nodes):
    // slots are ordered by the mean position of their modules, outermost first, then their own.
    std::vector<std::string> clusterOf(slots);
    bool framed = false;
    for (size_t i = 0; i < n; ++i) {
        clusterOf[i] = v.items[i].cluster;
        framed = framed || !clusterOf[i].empty();
    }
    auto prefixes = [](const std::string &path) {
        std::vector<std::string> out;
        for (size_t k = path.find('.'); k != std::string::npos; k = path.find('.', k + 1))
            out.push_back(path.substr(0, k));
        if (!path.empty())
            out.push_back(path);
        return out;
    };
    using Layers = std::vector<std::vector<uint32_t>>;
    auto renumber = [](const std::vector<uint32_t> &layer, std::vector<double> &pos) {
        for (size_t k = 0; k < layer.size(); ++k)
            pos[layer[k]] = double(k) / double(std::max<size_t>(layer.size(), 1));
    };
    auto cluster = [&](Layers &bl, std::vector<double> &pos) {
        for (auto &layer : bl) {
            std::unordered_map<std::string, std::pair<double, size_t>> mean;
            for (uint32_t i : layer)
                for (const auto &p : prefixes(clusterOf[i])) {
                    auto &m = mean[p];
                    m.first += pos[i];
                    ++m.second;
                }
            std::vector<std::vector<double>> keyOf(layer.size());
            for (size_t k = 0; k < layer.size(); ++k) {
                for (const auto &p : prefixes(clusterOf[layer[k]])) {
                    const auto &m = mean[p];
                    keyOf[k].push_back(m.first / double(m.second));
                }
                keyOf[k].push_back(pos[layer[k]]);
            }
            std::vector<size_t> idx(layer.size());
            std::iota(idx.begin(), idx.end(), size_t(0));
            std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
                const auto &x = keyOf[a], &y = keyOf[b];
                for (size_t k = 0; k < std::min(x.size(), y.size()); ++k)
                    if (x[k] != y[k])
                        return x[k] < y[k];
                return x.size() < y.size();
            });
            std::vector<uint32_t> sorted;
            for (size_t k : idx)
                sorted.push_back(layer[k]);
            layer.swap(sorted);
            renumber(layer, pos);
        }
    };
    // Transposition (as dot's): swap neighbours in a layer while that removes crossings with the
    // layers above and below; with `keepModules`, a module's nodes stay together (dummies move
    // freely: frames hold nodes only).
    auto transpose = [&](Layers &bl, std::vector<double> &pos, bool keepModules) {
        auto crossings = [&](uint32_t left, uint32_t right) {
            size_t c = 0;
            for (const auto *nb : {&up, &down})
                for (uint32_t a : (*nb)[left])
                    for (uint32_t b : (*nb)[right])
                        c += layerOf[a] == layerOf[b] && pos[a] > pos[b];
            return c;
        };
        for (int pass = 0; pass < 16; ++pass) {
            bool improved = false;
            for (auto &layer : bl)
                for (size_t k = 0; k + 1 < layer.size(); ++k) {
                    const uint32_t u = layer[k], w = layer[k + 1];
                    if (keepModules && clusterOf[u] != clusterOf[w] && u < n && w < n)
                        continue;
                    if (crossings(w, u) < crossings(u, w)) {
                        std::swap(layer[k], layer[k + 1]);
                        std::swap(pos[u], pos[w]);
                        improved = true;
                    }
                }
            if (!improved)
                break;
        }
    };
    // Crossings between adjacent layers (each edge piece counted once).
    auto countCrossings = [&](const Layers &bl, const std::vector<double> &pos) {
        size_t c = 0;
        std::vector<std::pair<double, double>> pieces;
        for (size_t li = 1; li < bl.size(); ++li) {
            pieces.clear();
            for (uint32_t b : bl[li])
                for (uint32_t a : up[b])
                    if (layerOf[a] == int(li) - 1)
                        pieces.push_back({pos[a], pos[b]});
            std::sort(pieces.begin(), pieces.end());
            for (size_t i = 0; i < pieces.size(); ++i)
                for (size_t j = i + 1; j < pieces.size(); ++j)
                    c += pieces[j].first > pieces[i].first && pieces[j].second < pieces[i].second;
        }
        return c;
    };
    if (slots <= 5000) {
        // Grouping modules costs crossings where data flows across them (a tangle of blocks): it is
        // kept only when it costs little, else frames that would hold others are not drawn.
        Layers plain = byLayer;
        std::vector<double> plainPos = position;
        transpose(plain, plainPos, false);
        if (framed) {
            cluster(byLayer, position);
            transpose(byLayer, position, true);
            const size_t grouped = countCrossings(byLayer, position), free = countCrossings(plain, plainPos);
            if (double(grouped) > double(free) * 1.25 + 8) {
                byLayer.swap(plain);
                position.swap(plainPos);
            }
        } else {
            byLayer.swap(plain);
            position.swap(plainPos);
        }
    } else if (slots <= 20000) {
        transpose(byLayer, position, false); // large views: fewer crossings first (frames where they hold)
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
