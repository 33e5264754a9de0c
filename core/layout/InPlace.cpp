// SPDX-License-Identifier: MIT
// Expanding and collapsing modules without moving the rest of the picture (see Layered.h:
// placeInPlace).
#include "layout/Layered.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fxlens::layout {

namespace {

struct Rect {
    double x = 0, y = 0, w = 0, h = 0;
    bool valid = false;
};

using Matches = std::vector<std::vector<uint32_t>>;

/// The items that stand for more than one item of the other view (`many[k]`: what item k of one
/// view stands for in the other; `back` the other way round): false when some item stands for
/// none, or for several that stand for others too (the graph changed, not a module's state).
bool splitItems(const Matches &many, const Matches &back, std::vector<uint32_t> &out)
{
    for (size_t k = 0; k < many.size(); ++k) {
        if (many[k].empty())
            return false;
        if (many[k].size() > 1) {
            for (uint32_t j : many[k])
                if (back[j].size() != 1)
                    return false;
            out.push_back(uint32_t(k));
        }
    }
    return true;
}

/// One in-place relayout: the phases of placeInPlace over its working rectangles.
class InPlace {
public:
    InPlace(ViewGraph &v, const ViewGraph &previous, const LayoutOptions &o)
        : v(v), previous(previous), o(o), n(v.items.size()), newOf(previous.items.size()), oldOf(n), at(n), box(previous.items.size())
    {
    }

    bool run()
    {
        matchItems();
        // Every item is kept (one for one), a box opened (one old, several new) or a box closed
        // (several old, one new); anything else (the graph changed) is laid out afresh.
        std::vector<uint32_t> opened, closed;
        if (!splitItems(newOf, oldOf, opened) || !splitItems(oldOf, newOf, closed))
            return false;
        if (!opened.empty() || !closed.empty())
            previousFrames = moduleFrames(previous);
        keepItems(opened);
        openBoxes(opened);
        closeBoxes(closed);
        return place();
    }

private:
    /// Which old items each new item stands for, through the nodes both show.
    void matchItems()
    {
        const size_t ids = std::min(v.itemOfNode.size(), previous.itemOfNode.size());
        for (size_t k = 0; k < ids; ++k) {
            const int32_t ni = v.itemOfNode[k], oi = previous.itemOfNode[k];
            if (ni < 0 || oi < 0)
                continue;
            auto &a = newOf[size_t(oi)];
            if (std::find(a.begin(), a.end(), uint32_t(ni)) == a.end())
                a.push_back(uint32_t(ni));
            auto &b = oldOf[size_t(ni)];
            if (std::find(b.begin(), b.end(), uint32_t(oi)) == b.end())
                b.push_back(uint32_t(oi));
        }
    }

    /// Working rectangles: new items (kept ones where they were) and the boxes still to open.
    void keepItems(const std::vector<uint32_t> &opened)
    {
        for (size_t ni = 0; ni < n; ++ni)
            if (oldOf[ni].size() == 1 && newOf[oldOf[ni][0]].size() == 1) {
                const auto &p = previous.items[oldOf[ni][0]];
                at[ni] = {p.x, p.y, v.items[ni].w, v.items[ni].h, true};
                v.items[ni].layer = p.layer;
            }
        for (uint32_t oi : opened) {
            const auto &p = previous.items[oi];
            box[oi] = {p.x, p.y, p.w, p.h, true};
        }
    }

    template <class F> void forEachRect(F &&f)
    {
        for (auto &r : at)
            if (r.valid)
                f(r);
        for (auto &r : box)
            if (r.valid)
                f(r);
    }

    /// Boxes opened bottom up: what lies below moves down by the growth, what shares the box's row
    /// moves aside; the module's own layout takes the box's place, centred under its top.
    void openBoxes(std::vector<uint32_t> opened)
    {
        std::sort(opened.begin(), opened.end(), [&](uint32_t a, uint32_t b) { return previous.items[a].y > previous.items[b].y; });
        for (uint32_t oi : opened)
            openBox(oi);
    }

    /// The layout of the items box `oi` opened into, on their own.
    ViewGraph boxContents(uint32_t oi) const
    {
        ViewGraph sub;
        sub.modules = v.modules;
        std::vector<int32_t> local(n, -1);
        for (uint32_t ni : newOf[oi]) {
            local[ni] = int32_t(sub.items.size());
            sub.items.push_back(v.items[ni]);
        }
        for (const auto &e : v.edges)
            if (local[e.from] >= 0 && local[e.to] >= 0) {
                ViewEdge se = e;
                se.from = uint32_t(local[e.from]);
                se.to = uint32_t(local[e.to]);
                sub.edges.push_back(std::move(se));
            }
        layeredLayout(sub, o);
        return sub;
    }

