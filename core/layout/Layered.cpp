// SPDX-License-Identifier: MIT
#include "layout/Layered.h"

#include <algorithm>
#include <cmath>
#include <numeric>
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
    const auto &own = n->meta().moduleStack;
    if (own.empty() && (n->op() == ir::OpKind::GetAttr || n->op() == ir::OpKind::Placeholder) && !n->users().empty())
        return n->users().front()->meta().moduleStack;
    return own;
}

ViewGraph buildView(const ir::Graph &g, const std::set<std::string> &expanded)
{
    ViewGraph v;
    v.itemOfNode.assign(g.idBound(), -1);
    std::unordered_map<std::string, int32_t> moduleItem;
    for (ir::Node *n = g.first(); n; n = n->next()) {
        // The outermost collapsed module on the node's chain stands for it. Parameters and inputs
        // outside any module (ATen exports) go with their first reader, into its module's box.
        const auto *stack = &displayModules(n);
        const ir::ModuleFrame *box = nullptr;
        for (const auto &f : *stack)
            if (!f.path.empty() && !expanded.count(f.path)) {
                box = &f;
                break;
            }
        if (box) {
            auto it = moduleItem.find(box->path);
            if (it == moduleItem.end()) {
                ViewItem m;
                m.kind = ViewItem::Kind::Module;
                m.module = box->path;
                m.label = box->path;
                m.detail = box->type;
                m.nodeCount = 0;
                v.items.push_back(std::move(m));
                it = moduleItem.emplace(box->path, int32_t(v.items.size() - 1)).first;
            }
            ++v.items[size_t(it->second)].nodeCount;
            v.itemOfNode[n->id()] = it->second;
            continue;
        }
        ViewItem i;
        i.node = n;
        i.module = n->meta().modulePath();
        i.label = n->name();
        i.detail = n->op() == ir::OpKind::CallFunction || n->op() == ir::OpKind::CallMethod || n->op() == ir::OpKind::CallModule
            ? n->target()
            : std::string(ir::opKindName(n->op()));
        if (n->meta().val.kind != ir::ValueMeta::Kind::Unknown)
            i.value = n->meta().val.toString();
        v.items.push_back(std::move(i));
        v.itemOfNode[n->id()] = int32_t(v.items.size() - 1);
    }
    for (auto &i : v.items) {
        if (i.kind == ViewItem::Kind::Module) {
            i.detail = (i.detail.empty() ? std::string() : i.detail + ", ") + std::to_string(i.nodeCount) + " nodes";
            i.h = 40;
        } else {
            i.h = 32;
        }
        const size_t chars = std::max(i.label.size(), std::min<size_t>(i.detail.size() + (i.value.empty() ? 0 : i.value.size() + 3), 40));
        i.w = std::clamp(double(chars) * 6.5 + 16, 60.0, 260.0);
    }
    // Edges between the items that stand for a node and its inputs (once each).
    std::vector<uint64_t> keys;
    for (ir::Node *n = g.first(); n; n = n->next()) {
        const int32_t to = v.itemOfNode[n->id()];
        for (ir::Node *in : n->inputNodes()) {
            const int32_t from = v.itemOfNode[in->id()];
            if (from >= 0 && to >= 0 && from != to)
                keys.push_back((uint64_t(uint32_t(from)) << 32) | uint32_t(to));
        }
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    v.edges.reserve(keys.size());
    for (uint64_t k : keys)
        v.edges.push_back({uint32_t(k >> 32), uint32_t(k & 0xffffffffu)});
    return v;
}

void layeredLayout(ViewGraph &v, const LayoutOptions &o)
{
    const size_t n = v.items.size();
    if (n == 0) {
        v.width = v.height = 0;
        return;
    }
    // Items are created in program order, so an edge from a lower to a higher index follows the
    // data; the rare backward edges (between module boxes) do not constrain the layers.
    std::vector<std::vector<uint32_t>> preds(n), succs(n);
    for (const auto &e : v.edges) {
        if (e.from < e.to)
            preds[e.to].push_back(e.from);
        succs[e.from].push_back(e.to);
    }
    int layers = 0;
    for (size_t i = 0; i < n; ++i) {
        int l = 0;
        for (uint32_t p : preds[i])
            l = std::max(l, v.items[p].layer + 1);
        v.items[i].layer = l;
        layers = std::max(layers, l + 1);
    }
    // Sources (inputs, parameters) sit just above their first reader instead of all in layer 0,
    // where an ATen graph's hundreds of parameters would form one endless row.
    for (size_t i = 0; i < n; ++i) {
        if (!preds[i].empty() || succs[i].empty())
            continue;
        int first = layers;
        for (uint32_t t : succs[i])
            if (t > i)
                first = std::min(first, v.items[t].layer);
        if (first < layers)
            v.items[i].layer = std::max(0, first - 1);
    }
    std::vector<std::vector<uint32_t>> byLayer(static_cast<size_t>(layers));
    for (size_t i = 0; i < n; ++i)
        byLayer[size_t(v.items[i].layer)].push_back(uint32_t(i));
    // Barycenter ordering: each item moves to the mean position of its neighbours in the layer
    // above (down sweeps) or below (up sweeps); program order breaks ties.
    std::vector<double> position(n);
    auto number = [&](const std::vector<uint32_t> &layer) {
        for (size_t k = 0; k < layer.size(); ++k)
            position[layer[k]] = double(k) / double(std::max<size_t>(layer.size(), 1));
    };
    for (auto &l : byLayer)
        number(l);
    std::vector<double> key(n);
    for (int s = 0; s < o.sweeps; ++s) {
        const bool down = s % 2 == 0;
        for (int li = down ? 1 : layers - 2; down ? li < layers : li >= 0; li += down ? 1 : -1) {
            auto &layer = byLayer[size_t(li)];
            for (uint32_t i : layer) {
                const auto &nb = down ? preds[i] : succs[i];
                double sum = 0;
                size_t cnt = 0;
                for (uint32_t j : nb)
                    if (v.items[j].layer == li + (down ? -1 : 1)) {
                        sum += position[j];
                        ++cnt;
                    }
                key[i] = cnt ? sum / double(cnt) : position[i];
            }
            std::stable_sort(layer.begin(), layer.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
            number(layer);
        }
    }
    // Coordinates: layers top to bottom, items left to right. A layer wider than the wrap width
    // (hundreds of parallel blocks) continues on further rows, so the scene keeps a shape a
    // screen can show; each row is centred.
    double area = 0;
    for (const auto &it : v.items)
        area += (it.w + o.itemGap) * (it.h + o.layerGap);
    const double wrap = std::max(o.minWrapWidth, 2.0 * std::sqrt(area));
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
            const auto &it = v.items[i];
            if (!lr.back().items.empty() && lr.back().width + it.w > wrap)
                lr.emplace_back();
            lr.back().items.push_back(i);
            lr.back().width += it.w + o.itemGap;
            lr.back().height = std::max(lr.back().height, it.h);
        }
        for (const auto &r : lr)
            widest = std::max(widest, r.width);
    }
    double y = 0;
    for (int li = 0; li < layers; ++li) {
        for (const auto &r : rows[size_t(li)]) {
            double x = (widest - r.width) / 2;
            for (uint32_t i : r.items) {
                auto &it = v.items[i];
                it.x = x;
                it.y = y;
                x += it.w + o.itemGap;
            }
            y += r.height + o.itemGap;
        }
        y += o.layerGap - o.itemGap;
    }
    v.width = widest;
    v.height = y;
}

} // namespace fxlens::layout
