// SPDX-License-Identifier: MIT
// The layered layout's coordinates (see LayeredPhases.h).
#include "layout/LayeredPhases.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

namespace fxlens::layout::layered {

namespace {

struct Row {
    std::vector<uint32_t> items;
    double width = 0, height = 0;
};

/// The wrap width: views of up to o.wrapItems items do not wrap; larger ones wrap layers wider
/// than max(o.minWrapWidth, 2 * sqrt(scene area)).
double wrapWidth(const LayeredState &s, const LayoutOptions &o)
{
    double area = 0;
    for (const auto &it : s.v.items)
        area += (it.w + o.itemGap) * (it.h + o.layerGap);
    return s.n <= o.wrapItems ? 1e300 : std::max(o.minWrapWidth, 2.0 * std::sqrt(area));
}

/// Each layer's rows: its slots in order, a new row where the current one would pass `wrap`.
std::vector<std::vector<Row>> layerRows(const LayeredState &s, const LayoutOptions &o, double wrap)
{
    std::vector<std::vector<Row>> rows(static_cast<size_t>(s.layers));
    for (int li = 0; li < s.layers; ++li) {
        auto &lr = rows[size_t(li)];
        lr.emplace_back();
        for (uint32_t i : s.byLayer[size_t(li)]) {
            if (!lr.back().items.empty() && lr.back().width + s.widthOf[i] > wrap)
                lr.emplace_back();
            lr.back().items.push_back(i);
            lr.back().width += s.widthOf[i] + o.itemGap;
            lr.back().height = std::max(lr.back().height, s.heightOf[i]);
        }
    }
    return rows;
}

/// Room for the frames of expanded modules (moduleFrames): each module's slots, over all of its
/// layers, inside one rectangle kFramePad outside its members and its children's rectangles, and
/// nothing else in it. Slots are only ever moved right, keeping each layer's order.
class FrameRoom {
public:
    FrameRoom(const LayeredState &s, const LayoutOptions &o, std::vector<double> &x) : m_s(s), m_o(o), m_x(x)
    {
        const size_t clusters = s.chainOf.size();
        m_members.resize(clusters);
        m_top.assign(clusters, INT32_MAX);
        m_bottom.assign(clusters, -1);
        for (uint32_t i = 0; i < s.slots(); ++i)
            for (uint32_t c : chain(i)) {
                m_members[c].push_back(i);
                m_top[c] = std::min(m_top[c], s.layerOf[i]);
                m_bottom[c] = std::max(m_bottom[c], s.layerOf[i]);
            }
        for (uint32_t i = 0; i < s.slots(); ++i)
            for (uint32_t c : chain(i))
                if (m_top[c] == s.layerOf[i] && entersFromAbove(i, c))
                    m_entries.emplace_back(i, c);
        // Where each frame's slots stand in each of its layers (the first and last place).
        std::vector<uint32_t> place(s.slots(), 0);
        for (const auto &layer : s.byLayer)
            for (size_t k = 0; k < layer.size(); ++k)
                place[layer[k]] = uint32_t(k);
        m_places.resize(clusters);
        for (uint32_t c = 1; c < clusters; ++c)
            if (!m_members[c].empty()) {
                m_places[c].assign(size_t(m_bottom[c] - m_top[c]) + 1, {UINT32_MAX, 0});
                for (uint32_t i : m_members[c]) {
                    auto &[first, last] = m_places[c][size_t(s.layerOf[i] - m_top[c])];
                    first = std::min(first, place[i]), last = std::max(last, place[i]);
                }
            }
        m_place = std::move(place);
        for (uint32_t c = 1; c < clusters; ++c)
            m_innerFirst.push_back(c);
        std::stable_sort(m_innerFirst.begin(), m_innerFirst.end(),
                         [&](uint32_t a, uint32_t b) { return s.chainOf[a].size() > s.chainOf[b].size(); });
    }

