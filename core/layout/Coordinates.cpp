// SPDX-License-Identifier: MIT
// The layered layout's coordinates (see LayeredPhases.h).
#include "layout/LayeredPhases.h"

#include <algorithm>
#include <cmath>

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
    for (auto &e : v.edges)
        e.via.clear();
    for (const auto &c : s.chains)
        for (int k = 0; k < c.count; ++k)
            v.edges[c.edge].via.push_back({at[c.first + uint32_t(k)].x + 3, at[c.first + uint32_t(k)].y});
}

} // namespace fxlens::layout::layered
