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

/// Whether item cluster `cluster` lies in module `path` (it, or a module inside it).
bool within(const std::string &cluster, const std::string &path)
{
    return cluster == path || (cluster.size() > path.size() && cluster.compare(0, path.size(), path) == 0 && cluster[path.size()] == '.');
}

/// The frames the kept items make (before the new ones are placed).
std::vector<ModuleFrame> keptFrames(const ViewGraph &v, const std::vector<uint8_t> &kept)
{
    ViewGraph k;
    k.modules = v.modules;
    for (size_t i = 0; i < v.items.size(); ++i)
        if (kept[i])
            k.items.push_back(v.items[i]);
    return moduleFrames(k);
}

/// A place for a new item of module `cluster` clear of the frames it is not in and of the title
/// bands of those it is in, and across no side of the innermost of them (it may stretch it down).
bool clearOfFrames(const Box &b, const std::string &cluster, const std::vector<ModuleFrame> &frames, double gap)
{
    const ModuleFrame *inner = nullptr;
    for (const auto &f : frames) {
        const bool own = within(cluster, f.path);
        if (own && (!inner || f.depth > inner->depth))
            inner = &f;
        const Box band = own ? Box{f.x0, f.y0, f.x1, f.y0 + kFrameTitle} : Box{f.x0, f.y0, f.x1, f.y1};
        if (band.overlaps(b, gap))
            return false;
    }
    return !inner || (b.x0 >= inner->x0 + kFramePad && b.x1 <= inner->x1 - kFramePad && b.y0 >= inner->y0 + kFrameTitle);
}

/// No frame drawn around an empty half: none stretched by the new items to more than twice the
/// area its kept items span.
bool noHoles(const ViewGraph &v, const std::vector<ModuleFrame> &before)
{
    for (const auto &f : moduleFrames(v))
        for (const auto &k : before)
            if (k.path == f.path && (f.x1 - f.x0) * (f.y1 - f.y0) > 2 * (k.x1 - k.x0) * (k.y1 - k.y0))
                return false;
    return true;
}

/// Where placeStable puts the new items: in program order (their inputs first), below their
/// inputs near their x, in the nearest free place inside their module's frame; where there is none
/// near, a row is opened under the inputs (what lies below moves down).
struct NewPlaces {
    ViewGraph &v;
    StableResult &r;
    const LayoutOptions &o;
    std::vector<Box> taken;          ///< kept items, ghosts, new items placed
    std::vector<ModuleFrame> frames; ///< of the kept items (moved with them)
    std::vector<uint8_t> placed;
    double right = 0;

    void placeAll()
    {
        std::vector<std::vector<uint32_t>> inputs(v.items.size());
        for (const auto &e : v.edges)
            inputs[e.to].push_back(e.from);
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
            const double y = n ? bottom + o.layerGap : 0;
            const double want = n ? cx / double(n) - it.w / 2 : right + o.itemGap;
            bool done = find(it, want, y, 2);
            if (!done && n) {
                openRow(bottom + o.layerGap / 2, it.h + o.layerGap);
                done = find(it, want, y, 1);
            }
            done = done || find(it, want, y, 200);
            if (!done) { // nowhere near: past the right end
                it.x = right + o.itemGap, it.y = y;
                taken.push_back({it.x, it.y, it.x + it.w, it.y + it.h});
            }
            right = std::max(right, it.x + it.w);
            placed[i] = 1;
        }
    }

    /// The nearest free place in `rows` rows from `y` down: alternately right and left of `want`.
    bool find(ViewItem &it, double want, double y, int rows)
    {
        for (int row = 0; row < rows; ++row, y += it.h + o.itemGap)
            for (int k = 0; k < 60; ++k) {
                const int ring = (k + 1) / 2; // 0, 1, 1, 2, 2, ...: the k-th place out from `want`
                const double step = (it.w + o.itemGap) * double(ring) * (k % 2 ? 1 : -1);
                const Box b{want + step, y, want + step + it.w, y + it.h};
                if (b.x0 < 0)
                    continue;
                if (std::none_of(taken.begin(), taken.end(), [&](const Box &t) { return t.overlaps(b, o.itemGap / 2); }) &&
                    clearOfFrames(b, it.cluster, frames, kFramePad)) {
                    it.x = b.x0, it.y = b.y0;
                    taken.push_back(b);
                    return true;
                }
            }
        return false;
    }

    /// Everything placed that starts below `at` moves down by `dy`; frames across it grow.
    void openRow(double at, double dy)
    {
        for (size_t i = 0; i < v.items.size(); ++i)
            if (placed[i] && v.items[i].y >= at)
                v.items[i].y += dy;
        for (auto &g : r.removed)
            if (g.y >= at)
                g.y += dy;
        for (auto &b : taken)
            if (b.y0 >= at)
                b.y0 += dy, b.y1 += dy;
        for (auto &f : frames) {
            if (f.y0 >= at)
                f.y0 += dy;
            if (f.y1 >= at)
                f.y1 += dy;
        }
    }
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
    // A previous item none of whose nodes the view shows now was removed; one whose nodes are
    // drawn by other items was regrouped (a stack's members alike again, a module opened): no ghost.
    std::vector<uint8_t> shown(previous.items.size(), 0);
    for (size_t id = 0; id < previous.itemOfNode.size() && id < v.itemOfNode.size(); ++id)
        if (previous.itemOfNode[id] >= 0 && v.itemOfNode[id] >= 0)
            shown[size_t(previous.itemOfNode[id])] = 1;
    double removedArea = 0, keptArea = 0;
    for (size_t i = 0; i < previous.items.size(); ++i) {
        const auto &p = previous.items[i];
        (still.count(p.label) ? keptArea : removedArea) += p.w * p.h;
        if (!still.count(p.label) && !shown[i]) {
            ViewItem ghost = p;
            ghost.node = nullptr;
            r.removed.push_back(std::move(ghost));
        }
    }
    // A large removal (or regrouping) would leave holes in the picture: it is laid out afresh (no ghosts).
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
    NewPlaces places{v, r, o, std::move(taken), keptFrames(v, kept), kept};
    places.placeAll();
    v.width = v.height = 0;
    for (const auto &b : places.taken)
        v.width = std::max(v.width, b.x1), v.height = std::max(v.height, b.y1);
    v.height += o.layerGap;
    routePlacedEdges(v, o.itemGap);
    // Frames that would hold another module's items or a hole (with the lanes the routes widened
    // them by): the step is laid out afresh. (A view whose frames were not true before, a
    // layout's limit, is not laid out afresh for that.)
    if ((!framesTrue(v) && framesTrue(previous)) || !noHoles(v, places.frames)) {
        r = {};
        layeredLayout(v, o);
    }
    return r;
}

} // namespace fxlens::layout