    void run()
    {
        spaceLayers();
        for (int pass = 0; pass < 40 && separate(); ++pass)
            spaceLayers();
    }

    /// Per layer: how many frames open above it and close below it (the most over its slots).
    std::pair<std::vector<int>, std::vector<int>> bands() const
    {
        std::vector<int> open(size_t(m_s.layers), 0), close(size_t(m_s.layers), 0);
        for (uint32_t i = 0; i < m_s.n; ++i) {
            const int l = m_s.layerOf[i];
            int o = 0, c = 0;
            for (uint32_t k : chain(i))
                o += m_top[k] == l, c += m_bottom[k] == l;
            open[size_t(l)] = std::max(open[size_t(l)], o);
            close[size_t(l)] = std::max(close[size_t(l)], c);
        }
        return {open, close};
    }

private:
    const std::vector<uint32_t> &chain(uint32_t i) const { return m_s.chainOf[m_s.clusterId[i]]; }

    /// Neighbours in a layer keep the item gap plus a frame margin for each frame between them.
    void spaceLayers()
    {
        for (const auto &layer : m_s.byLayer)
            for (size_t k = 1; k < layer.size(); ++k) {
                const auto &a = chain(layer[k - 1]), &b = chain(layer[k]);
                size_t d = 0;
                while (d < a.size() && d < b.size() && a[d] == b[d])
                    ++d;
                const double want =
                    m_x[layer[k - 1]] + m_s.widthOf[layer[k - 1]] + m_o.itemGap + kFramePad * double(a.size() + b.size() - 2 * d);
                m_x[layer[k]] = std::max(m_x[layer[k]], want);
            }
    }

    /// Each frame's x extent now.
    void measure()
    {
        m_left.assign(m_members.size(), 1e300);
        m_right.assign(m_members.size(), -1e300);
        for (uint32_t i = 0; i < m_s.slots(); ++i) {
            const auto &c = chain(i);
            // A long edge's dummy is its lane: the frames around it keep kEdgeFrameGap from it
            // (its via point, the dummy's middle), as moduleFrames draws them.
            const double lane = i >= m_s.n ? kEdgeFrameGap - kFramePad - m_s.widthOf[i] / 2 : 0;
            for (size_t k = 0; k < c.size(); ++k) {
                const double pad = kFramePad * double(c.size() - k) + lane;
                m_left[c[k]] = std::min(m_left[c[k]], m_x[i] - pad);
                m_right[c[k]] = std::max(m_right[c[k]], m_x[i] + m_s.widthOf[i] + pad);
            }
        }
        // An edge entering a frame from above crosses its title band right of the title: the frame
        // reaches far enough left of where it enters (moduleFrames does the same).
        for (const auto &[i, c] : m_entries)
            m_left[c] = std::min(m_left[c], m_x[i] + m_s.widthOf[i] / 2 - kFrameClearance - m_s.titleOf[c] - kFramePad);
        for (uint32_t c : m_innerFirst) // a parent holds its children
            if (const auto &cc = m_s.chainOf[c]; cc.size() >= 2 && !m_members[c].empty())
                m_left[cc[cc.size() - 2]] = std::min(m_left[cc[cc.size() - 2]], m_left[c] - kFramePad);
    }

    bool entersFromAbove(uint32_t i, uint32_t c) const
    {
        for (uint32_t j : m_s.up[i]) {
            const auto &cj = chain(j);
            if (std::find(cj.begin(), cj.end(), c) == cj.end())
                return true;
        }
        return false;
    }