    void openBox(uint32_t oi)
    {
        const Rect b = box[oi];
        box[oi].valid = false;
        const auto &members = newOf[oi];
        const ViewGraph sub = boxContents(oi);
        // The contents with the frames they open take the box's place: the box's module and those
        // inside it, and those around it that framed the box alone (a frame is drawn around two
        // items or more), or the stack it was one box of. Their title bands start at the box's
        // top, with the room the layout leaves above frames for edges to turn (Coordinates).
        double x0 = std::numeric_limits<double>::max(), y0 = x0, x1 = -x0, y1 = -x0;
        for (const auto &it : sub.items)
            x0 = std::min(x0, it.x), y0 = std::min(y0, it.y), x1 = std::max(x1, it.x + it.w), y1 = std::max(y1, it.y + it.h);
        for (const auto &f : moduleFrames(sub))
            if (std::none_of(previousFrames.begin(), previousFrames.end(), [&](const ModuleFrame &p) { return p.path == f.path; }))
                x0 = std::min(x0, f.x0), y0 = std::min(y0, f.y0), x1 = std::max(x1, f.x1), y1 = std::max(y1, f.y1);
        const double w = x1 - x0, h = y1 - y0;
        const double gap = o.itemGap;
        const double grow = std::max(0.0, h - b.h), widen = std::max(0.0, (w - b.w) / 2);
        const double cx = b.x + b.w / 2, bottom = b.y + b.h;
        forEachRect([&](Rect &r) {
            if (r.y >= bottom - 0.5)
                r.y += grow;
            else if (r.y + r.h > b.y && widen > 0)
                r.x += r.x + r.w / 2 < cx ? -widen - gap : widen + gap;
        });
        const double left = cx - w / 2;
        for (size_t k = 0; k < members.size(); ++k) {
            const auto &s = sub.items[k];
            at[members[k]] = {left + s.x - x0, b.y + s.y - y0, s.w, s.h, true};
            v.items[members[k]].layer = previous.items[oi].layer + s.layer;
        }
    }

    /// Boxes closed bottom up: the box takes the top of what it stood for; what lies below moves up.
    void closeBoxes(std::vector<uint32_t> closed)
    {
        std::sort(closed.begin(), closed.end(), [&](uint32_t a, uint32_t b) {
            double ya = std::numeric_limits<double>::max(), yb = ya;
            for (uint32_t oi : oldOf[a])
                ya = std::min(ya, previous.items[oi].y);
            for (uint32_t oi : oldOf[b])
                yb = std::min(yb, previous.items[oi].y);
            return ya > yb;
        });
        for (uint32_t ni : closed)
            closeBox(ni);
    }

    void closeBox(uint32_t ni)
    {
        double x0 = std::numeric_limits<double>::max(), y0 = x0, x1 = -x0, y1 = -x0;
        int layer = std::numeric_limits<int>::max();
        for (uint32_t oi : oldOf[ni]) {
            const auto &p = previous.items[oi];
            x0 = std::min(x0, p.x), y0 = std::min(y0, p.y), x1 = std::max(x1, p.x + p.w), y1 = std::max(y1, p.y + p.h);
            layer = std::min(layer, p.layer);
        }
        // The box takes the top of the module's frame (where it stood before it was opened); what
        // lies below the frame moves up.
        auto &it = v.items[ni];
        for (const auto &f : previousFrames)
            if (f.path == it.module)
                y0 = std::min(y0, f.y0), y1 = std::max(y1, f.y1);
        // Where the closed items are now (openings above may have moved them: none here, both
        // never happen in one change), then the box.
        const double shrink = std::max(0.0, (y1 - y0) - it.h);
        forEachRect([&](Rect &r) {
            if (r.y >= y1 - 0.5)
                r.y -= shrink;
        });
        at[ni] = {(x0 + x1) / 2 - it.w / 2, y0, it.w, it.h, true};
        it.layer = layer;
    }

    /// The items where their rectangles are, shifted so that nothing starts left of or above the
    /// scene's origin (the canvas keeps the module where it was on screen, whatever this shift);
    /// then the edges routed. False when some item was not placed.
    bool place()
    {
        double minX = std::numeric_limits<double>::max(), minY = minX;
        for (const auto &r : at) {
            if (!r.valid)
                return false;
            minX = std::min(minX, r.x), minY = std::min(minY, r.y);
        }
        const double dx = minX < 0 ? -minX : 0, dy = minY < 0 ? -minY : 0;
        v.width = v.height = 0;
        for (size_t ni = 0; ni < n; ++ni) {
            auto &it = v.items[ni];
            it.x = at[ni].x + dx, it.y = at[ni].y + dy;
            v.width = std::max(v.width, it.x + it.w), v.height = std::max(v.height, it.y + it.h);
        }
        v.height += o.layerGap;
        routePlacedEdges(v, o.itemGap);
        // Several boxes opened at once can push frames into each other: then afresh (unless the
        // frames were not true before either, a layout's limit).
        return framesTrue(v) || !framesTrue(previous);
    }

    ViewGraph &v;
    const ViewGraph &previous;
    const LayoutOptions &o;
    const size_t n;
    Matches newOf, oldOf;
    std::vector<Rect> at, box;
    std::vector<ModuleFrame> previousFrames; ///< of the view before
};

} // namespace

bool placeInPlace(ViewGraph &v, const ViewGraph &previous, const LayoutOptions &o)
{
    if (v.items.empty() || previous.items.empty())
        return false;
    return InPlace(v, previous, o).run();
}

} // namespace fxlens::layout
