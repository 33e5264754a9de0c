// SPDX-License-Identifier: MIT
// Laying a view out where its previous version was (see Layered.h: placeStable).
#include "layout/Layered.h"

#include <algorithm>
#include <unordered_map>

namespace fxlens::layout {

namespace {

struct Box {
    double x0, y0, x1, y1;
    bool overlaps(const Box &o, double gap) const { return x0 < o.x1 + gap && o.x0 < x1 + gap && y0 < o.y1 + gap && o.y0 < y1 + gap; }
};

} // namespace

StableResult placeStable(ViewGraph &v, const ViewGraph &previous, double maxNewShare, const LayoutOptions &o, double maxHoleShare)
{
    StableResult r;
    std::unordered_map<std::string, size_t> before;
    for (size_t i = 0; i < previous.items.size(); ++i)
        before.emplace(previous.items[i].label, i);
    std::vector<uint8_t> kept(v.items.size(), 0);
    std::unordered_map<std::string, bool> still;
    for (size_t i = 0; i < v.items.size(); ++i) {
        auto it = before.find(v.items[i].label);
        if (it == before.end()) {
            r.added.push_back(uint32_t(i));
            continue;
        }
        kept[i] = 1;
        still[v.items[i].label] = true;
    }
    if (previous.items.empty() || double(r.added.size()) > maxNewShare * double(std::max<size_t>(v.items.size(), 1))) {
        r.added.clear();
        layeredLayout(v, o);
        return r;
    }
    double removedArea = 0, keptArea = 0;
    for (const auto &p : previous.items)
        if (!still.count(p.label)) {
            ViewItem ghost = p;
            ghost.node = nullptr;
            removedArea += p.w * p.h;
            r.removed.push_back(std::move(ghost));
        } else {
            keptArea += p.w * p.h;
        }
    // A large removal would leave holes in the picture: it is laid out afresh (no ghosts).
    if (removedArea > maxHoleShare * keptArea) {
        r = {};
        layeredLayout(v, o);
        return r;
    }
    // Kept items where they were (their old size: nothing moves).
    std::vector<Box> taken;
    for (size_t i = 0; i < v.items.size(); ++i)
        if (kept[i]) {
            const auto &p = previous.items[before[v.items[i].label]];
            auto &it = v.items[i];
            it.x = p.x, it.y = p.y, it.w = p.w, it.h = p.h, it.layer = p.layer;
            taken.push_back({it.x, it.y, it.x + it.w, it.y + it.h});
        }
    for (const auto &g : r.removed)
        taken.push_back({g.x, g.y, g.x + g.w, g.y + g.h});
    // New items in program order (their inputs first): below their inputs, near their x.
    std::vector<std::vector<uint32_t>> inputs(v.items.size());
    for (const auto &e : v.edges)
        inputs[e.to].push_back(e.from);
    std::vector<uint8_t> placed(kept);
    double right = 0;
    for (const auto &b : taken)
        right = std::max(right, b.x1);
    for (uint32_t i : r.added) {
        auto &it = v.items[i];
        double bottom = -1, cx = 0;
        size_t n = 0;
        for (uint32_t in : inputs[i])
            if (placed[in]) {
                const auto &a = v.items[in];
                bottom = std::max(bottom, a.y + a.h);
                cx += a.x + a.w / 2;
                ++n;
            }
        double y = n ? bottom + o.layerGap : 0;
        const double want = n ? cx / double(n) - it.w / 2 : right + o.itemGap;
        // The nearest free place: alternately right and left of where it wants to be, then a row lower.
        bool done = false;
        for (int row = 0; row < 200 && !done; ++row, y += it.h + o.itemGap)
            for (int k = 0; k < 60 && !done; ++k) {
                const int ring = (k + 1) / 2; // 0, 1, 1, 2, 2, ...: the k-th place out from `want`
                const double step = (it.w + o.itemGap) * double(ring) * (k % 2 ? 1 : -1);
                const Box b{want + step, y, want + step + it.w, y + it.h};
                if (b.x0 < 0)
                    continue;
                if (std::none_of(taken.begin(), taken.end(), [&](const Box &t) { return t.overlaps(b, o.itemGap / 2); })) {
                    it.x = b.x0, it.y = b.y0;
                    taken.push_back(b);
                    done = true;
                }
            }
        if (!done) { // nowhere near: past the right end
            it.x = right + o.itemGap, it.y = y;
            taken.push_back({it.x, it.y, it.x + it.w, it.y + it.h});
        }
        right = std::max(right, it.x + it.w);
        placed[i] = 1;
    }
    v.width = v.height = 0;
    for (const auto &b : taken)
        v.width = std::max(v.width, b.x1), v.height = std::max(v.height, b.y1);
    v.height += o.layerGap;
    routePlacedEdges(v, o.itemGap);
    return r;
}

} // namespace fxlens::layout