    /// Moves apart, once each, the frames and slots that lie in another frame (the item gap between
    /// them; kEdgeFrameGap between a long edge's lane and a frame beside it); true when some moved.
    bool separate()
    {
        measure();
        std::vector<uint8_t> movedSlot(m_s.slots(), 0), movedFrame(m_members.size(), 0);
        bool moved = false;
        const double itemGap = m_o.itemGap;
        for (size_t c = 1; c < m_members.size(); ++c) {
            if (m_members[c].empty())
                continue;
            const auto &cc = m_s.chainOf[c];
            for (int l = m_top[c]; l <= m_bottom[c]; ++l)
                for (uint32_t i : m_s.byLayer[size_t(l)]) {
                    const auto &ci = chain(i);
                    if (std::find(ci.begin(), ci.end(), uint32_t(c)) != ci.end())
                        continue;
                    size_t d = 0; // the frames both lie in
                    while (d < ci.size() && d < cc.size() && ci[d] == cc[d])
                        ++d;
                    const uint32_t unitC = cc[d]; // the frame around c beside i (or c itself)
                    const bool frameI = d < ci.size();
                    const double l0 = frameI ? m_left[ci[d]] : m_x[i], r0 = frameI ? m_right[ci[d]] : m_x[i] + m_s.widthOf[i];
                    // A long edge's dummy beside a frame is its lane: kEdgeFrameGap from the side.
                    const double gap = frameI || i < m_s.n ? itemGap : std::max(itemGap, kEdgeFrameGap - m_s.widthOf[i] / 2);
                    if (r0 + gap <= m_left[unitC] || l0 >= m_right[unitC] + gap)
                        continue;
                    if (frameI && (m_top[ci[d]] > m_bottom[unitC] || m_bottom[ci[d]] < m_top[unitC]))
                        continue;
                    // The one the layers' order puts right of the other (spaceLayers would push
                    // it back in again), else the one further right, moves past the other.
                    const int side = frameI ? frameSide(ci[d], unitC) : slotSide(i, unitC);
                    if (side > 0 || (side == 0 && l0 + r0 >= m_left[unitC] + m_right[unitC])) {
                        const double by = m_right[unitC] + gap - l0;
                        moved |= frameI ? shiftFrame(ci[d], by, movedFrame) : shiftSlot(i, by, movedSlot);
                    } else {
                        moved |= shiftFrame(unitC, r0 + gap - m_left[unitC], movedFrame);
                    }
                }
        }
        return moved;
    }

    /// Where the layers' order puts slot `i` against frame `c`'s slots in its layer: 1 right of
    /// them, -1 left, 0 where it has none of them (or stands among them).
    int slotSide(uint32_t i, uint32_t c) const
    {
        const int l = m_s.layerOf[i];
        if (l < m_top[c] || l > m_bottom[c])
            return 0;
        const auto [first, last] = m_places[c][size_t(l - m_top[c])];
        return first == UINT32_MAX ? 0 : m_place[i] > last ? 1 : m_place[i] < first ? -1 : 0;
    }
    /// The same for frame `f` against frame `c`, over the layers both have slots in (0 where
    /// they stand among each other, or on one side in one layer and on the other in another).
    int frameSide(uint32_t f, uint32_t c) const
    {
        int side = 0;
        for (int l = std::max(m_top[f], m_top[c]); l <= std::min(m_bottom[f], m_bottom[c]); ++l) {
            const auto [f0, f1] = m_places[f][size_t(l - m_top[f])];
            const auto [c0, c1] = m_places[c][size_t(l - m_top[c])];
            if (f0 == UINT32_MAX || c0 == UINT32_MAX)
                continue;
            const int here = f0 > c1 ? 1 : f1 < c0 ? -1 : 0;
            if (here == 0 || (side != 0 && here != side))
                return 0;
            side = here;
        }
        return side;
    }

    bool shiftSlot(uint32_t i, double by, std::vector<uint8_t> &moved)
    {
        if (moved[i] || by <= 0)
            return false;
        moved[i] = 1;
        m_x[i] += by;
        return true;
    }
    bool shiftFrame(uint32_t c, double by, std::vector<uint8_t> &moved)
    {
        if (moved[c] || by <= 0)
            return false;
        moved[c] = 1;
        for (uint32_t i : m_members[c])
            m_x[i] += by;
        return true;
    }

