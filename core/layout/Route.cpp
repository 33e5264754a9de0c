// SPDX-License-Identifier: MIT
// Edge routing through the gaps of a laid-out view (see Layered.h: routeEdges).
#include "layout/Layered.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace fxlens::layout {

namespace {

/// Items grouped into rows: items whose vertical extents overlap share a row; rows do not overlap.
struct Rows {
    std::vector<double> top, bottom;
    std::vector<std::vector<uint32_t>> items;                     ///< per row, by x
    std::vector<std::vector<std::pair<double, double>>> gaps;     ///< per row, the free x intervals (between items, and either end)
    std::vector<std::vector<std::pair<double, double>>> itemGaps; ///< per row, the gaps between its items (frames aside)
    std::vector<int> rowOf;                                       ///< per item
    /// Per row, (frame, gap index) of the gaps with room for an edge (ownGaps), sorted: the gaps of
    /// each frame (the innermost around them; -1: none) in order.
    using ByFrame = std::vector<std::vector<std::pair<int32_t, uint32_t>>>;
    ByFrame inFrame;
    /// The same with the narrow gaps too: the item gap between two neighbours in a row.
    ByFrame narrowInFrame;
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
/// free intervals lose kEdgeFrameGap either side of the side borders of the frames it crosses,
/// and the x span of the titles of the frames opening at it (edges enter a frame right of its title).
void avoidFrames(Rows &r, const std::vector<ModuleFrame> &frames)
{
    if (frames.empty())
        return;
    for (size_t k = 0; k < r.gaps.size(); ++k) {
        std::vector<std::pair<double, double>> closed; // x spans no edge passes through
        for (const auto &f : frames) {
            if (f.y0 < r.bottom[k] && f.y1 > r.top[k])
                closed.insert(closed.end(), {{f.x0 - kEdgeFrameGap, f.x0 + kEdgeFrameGap}, {f.x1 - kEdgeFrameGap, f.x1 + kEdgeFrameGap}});
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

constexpr double kPassageMargin = 8; ///< an edge's least distance from the items beside it, where there is room
/// The narrowest gap between two items of a row an edge passes through (its middle): short of
/// going around the row's end (Router::down).
constexpr double kNarrowPassage = 10;

/// Each free interval's frame: the innermost frame around it (the intervals are cut at every side
/// of the frames a row crosses, so each lies wholly in or out of each frame), and per row the
/// intervals with room for an edge's margins on both sides by frame (Rows::inFrame).
void ownGaps(Rows &r, const std::vector<ModuleFrame> &frames)
{
    std::vector<std::vector<int32_t>> owner(r.gaps.size());
    for (size_t k = 0; k < r.gaps.size(); ++k)
        owner[k].assign(r.gaps[k].size(), -1);
    for (size_t fi = 0; fi < frames.size(); ++fi) { // outermost first: an inner frame overwrites its parent
        const ModuleFrame &f = frames[fi];
        for (size_t k = size_t(std::upper_bound(r.bottom.begin(), r.bottom.end(), f.y0) - r.bottom.begin());
             k < r.top.size() && r.top[k] < f.y1; ++k) {
            const auto &g = r.gaps[k];
            auto it = std::lower_bound(g.begin(), g.end(), f.x0, [](const std::pair<double, double> &p, double x) { return p.second < x; });
            for (; it != g.end() && it->first < f.x1; ++it)
                if (const double mid = (it->first + it->second) / 2; mid > f.x0 && mid < f.x1)
                    owner[k][size_t(it - g.begin())] = int32_t(fi);
        }
    }
    r.inFrame.resize(r.gaps.size());
    r.narrowInFrame.resize(r.gaps.size());
    for (size_t k = 0; k < r.gaps.size(); ++k) {
        for (auto *list : {&r.inFrame[k], &r.narrowInFrame[k]}) {
            const double least = list == &r.inFrame[k] ? 2 * kPassageMargin : kNarrowPassage;
            list->clear();
            for (size_t j = 0; j < r.gaps[k].size(); ++j)
                if (r.gaps[k][j].second - r.gaps[k][j].first >= least)
                    list->emplace_back(owner[k][j], uint32_t(j));
            std::sort(list->begin(), list->end());
        }
    }
}

/// The x nearest `want` in a free interval `g`, kept kPassageMargin from the items on either side
/// (its middle where it is narrower): an edge beside a box reads as its outline when nearer.
double inside(const std::pair<double, double> &g, double want)
{
    const double l = g.first + kPassageMargin, r = g.second - kPassageMargin;
    return l > r ? (g.first + g.second) / 2 : std::clamp(want, l, r);
}

/// The first interval that ends at or right of x.
size_t gapAt(const std::vector<std::pair<double, double>> &gaps, double x)
{
    return size_t(std::lower_bound(gaps.begin(), gaps.end(), x, [](const std::pair<double, double> &g, double v) { return g.second < v; }) -
                  gaps.begin());
}

/// Whether x lies in one of the free intervals.
bool within(const std::vector<std::pair<double, double>> &gaps, double x)
{
    const size_t at = gapAt(gaps, x);
    return at < gaps.size() && gaps[at].first <= x;
}

/// The x nearest `want` in the free intervals (inside): of the one before it, the one holding it
/// and the next (a narrow one's middle may be further than the next).
double passage(const std::vector<std::pair<double, double>> &gaps, double want)
{
    const size_t at = gapAt(gaps, want);
    double best = want, bestDist = 1e300;
    for (size_t k = at == 0 ? 0 : at - 1; k < gaps.size() && k <= at + 1; ++k)
        if (const double x = inside(gaps[k], want), d = std::fabs(x - want); d < bestDist)
            bestDist = d, best = x;
    return best;
}

/// As passage, in the intervals of row k that lie in frame `frame` (-1: in none) with room for the
/// margins (else a lane beside the frame's contents is better: Router::lane), or `narrow` too;
/// `found` false when there is none.
double passageIn(const Rows &r, size_t k, int32_t frame, double want, bool &found, bool narrow = false)
{
    const auto &gaps = r.gaps[k];
    const auto &in = narrow ? r.narrowInFrame[k] : r.inFrame[k];
    const auto lo = std::lower_bound(in.begin(), in.end(), std::make_pair(frame, uint32_t(0)));
    const auto hi = std::lower_bound(lo, in.end(), std::make_pair(frame + 1, uint32_t(0)));
    const uint32_t at = uint32_t(gapAt(gaps, want));
    const size_t first = size_t(lo - in.begin()), end = size_t(hi - in.begin());
    const size_t mid = size_t(std::lower_bound(lo, hi, std::make_pair(frame, at)) - in.begin());
    double best = want, bestDist = 1e300;
    for (size_t j = mid > first ? mid - 1 : first; j < end && j <= mid + 1; ++j)
        if (const double x = inside(gaps[in[j].second], want), d = std::fabs(x - want); d < bestDist)
            bestDist = d, best = x;
    found = bestDist < 1e300;
    return best;
}

/// The frame an edge's route keeps to at each row it passes: the innermost frame around one end
/// only whose items reach the row (the target's from its first item's row, the source's down to
/// its last item's row; the deeper one, else the target's), else the innermost frame around both
/// ends (-1: none). So the layered layout places a long edge's dummies (Dummies.cpp, dummyCluster)
/// and moduleFrames counts its via points: an edge crosses a frame's border once, through its top
/// or bottom, and never leaves a frame that holds both its ends.
class EdgeFrames {
public:
    /// (`use` false: for a view whose edges do not keep to frames, nothing to set up.)
    EdgeFrames(const ViewGraph &v, const std::vector<ModuleFrame> &frames, bool use)
        : m_v(v), m_firstTop(frames.size(), 1e300), m_lastTop(frames.size(), -1e300)
    {
        if (!use)
            return;
        for (size_t i = 0; i < frames.size(); ++i)
            m_index.emplace(frames[i].path, int32_t(i));
        for (const auto &it : v.items)
            for (int32_t f : chain(it.cluster))
                m_firstTop[size_t(f)] = std::min(m_firstTop[size_t(f)], it.y), m_lastTop[size_t(f)] = std::max(m_lastTop[size_t(f)], it.y);
    }

    void setEdge(const ViewEdge &e)
    {
        m_from = &chain(m_v.items[e.from].cluster);
        m_to = &chain(m_v.items[e.to].cluster);
        m_common = 0;
        while (m_common < m_from->size() && m_common < m_to->size() && (*m_from)[m_common] == (*m_to)[m_common])
            ++m_common;
    }

    /// The frame at the row whose top is `y`.
    int32_t at(double y) const
    {
        int32_t target = -1, source = -1;
        size_t targetDepth = 0, sourceDepth = 0;
        for (size_t k = m_common; k < m_to->size(); ++k)
            if (m_firstTop[size_t((*m_to)[k])] <= y + 0.5)
                target = (*m_to)[k], targetDepth = k;
        for (size_t k = m_common; k < m_from->size(); ++k)
            if (m_lastTop[size_t((*m_from)[k])] >= y - 0.5)
                source = (*m_from)[k], sourceDepth = k;
        if (target >= 0 && (source < 0 || targetDepth >= sourceDepth))
            return target;
        if (source >= 0)
            return source;
        return m_common ? (*m_from)[m_common - 1] : -1;
    }

private:
    /// The frames around a cluster, outermost first.
    const std::vector<int32_t> &chain(const std::string &cluster)
    {
        auto [it, fresh] = m_chains.try_emplace(cluster);
        if (fresh && !cluster.empty())
            for (size_t k = cluster.find('.');; k = cluster.find('.', k + 1)) {
                if (auto f = m_index.find(cluster.substr(0, k)); f != m_index.end())
                    it->second.push_back(f->second);
                if (k == std::string::npos)
                    break;
            }
        return it->second;
    }

    const ViewGraph &m_v;
    std::unordered_map<std::string, int32_t> m_index;
    std::unordered_map<std::string, std::vector<int32_t>> m_chains;
    std::vector<double> m_firstTop, m_lastTop; ///< per frame: the top of its highest and of its lowest item
    const std::vector<int32_t> *m_from = nullptr, *m_to = nullptr;
    size_t m_common = 0;
};

/// Runs of a route's points that nothing forces to bend, drawn as one straight line: a long
/// edge's passages through the rows between its ends, a few pixels apart from row to row, made
/// a staircase of short slants and drops. A line replaces points where it keeps kLineMargin from
/// every item (its ends' aside) and crosses no frame's border: both its ends lie in the same
/// frames, and it keeps clear of the others and of the title bands of those it lies in (it keeps
/// from their sides what its ends keep).
class Straighten {
public:
    Straighten(const ViewGraph &v, const Rows &rows, const std::vector<ModuleFrame> &frames) : m_v(v), m_rows(rows), m_frames(frames) {}

    void run(ViewEdge &e) const
    {
        auto &pts = e.route;
        if (pts.size() < 4)
            return;
        // Lines between the route's points stay in its bounding box: the frames that reach it.
        double x0 = pts.front().x, x1 = x0, y0 = pts.front().y, y1 = y0;
        for (const Point &p : pts)
            x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
        m_near.clear();
        for (const auto &f : m_frames)
            if (f.x0 - kFrameClearance < x1 && f.x1 + kFrameClearance > x0 && f.y0 - kFrameClearance < y1 && f.y1 + kFrameClearance > y0)
                m_near.push_back(&f);
        std::vector<Point> out{pts.front()};
        for (size_t i = 0; i + 1 < pts.size();) {
            size_t j = i + 1;
            while (j + 1 < pts.size() && j + 1 - i <= kReach && clear(e, pts[i], pts[j + 1]))
                ++j;
            out.push_back(pts[j]);
            i = j;
        }
        pts = std::move(out);
    }

private:
    static constexpr double kLineMargin = 4;
    /// The most route points one line replaces (a few rows: each check looks at the rows it spans).
    static constexpr size_t kReach = 24;

    bool clear(const ViewEdge &e, const Point &p, const Point &q) const
    {
        return q.y > p.y && clearOfItems(e, p, q) && clearOfFrames(p, q); // (routes around a cycle's ends stay)
    }

    /// The x range of segment p-q (p above q) over y0..y1.
    static std::pair<double, double> xOver(const Point &p, const Point &q, double y0, double y1)
    {
        const double t0 = std::clamp((y0 - p.y) / (q.y - p.y), 0.0, 1.0), t1 = std::clamp((y1 - p.y) / (q.y - p.y), 0.0, 1.0);
        const double a = p.x + (q.x - p.x) * t0, b = p.x + (q.x - p.x) * t1;
        return {std::min(a, b), std::max(a, b)};
    }

    bool clearOfItems(const ViewEdge &e, const Point &p, const Point &q) const
    {
        const size_t first = size_t(std::upper_bound(m_rows.bottom.begin(), m_rows.bottom.end(), p.y) - m_rows.bottom.begin());
        for (size_t k = first; k < m_rows.top.size() && m_rows.top[k] < q.y; ++k) {
            const auto &row = m_rows.items[k];
            const auto [l, r] = xOver(p, q, m_rows.top[k] - kLineMargin, m_rows.bottom[k] + kLineMargin);
            auto it = std::lower_bound(row.begin(), row.end(), l - kLineMargin,
                                       [&](uint32_t i, double x) { return m_v.items[i].x + m_v.items[i].w < x; });
            for (; it != row.end() && m_v.items[*it].x <= r + kLineMargin; ++it) {
                if (*it == e.from || *it == e.to)
                    continue;
                const auto &b = m_v.items[*it];
                const auto [bl, br] = xOver(p, q, b.y - kLineMargin, b.y + b.h + kLineMargin);
                if (b.y - kLineMargin < q.y && b.y + b.h + kLineMargin > p.y && br > b.x - kLineMargin && bl < b.x + b.w + kLineMargin)
                    return false;
            }
        }
        return true;
    }

    bool clearOfFrames(const Point &p, const Point &q) const
    {
        const auto in = [](const ModuleFrame &f, const Point &a) { return a.x > f.x0 && a.x < f.x1 && a.y > f.y0 && a.y < f.y1; };
        for (const ModuleFrame *fp : m_near) {
            const ModuleFrame &f = *fp;
            if (f.y0 - kFrameClearance > q.y || f.y1 + kFrameClearance < p.y)
                continue;
            const bool inP = in(f, p);
            if (inP != in(f, q))
                return false;
            // Outside: clear of the whole frame; inside: of its title band.
            const double x0 = inP ? f.x0 : f.x0 - kFrameClearance,
                         x1 = inP ? f.x0 + kFramePad + frameTitleWidth(f.path) + kFrameClearance : f.x1 + kFrameClearance;
            const double y0 = f.y0 - kFrameClearance, y1 = inP ? f.y0 + kFrameTitle + kFrameClearance : f.y1 + kFrameClearance;
            if (y0 < q.y && y1 > p.y) {
                const auto [l, r] = xOver(p, q, y0, y1);
                if (r > x0 && l < x1)
                    return false;
            }
        }
        return true;
    }

    const ViewGraph &m_v;
    const Rows &m_rows;
    const std::vector<ModuleFrame> &m_frames;
    mutable std::vector<const ModuleFrame *> m_near; ///< the frames that reach the edge's route (run)
};

/// The lanes given to edges beside frames' contents, over the passes of routeEdges.
struct Lanes {
    std::vector<std::vector<Point>> of;    ///< per edge: its lanes' via points (also in its via), by y
    std::unordered_map<size_t, int> count; ///< per frame side (frame * 2 + right): the lanes given
};

/// One routing of every edge over the view's rows, gaps and frames as they are (see routeEdges).
class Router {
public:
    Router(ViewGraph &v, double gap, Lanes *lanes, bool refine)
        : m_v(v), m_gap(gap), m_lanes(lanes), m_refine(refine && v.items.size() <= kStraightenItems), m_rows(makeRows(v, gap)),
          m_taken(m_rows.top.size()), m_frames(moduleFrames(v)), m_keepToFrames(!m_frames.empty() && v.items.size() <= kFramedRouteItems),
          m_edgeFrames(v, m_frames, m_keepToFrames)
    {
        m_rows.itemGaps = m_rows.gaps;
        avoidFrames(m_rows, m_frames);
        if (m_keepToFrames)
            ownGaps(m_rows, m_frames);
        m_ends = frameEnds(m_rows, m_frames);
        for (const auto &it : v.items)
            m_right = std::max(m_right, it.x + it.w);
    }

    /// Routes every edge; true when some edge was given a lane beside a frame (a via point that
    /// widens the frame: the view is routed again).
    bool run()
    {
        for (size_t e = 0; e < m_v.edges.size(); ++e)
            route(e);
        if (m_refine) {
            const Straighten straight(m_v, m_rows, m_frames);
            for (auto &e : m_v.edges)
                straight.run(e);
        }
        m_v.width = std::max(m_v.width, m_right + m_gap * 10);
        return m_widened;
    }

private:
    void route(size_t ei)
    {
        ViewEdge &e = m_v.edges[ei];
        const auto &a = m_v.items[e.from], &b = m_v.items[e.to];
        const double ax = a.x + a.w / 2, bx = b.x + b.w / 2;
        const size_t ra = size_t(m_rows.rowOf[e.from]), rb = size_t(m_rows.rowOf[e.to]);
        auto &pts = e.route;
        pts.clear();
        pts.push_back({ax, a.y + a.h});
        if (a.y + a.h < m_rows.bottom[ra])
            pts.push_back({ax, m_rows.bottom[ra]});
        if (rb > ra) {
            down(ei, ra, rb, ax, bx);
            enter(pts, rb, bx);
        } else {
            // Upwards or within a row (a cycle between boxes): around the right of the scene.
            const size_t nrows = m_rows.top.size();
            const double below = ra + 1 < nrows ? (m_rows.bottom[ra] + m_rows.top[ra + 1]) / 2 : m_rows.bottom[ra] + m_gap;
            const double above = rb > 0 ? (m_rows.bottom[rb - 1] + m_rows.top[rb]) / 2 : m_rows.top[rb] - m_gap;
            const double x = m_right + m_gap * (1.5 + double(m_around++ % 16) * 0.5);
            pts.insert(pts.end(), {{ax, below}, {x, below}, {x, above}, {bx, above}, {bx, m_rows.top[rb]}});
        }
        if (b.y > m_rows.top[rb])
            pts.push_back({bx, b.y});
    }

    /// Down through each row between ra and rb, where the layout left room for the edge (its via
    /// points), else by the passage nearest the way to the target (the remaining sideways distance
    /// spread over the rows left; the edge's next lane, when it has one ahead), in the frame the
    /// edge keeps to there (EdgeFrames). Where that frame has no room in a row, a lane beside its
    /// contents (lane), the same for the rows after it.
    void down(size_t ei, size_t ra, size_t rb, double x, double bx)
    {
        ViewEdge &e = m_v.edges[ei];
        m_edgeFrames.setEdge(e);
        std::vector<std::pair<int32_t, double>> byFrame; // this edge's lanes in this pass
        const std::vector<Point> *lanes = m_lanes && ei < m_lanes->of.size() ? &m_lanes->of[ei] : nullptr;
        size_t via = 0, ahead = 0;
        for (size_t r = ra + 1; r < rb; ++r) {
            while (via < e.via.size() && e.via[via].y < m_rows.top[r] - 1e-6)
                ++via;
            while (lanes && ahead < lanes->size() && (*lanes)[ahead].y < m_rows.top[r] - 1e-6)
                ++ahead;
            const bool here = via < e.via.size() && e.via[via].y <= m_rows.bottom[r] + 1e-6;
            const double want = here             ? e.via[via].x
                : lanes && ahead < lanes->size() ? (*lanes)[ahead].x
                                                 : x + (bx - x) / double(rb - r + 1);
            // Where the layout left room (a via point here), that room; else in the edge's frame.
            const bool keep = m_keepToFrames && !here;
            const int32_t in = keep ? m_edgeFrames.at(m_rows.top[r]) : -1;
            const auto &gaps = m_rows.gaps[r];
            bool found = true;
            // Straight on where that is free and near the place left for the edge.
            const double on = keep ? passageIn(m_rows, r, in, x, found) : passage(gaps, x);
            double g = on;
            if (!found || std::fabs(on - x) >= 1e-6 || std::fabs(x - want) > 2 * m_gap)
                g = keep ? passageIn(m_rows, r, in, want, found) : passage(gaps, want);
            if (here && !within(gaps, want) && within(m_rows.itemGaps[r], want))
                g = want; // the lane the layout made room for, kEdgeFrameGap from the frames beside it
            if (keep)
                narrowPassage(r, in, want, g, found);
            if (!found && m_lanes && in >= 0) {
                g = lane(byFrame, in, want);
                const Point p{g, m_rows.top[r]};
                e.via.insert(e.via.begin() + std::ptrdiff_t(via), p);
                ++via;
                m_lanes->of.resize(m_v.edges.size());
                auto &mine = m_lanes->of[ei];
                mine.insert(std::upper_bound(mine.begin(), mine.end(), p.y, [](double y, const Point &q) { return y < q.y; }), p);
                lanes = &mine;
                m_widened = true;
            } else if (!found) {
                g = passage(gaps, want); // (no room in its frame even so: the nearest passage)
            }
            if (m_refine)
                g = ownLine(r, g, want, e.from);
            enter(e.route, r, g);
            e.route.push_back({g, m_rows.bottom[r]});
            x = g;
        }
    }

    /// Through a narrow gap of the edge's frame in row r (the middle of two neighbours' item gap)
    /// where the wide passage `g` (if `found`) lies far further from `want`: an edge that went
    /// around a row's end instead runs along the row's top and bottom, and the edges of one item
    /// fanning out past a row drew a box around it. None further than three gaps from `want`
    /// (a lane beside the frame's contents is straighter then).
    void narrowPassage(size_t r, int32_t in, double want, double &g, bool &found) const
    {
        bool any = false;
        const double n = passageIn(m_rows, r, in, want, any, true);
        const double dn = std::fabs(n - want);
        if (any && (found ? dn + 3 * m_gap < std::fabs(g - want) : dn <= 3 * m_gap))
            g = n, found = true;
    }

    /// `g` in row r, or the x nearest it in the same free interval that no other edge's line
    /// passes within kOwnLine of (but those of the same source: one value, drawn as one trunk),
    /// stepping first towards `want`: two edges drawn on one line could not be told apart.
    double ownLine(size_t r, double g, double want, uint32_t from)
    {
        constexpr double kOwnLine = 8;
        auto &taken = m_taken[r]; // by x
        const auto free = [&](double x) {
            for (auto it = std::lower_bound(taken.begin(), taken.end(), std::make_pair(x - kOwnLine + 1e-9, uint32_t(0)));
                 it != taken.end() && it->first < x + kOwnLine; ++it)
                if (it->second != from)
                    return false;
            return true;
        };
        double best = g;
        if (!free(g)) {
            const auto &gaps = m_rows.gaps[r];
            const size_t at = gapAt(gaps, g);
            const double lo = at < gaps.size() ? std::max(gaps[at].first + 3, std::min(g, gaps[at].first + kPassageMargin)) : g;
            const double hi = at < gaps.size() ? std::min(gaps[at].second - 3, std::max(g, gaps[at].second - kPassageMargin)) : g;
            const double toward = want >= g ? 1 : -1;
            for (int k = 1; k <= 24; ++k) {
                const int step = (k + 1) / 2; // 1, 1, 2, 2, ...: alternately on either side
                const double x = g + toward * (k % 2 ? 1 : -1) * kOwnLine * step;
                if (x >= lo && x <= hi && free(x)) {
                    best = x;
                    break;
                }
            }
        }
        taken.insert(std::upper_bound(taken.begin(), taken.end(), std::make_pair(best, from)), {best, from});
        return best;
    }

    /// The x of the edge's lane beside frame `f`'s contents, on the side nearer `want`: far
    /// enough out that, once the frame is widened to hold it (moduleFrames), the edge keeps
    /// kEdgeFrameGap from the contents (and the frames nested there) and from the side; a further
    /// lane of the same side (another edge) lies further out.
    double lane(std::vector<std::pair<int32_t, double>> &byFrame, int32_t f, double want)
    {
        for (const auto &[frame, x] : byFrame)
            if (frame == f)
                return x;
        constexpr double kLaneOut = kEdgeFrameGap + 2, kLaneStep = 12;
        const ModuleFrame &fr = m_frames[size_t(f)];
        const bool right = want >= (fr.x0 + fr.x1) / 2;
        const double out = kLaneOut + kLaneStep * double(m_lanes->count[size_t(f) * 2 + right]++);
        const double x = right ? fr.x1 - kFramePad + out : fr.x0 + kFramePad - out;
        byFrame.emplace_back(f, x);
        return x;
    }

    /// Into row r at x: straight down out of the frames closing above, sideways between the frame
    /// borders, straight down through the title bands above the row.
    void enter(std::vector<Point> &pts, size_t r, double x) const
    {
        const Point from = pts.back();
        if (std::fabs(from.x - x) > 1e-6) {
            const auto [y0, y1] = turnBand(m_rows, m_ends, r, from.x, x);
            if (y0 > from.y && y0 < m_rows.top[r])
                pts.push_back({from.x, y0});
            if (y1 < m_rows.top[r] && y1 > from.y)
                pts.push_back({x, y1});
        }
        pts.push_back({x, m_rows.top[r]});
    }

    ViewGraph &m_v;
    const double m_gap;
    Lanes *m_lanes;      ///< null: no lanes given (the last pass)
    const bool m_refine; ///< lines of their own and straightened runs (LayoutOptions::refineRoutes)
    /// Views of more items wrap their layers and leave frames no room (Coordinates.cpp): their
    /// edges take the nearest passages, in whatever frame.
    static constexpr size_t kFramedRouteItems = 2000;
    /// Views of more items (hundreds of blocks side by side) keep their edges' runs as routed,
    /// without lines of their own (ownLine) or straightening: they would cost more than the layout.
    static constexpr size_t kStraightenItems = 1000;
    Rows m_rows;
    std::vector<std::vector<std::pair<double, uint32_t>>> m_taken; ///< per row: the x of each edge's line through it, and its source
    const std::vector<ModuleFrame> m_frames;
    const bool m_keepToFrames;
    EdgeFrames m_edgeFrames;
    FrameEnds m_ends;
    double m_right = 0;
    size_t m_around = 0;
    bool m_widened = false;
};

} // namespace

// Edges keep to their frames (EdgeFrames); one that finds no room in its frame in some row gets a
// lane beside the frame's contents, and the view is routed again with the frames widened to hold
// the lanes (twice at most).
void routeEdges(ViewGraph &v, double gap, bool refine)
{
    if (v.items.empty())
        return;
    Lanes lanes;
    for (int pass = 0; pass < 3 && Router(v, gap, pass < 2 ? &lanes : nullptr, refine).run(); ++pass) {
    }
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
