// SPDX-License-Identifier: MIT
// Edge routing through the gaps of a laid-out view (see Layered.h: routeEdges).
#include "layout/Layered.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fxlens::layout {

namespace {

/// Items grouped into rows: items whose vertical extents overlap share a row; rows do not overlap.
struct Rows {
    std::vector<double> top, bottom;
    std::vector<std::vector<uint32_t>> items;                 ///< per row, by x
    std::vector<std::vector<std::pair<double, double>>> gaps; ///< per row, the free x intervals (between items, and either end)
    std::vector<int> rowOf;                                   ///< per item
};

Rows makeRows(const ViewGraph &v, double gap)
{
    Rows r;
    const size_t n = v.items.size();
    r.rowOf.assign(n, -1);
    std::vector<uint32_t> byY(n);
    std::iota(byY.begin(), byY.end(), 0u);
    std::sort(byY.begin(), byY.end(), [&](uint32_t a, uint32_t b) { return v.items[a].y < v.items[b].y; });
    for (uint32_t i : byY) {
        const auto &it = v.items[i];
        if (r.top.empty() || it.y >= r.bottom.back()) {
            r.top.push_back(it.y);
            r.bottom.push_back(it.y + it.h);
            r.items.emplace_back();
        } else {
            r.bottom.back() = std::max(r.bottom.back(), it.y + it.h);
        }
        r.items.back().push_back(i);
        r.rowOf[i] = int(r.top.size() - 1);
    }
    r.gaps.resize(r.items.size());
    for (size_t k = 0; k < r.items.size(); ++k) {
        auto &row = r.items[k];
        std::sort(row.begin(), row.end(), [&](uint32_t a, uint32_t b) { return v.items[a].x < v.items[b].x; });
        auto &g = r.gaps[k];
        g.push_back({-1e18, v.items[row.front()].x});
        double right = v.items[row.front()].x + v.items[row.front()].w;
        for (size_t j = 1; j < row.size(); ++j) {
            const auto &it = v.items[row[j]];
            if (it.x - right >= 2) // a passage wide enough to draw through
                g.push_back({right, it.x});
            right = std::max(right, it.x + it.w);
        }
        g.push_back({right, 1e18});
    }
    return r;
}

/// Whether frame `f` opens at row k: its top (title band) lies in the gap above the row.
bool opensAt(const Rows &r, size_t k, const ModuleFrame &f) { return f.y0 < r.top[k] && (k == 0 || f.y0 >= r.bottom[k - 1]); }

/// Per row, the frames that open at it (their title bands above it) and those that close below it.
struct FrameEnds {
    std::vector<std::vector<const ModuleFrame *>> opening, closing;
};

FrameEnds frameEnds(const Rows &r, const std::vector<ModuleFrame> &frames)
{
    FrameEnds out;
    out.opening.resize(r.top.size());
    out.closing.resize(r.top.size());
    for (const auto &f : frames) {
        const size_t k = size_t(std::upper_bound(r.top.begin(), r.top.end(), f.y0) - r.top.begin());
        if (k < r.top.size() && opensAt(r, k, f))
            out.opening[k].push_back(&f);
        const size_t c = size_t(std::upper_bound(r.bottom.begin(), r.bottom.end(), f.y1) - r.bottom.begin());
        if (c > 0 && (c == r.top.size() || f.y1 < r.top[c]))
            out.closing[c - 1].push_back(&f);
    }
    return out;
}

/// Where an edge from x = a below row k - 1 to x = b in row k turns (its sideways stretch between
/// the two): clear of the bottoms of the frames closing above, and of the tops and title bands of
/// those opening below, over [a, b]. The way between rows where there are none.
std::pair<double, double> turnBand(const Rows &r, const FrameEnds &ends, size_t k, double a, double b)
{
    const double lo = std::min(a, b), hi = std::max(a, b);
    double y0 = k > 0 ? r.bottom[k - 1] : -1e300, y1 = r.top[k];
    for (const ModuleFrame *f : k > 0 ? ends.closing[k - 1] : std::vector<const ModuleFrame *>{})
        if (f->x0 <= hi && f->x1 >= lo)
            y0 = std::max(y0, f->y1 + kFrameClearance);
    for (const ModuleFrame *f : ends.opening[k])
        if (f->x0 <= hi && f->x1 >= lo)
            y1 = std::min(y1, f->y0 - kFrameClearance);
    if (y0 > y1)
        y0 = y1 = (y0 + y1) / 2;
    return {y0, y1};
}

/// Frame borders are no passage: an edge drawn along one could not be told from it. Each row's
/// free intervals lose kFrameClearance either side of the side borders of the frames it crosses,
/// and the x span of the titles of the frames opening at it (edges enter a frame right of its title).
void avoidFrames(Rows &r, const std::vector<ModuleFrame> &frames)
{
    if (frames.empty())
        return;
    for (size_t k = 0; k < r.gaps.size(); ++k) {
        std::vector<std::pair<double, double>> closed; // x spans no edge passes through
        for (const auto &f : frames) {
            if (f.y0 < r.bottom[k] && f.y1 > r.top[k])
                closed.insert(closed.end(),
                              {{f.x0 - kFrameClearance, f.x0 + kFrameClearance}, {f.x1 - kFrameClearance, f.x1 + kFrameClearance}});
            if (opensAt(r, k, f)) // its title, in the band above the row
                closed.emplace_back(f.x0, f.x0 + kFramePad + frameTitleWidth(f.path) + kFrameClearance);
        }
        if (closed.empty())
            continue;
        std::vector<std::pair<double, double>> out;
        for (auto g : r.gaps[k]) {
            std::vector<std::pair<double, double>> pieces{g};
            for (const auto &[l, h] : closed) {
                std::vector<std::pair<double, double>> next;
                for (const auto &p : pieces) {
                    if (h <= p.first || l >= p.second) {
                        next.push_back(p);
                        continue;
                    }
                    if (l - p.first >= 2)
                        next.emplace_back(p.first, l);
                    if (p.second - h >= 2)
                        next.emplace_back(h, p.second);
                }
                pieces = std::move(next);
            }
            out.insert(out.end(), pieces.begin(), pieces.end());
        }
        std::sort(out.begin(), out.end());
        if (!out.empty())
            r.gaps[k] = std::move(out);
    }
}

/// The x nearest `want` in a free interval, kept kPassageMargin from the items on either side (its
/// middle where it is narrower): an edge beside a box reads as its outline when nearer.
double passage(const std::vector<std::pair<double, double>> &gaps, double want)
{
    constexpr double kPassageMargin = 8;
    auto inside = [](const std::pair<double, double> &g, double x) {
        const double l = g.first + kPassageMargin, r = g.second - kPassageMargin;
        return l > r ? (g.first + g.second) / 2 : std::clamp(x, l, r);
    };
    auto it = std::lower_bound(gaps.begin(), gaps.end(), want, [](const std::pair<double, double> &g, double x) { return g.second < x; });
    double best = 0, bestDist = 1e300;
    for (auto k = it == gaps.begin() ? it : it - 1; k != gaps.end() && k <= it + 1; ++k) {
        const double x = inside(*k, want), d = std::fabs(x - want);
        if (d < bestDist)
            bestDist = d, best = x;
    }
    return best;
}

} // namespace

