// SPDX-License-Identifier: MIT
// Layout quality figures: edges through items and crossings between routes (see Layered.h:
// measureLayout).
#include "layout/Layered.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

namespace fxlens::layout {

namespace {

struct Seg {
    Point a, b;
    uint32_t edge;
};

double cross(const Point &o, const Point &a, const Point &b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

bool near(const Point &p, const Point &q) { return std::fabs(p.x - q.x) < 1e-6 && std::fabs(p.y - q.y) < 1e-6; }

/// Proper crossing (the segments intersect at one point inside both, not at shared ends).
bool crosses(const Seg &s, const Seg &t)
{
    if (near(s.a, t.a) || near(s.a, t.b) || near(s.b, t.a) || near(s.b, t.b))
        return false;
    const double d1 = cross(t.a, t.b, s.a), d2 = cross(t.a, t.b, s.b), d3 = cross(s.a, s.b, t.a), d4 = cross(s.a, s.b, t.b);
    return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

/// The segment enters the rectangle's interior (shrunk by a pixel).
bool hitsRect(const Point &p, const Point &q, double x0, double y0, double x1, double y1)
{
    x0 += 1, y0 += 1, x1 -= 1, y1 -= 1;
    // Liang–Barsky clipping.
    double t0 = 0, t1 = 1;
    const double dx = q.x - p.x, dy = q.y - p.y;
    const double pp[4] = {-dx, dx, -dy, dy}, qq[4] = {p.x - x0, x1 - p.x, p.y - y0, y1 - p.y};
    for (int i = 0; i < 4; ++i) {
        if (pp[i] == 0) {
            if (qq[i] < 0)
                return false;
            continue;
        }
        const double t = qq[i] / pp[i];
        if (pp[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1)
            return false;
    }
    return true;
}

} // namespace

LayoutQuality measureLayout(const ViewGraph &v, size_t maxSegments)
{
    LayoutQuality q;
    std::vector<Seg> segs;
    for (uint32_t e = 0; e < v.edges.size(); ++e) {
        const auto &edge = v.edges[e];
        q.backEdges += edge.back;
        std::vector<Point> pts = edge.route;
        if (pts.size() < 2) { // not routed: the straight line the canvas draws
            const auto &a = v.items[edge.from], &b = v.items[edge.to];
            pts = {{a.x + a.w / 2, a.y + a.h}, {b.x + b.w / 2, b.y}};
        }
        for (size_t k = 1; k < pts.size(); ++k)
            segs.push_back({pts[k - 1], pts[k], e});
    }
    // Edges through items: items by x, each segment checked against those in its x range.
    std::vector<uint32_t> byX(v.items.size());
    std::iota(byX.begin(), byX.end(), 0u);
    std::sort(byX.begin(), byX.end(), [&](uint32_t a, uint32_t b) { return v.items[a].x < v.items[b].x; });
    double widest = 0;
    for (const auto &it : v.items)
        widest = std::max(widest, it.w);
    std::vector<uint8_t> through(v.edges.size(), 0);
    for (const Seg &s : segs) {
        if (through[s.edge])
            continue;
        const double lo = std::min(s.a.x, s.b.x) - widest, hi = std::max(s.a.x, s.b.x);
        auto it = std::lower_bound(byX.begin(), byX.end(), lo, [&](uint32_t i, double x) { return v.items[i].x < x; });
        const double ylo = std::min(s.a.y, s.b.y), yhi = std::max(s.a.y, s.b.y);
        for (; it != byX.end() && v.items[*it].x <= hi; ++it) {
            const auto &r = v.items[*it];
            if (*it == v.edges[s.edge].from || *it == v.edges[s.edge].to || r.y > yhi || r.y + r.h < ylo)
                continue;
            if (hitsRect(s.a, s.b, r.x, r.y, r.x + r.w, r.y + r.h)) {
                through[s.edge] = 1;
                break;
            }
        }
    }
    q.edgesThroughItems = size_t(std::count(through.begin(), through.end(), 1));
    // Crossings: segments by their top; each compared with those whose vertical span overlaps.
    // Edges drawn along the same line (a bundle's shared trunk) are one stroke: a segment drawn
    // twice is counted once.
    auto key = [](const Seg &s) { return std::make_tuple(s.a.x, s.a.y, s.b.x, s.b.y); };
    std::sort(segs.begin(), segs.end(), [&](const Seg &s, const Seg &t) { return key(s) < key(t); });
    segs.erase(std::unique(segs.begin(), segs.end(), [&](const Seg &s, const Seg &t) { return near(s.a, t.a) && near(s.b, t.b); }),
               segs.end());
    if (segs.size() <= maxSegments) {
        std::sort(segs.begin(), segs.end(), [](const Seg &s, const Seg &t) { return std::min(s.a.y, s.b.y) < std::min(t.a.y, t.b.y); });
        for (size_t i = 0; i < segs.size(); ++i) {
            const double bottom = std::max(segs[i].a.y, segs[i].b.y);
            const double l = std::min(segs[i].a.x, segs[i].b.x), r = std::max(segs[i].a.x, segs[i].b.x);
            for (size_t j = i + 1; j < segs.size() && std::min(segs[j].a.y, segs[j].b.y) <= bottom; ++j) {
                if (segs[j].edge == segs[i].edge || std::max(segs[j].a.x, segs[j].b.x) < l || std::min(segs[j].a.x, segs[j].b.x) > r)
                    continue;
                q.crossings += crosses(segs[i], segs[j]);
            }
        }
    }
    return q;
}

} // namespace fxlens::layout