    const LayeredState &m_s;
    const LayoutOptions &m_o;
    std::vector<double> &m_x;
    std::vector<std::vector<uint32_t>> m_members;         ///< per frame: its slots at any depth
    std::vector<int> m_top, m_bottom;                     ///< per frame: its first and last layer
    std::vector<uint32_t> m_innerFirst;                   ///< the frames, innermost first
    std::vector<std::pair<uint32_t, uint32_t>> m_entries; ///< slots where an edge enters a frame (its top layer) from above
    std::vector<double> m_left, m_right;
    std::vector<uint32_t> m_place; ///< per slot: its place in its layer
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>>
        m_places; ///< per frame, per layer from its top: its slots' first and last place
};

/// Views with frames and a row per layer: slots moved apart for the frames (FrameRoom), each
/// layer's y below the previous one with room for the frames that close above it and the title
/// bands of those that open at it. The items start at 0, 0 as without frames (the outermost
/// frames reach past: a canvas grows its scene to hold them).
void placeFramed(LayeredState &s, const LayoutOptions &o, std::vector<Point> &at)
{
    std::vector<double> x(s.slots());
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = at[i].x;
    FrameRoom room(s, o, x);
    room.run();
    const auto [open, close] = room.bands();
    double left = 1e300, right = 0, y = 0;
    for (double xi : x)
        left = std::min(left, xi);

    std::vector<double> layerY(size_t(s.layers));
    for (int li = 0; li < s.layers; ++li) {
        if (li > 0)
            y += std::max(o.layerGap, kFramePad * close[size_t(li - 1)] + kFrameTitle * open[size_t(li)] + 20);
        layerY[size_t(li)] = y;
        double height = 8;
        for (uint32_t i : s.byLayer[size_t(li)])
            height = std::max(height, s.heightOf[i]);
        y += height;
    }
    for (size_t i = 0; i < x.size(); ++i) {
        at[i] = {x[i] - left, layerY[size_t(s.layerOf[i])]};
        right = std::max(right, at[i].x + s.widthOf[i]);
        if (i < s.n)
            s.v.items[i].x = at[i].x, s.v.items[i].y = at[i].y;
    }
    s.v.width = right;
    s.v.height = y + o.layerGap;
}

} // namespace

// Coordinates: layers top to bottom, slots left to right. A layer wider than the wrap width
// (hundreds of parallel blocks) continues on further rows, so the scene keeps a shape a screen can
// show; each row is centred. Long edges get the places of their dummies as via points.
void placeSlots(LayeredState &s, const LayoutOptions &o)
{
    const auto rows = layerRows(s, o, wrapWidth(s, o));
    double widest = 0;
    for (const auto &lr : rows)
        for (const auto &r : lr)
            widest = std::max(widest, r.width);
    ViewGraph &v = s.v;
    std::vector<Point> at(s.slots());
    double y = 0;
    for (int li = 0; li < s.layers; ++li) {
        for (const auto &r : rows[size_t(li)]) {
            double x = (widest - r.width) / 2;
            for (uint32_t i : r.items) {
                at[i] = {x, y};
                if (i < s.n) {
                    v.items[i].x = x;
                    v.items[i].y = y;
                }
                x += s.widthOf[i] + o.itemGap;
            }
            y += std::max(r.height, 8.0) + o.itemGap;
        }
        y += o.layerGap - o.itemGap;
    }
    v.width = widest;
    v.height = y;
    if (s.framed && s.n <= o.wrapItems)
        placeFramed(s, o, at);
    for (auto &e : v.edges)
        e.via.clear();
    for (const auto &c : s.chains)
        for (int k = 0; k < c.count; ++k)
            v.edges[c.edge].via.push_back(
                {at[c.first + uint32_t(k)].x + s.widthOf[c.first + uint32_t(k)] / 2, at[c.first + uint32_t(k)].y});
}

} // namespace fxlens::layout::layered