void routeEdges(ViewGraph &v, double gap)
{
    if (v.items.empty())
        return;
    Rows rows = makeRows(v, gap);
    const std::vector<ModuleFrame> frames = moduleFrames(v);
    avoidFrames(rows, frames);
    const FrameEnds ends = frameEnds(rows, frames);
    // Into row r at x: straight down out of the frames closing above, sideways between the frame
    // borders, straight down through the title bands above the row.
    auto enter = [&](std::vector<Point> &pts, size_t r, double x) {
        const Point from = pts.back();
        if (std::fabs(from.x - x) > 1e-6) {
            const auto [y0, y1] = turnBand(rows, ends, r, from.x, x);
            if (y0 > from.y && y0 < rows.top[r])
                pts.push_back({from.x, y0});
            if (y1 < rows.top[r] && y1 > from.y)
                pts.push_back({x, y1});
        }
        pts.push_back({x, rows.top[r]});
    };
    const size_t nrows = rows.top.size();
    double right = 0;
    for (const auto &it : v.items)
        right = std::max(right, it.x + it.w);
    // The free band just below / above a row (halfway to the next one).
    auto below = [&](size_t r) { return r + 1 < nrows ? (rows.bottom[r] + rows.top[r + 1]) / 2 : rows.bottom[r] + gap; };
    auto above = [&](size_t r) { return r > 0 ? (rows.bottom[r - 1] + rows.top[r]) / 2 : rows.top[r] - gap; };
    size_t around = 0;
    for (auto &e : v.edges) {
        const auto &a = v.items[e.from], &b = v.items[e.to];
        const double ax = a.x + a.w / 2, bx = b.x + b.w / 2;
        const size_t ra = size_t(rows.rowOf[e.from]), rb = size_t(rows.rowOf[e.to]);
        auto &pts = e.route;
        pts.clear();
        pts.push_back({ax, a.y + a.h});
        if (a.y + a.h < rows.bottom[ra])
            pts.push_back({ax, rows.bottom[ra]});
        if (rb > ra) {
            // Down through each row in between, where the layout left room for the edge (its via
            // points), else by the passage nearest the way to the target (the remaining sideways
            // distance spread over the rows left).
            double x = ax;
            size_t via = 0;
            for (size_t r = ra + 1; r < rb; ++r) {
                while (via < e.via.size() && e.via[via].y < rows.top[r] - 1e-6)
                    ++via;
                const bool here = via < e.via.size() && e.via[via].y <= rows.bottom[r] + 1e-6;
                const double want = here ? e.via[via].x : x + (bx - x) / double(rb - r + 1);
                // Straight on where that is free and near the place left for the edge.
                const double on = passage(rows.gaps[r], x);
                const double g = std::fabs(on - x) < 1e-6 && std::fabs(x - want) <= 2 * gap ? x : passage(rows.gaps[r], want);
                enter(pts, r, g);
                pts.push_back({g, rows.bottom[r]});
                x = g;
            }
            enter(pts, rb, bx);
        } else {
            // Upwards or within a row (a cycle between boxes): around the right of the scene.
            const double x = right + gap * (1.5 + double(around++ % 16) * 0.5);
            pts.push_back({ax, below(ra)});
            pts.push_back({x, below(ra)});
            pts.push_back({x, above(rb)});
            pts.push_back({bx, above(rb)});
            pts.push_back({bx, rows.top[rb]});
        }
        if (b.y > rows.top[rb])
            pts.push_back({bx, b.y});
    }
    v.width = std::max(v.width, right + gap * 10);
}

void routePlacedEdges(ViewGraph &v, double gap)
{
    for (auto &e : v.edges) {
        e.via.clear();
        e.back = v.items[e.to].y < v.items[e.from].y + v.items[e.from].h;
    }
    routeEdges(v, gap);
}

} // namespace fxlens::layout
