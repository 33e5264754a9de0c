// SPDX-License-Identifier: MIT
// GraphCanvas: the frames of expanded modules (see GraphCanvas.h, Frame): computed after each
// layout, row by row around a module's items, painted under the items, hit by a double-click.
#include "GraphCanvas.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

namespace fxlens::views {

using layout::ViewItem;

namespace {

/// The rows of a layout (items whose vertical extents overlap), top to bottom.
struct Rows {
    std::vector<int> of;                         ///< per item: its row
    std::vector<std::pair<double, double>> span; ///< per row: top, bottom
};

Rows layoutRows(const std::vector<ViewItem> &items)
{
    std::vector<uint32_t> byY(items.size());
    std::iota(byY.begin(), byY.end(), 0u);
    std::sort(byY.begin(), byY.end(), [&](uint32_t a, uint32_t b) { return items[a].y < items[b].y; });
    Rows rows;
    rows.of.resize(items.size());
    for (uint32_t i : byY) {
        const auto &it = items[i];
        if (rows.span.empty() || it.y >= rows.span.back().second)
            rows.span.push_back({it.y, it.y + it.h});
        else
            rows.span.back().second = std::max(rows.span.back().second, it.y + it.h);
        rows.of[i] = int(rows.span.size() - 1);
    }
    return rows;
}

/// Per row: the x extent (left, right) of a module's members in it.
using RowExtents = std::map<int, std::pair<double, double>>;

/// Per expanded module: its members' x extent in each row (a module's nodes are kept together in
/// a layer, so nothing else lies between them), and how many members it has.
struct ModuleExtents {
    std::map<std::string, RowExtents> extent;
    std::map<std::string, size_t> members;
};

ModuleExtents moduleExtents(const std::vector<ViewItem> &items, const std::set<std::string> &expanded, const std::vector<int> &rowOf)
{
    ModuleExtents out;
    for (size_t i = 0; i < items.size(); ++i) {
        const auto &it = items[i];
        const std::string chain =
            it.kind == ViewItem::Kind::Module ? it.module.substr(0, std::min(it.module.size(), it.module.rfind('.'))) : it.module;
        if (it.kind == ViewItem::Kind::Module && it.module.find('.') == std::string::npos)
            continue; // a top-level box has no frame around it
        for (size_t k = 1; k <= chain.size(); ++k)
            if ((k == chain.size() || chain[k] == '.') && expanded.count(chain.substr(0, k))) {
                auto [e, fresh] = out.extent[chain.substr(0, k)].emplace(rowOf[i], std::make_pair(it.x, it.x + it.w));
                if (!fresh)
                    e->second = {std::min(e->second.first, it.x), std::max(e->second.second, it.x + it.w)};
                ++out.members[chain.substr(0, k)];
            }
    }
    return out;
}

/// Per framed module: how deep the framed modules inside it nest (padding grows with it, so that
/// frames nest).
std::map<std::string, int> nestingBelow(const std::map<std::string, RowExtents> &extent)
{
    std::map<std::string, int> below;
    for (const auto &[path, rows] : extent)
        for (size_t k = path.find('.'); k != std::string::npos; k = path.find('.', k + 1)) {
            int &b = below[path.substr(0, k)];
            b = std::max(b, int(std::count(path.begin() + long(k), path.end(), '.')));
        }
    return below;
}

/// A frame's outline and bounds: it follows its rows, a rectangle per row joined across the gap to
/// the next row. None when the module's rows are not consecutive (the frame would cross a row
/// without members).
std::optional<std::pair<QPainterPath, QRectF>> frameShape(const RowExtents &rows, const std::vector<std::pair<double, double>> &rowSpan,
                                                          double pad, double title)
{
    QPainterPath shape;
    shape.setFillRule(Qt::WindingFill);
    QRectF bounds;
    int prevRow = -1;
    std::pair<double, double> prev;
    for (const auto &[row, x] : rows) {
        const QRectF r(x.first - pad, rowSpan[size_t(row)].first - pad - (prevRow < 0 ? title : 0), x.second - x.first + 2 * pad,
                       rowSpan[size_t(row)].second - rowSpan[size_t(row)].first + 2 * pad + (prevRow < 0 ? title : 0));
        shape.addRect(r);
        bounds = bounds.isNull() ? r : bounds.united(r);
        if (prevRow >= 0) {
            if (row != prevRow + 1)
                return std::nullopt;
            // The join spans both rows' extents: the band between two rows holds no item.
            const double top = rowSpan[size_t(prevRow)].second, bottom = rowSpan[size_t(row)].first;
            const double jl = std::min(prev.first, x.first) - pad, jr = std::max(prev.second, x.second) + pad;
            shape.addRect(QRectF(jl, top, jr - jl, bottom - top));
        }
        prevRow = row;
        prev = x;
    }
    return std::make_pair(shape.simplified(), bounds);
}

/// Whether a frame of module `path` would hold another module's node (a module called several
/// times, its calls apart): such a frame is not drawn.
bool claimsOthers(const QPainterPath &shape, const std::vector<ViewItem> &items, const std::string &path)
{
    auto isMember = [&](const ViewItem &x) { return x.module == path || x.module.rfind(path + ".", 0) == 0; };
    for (const auto &x : items)
        if (!isMember(x) && shape.contains(QPointF(x.x + x.w / 2, x.y + x.h / 2)))
            return true;
    return false;
}

/// Frames around items at the scene's edge reach past it: the scene moves and grows to hold them.
void makeRoom(layout::ViewGraph &view, std::vector<GraphCanvas::Frame> &frames)
{
    double left = 0, top = 0;
    for (const auto &f : frames)
        left = std::min(left, f.rect.left()), top = std::min(top, f.rect.top());
    if (left < 0 || top < 0) {
        const double dx = -left + 2, dy = -top + 2;
        for (auto &it : view.items)
            it.x += dx, it.y += dy;
        for (auto &e : view.edges) {
            for (auto &pt : e.route)
                pt.x += dx, pt.y += dy;
            for (auto &pt : e.via)
                pt.x += dx, pt.y += dy;
        }
        view.width += dx;
        view.height += dy;
        for (auto &f : frames) {
            f.rect.translate(dx, dy);
            f.shape.translate(dx, dy);
        }
    }
    for (const auto &f : frames) {
        view.width = std::max(view.width, f.rect.right() + 2);
        view.height = std::max(view.height, f.rect.bottom() + 2);
    }
}

} // namespace

void GraphCanvas::computeFrames()
{
    m_frames.clear();
    constexpr size_t kFramedItems = 20000;
    if (m_expanded.empty() || m_view.items.empty() || m_view.items.size() > kFramedItems)
        return;
    constexpr double kPad = 4, kTitle = 13;
    const Rows rows = layoutRows(m_view.items);
    const ModuleExtents modules = moduleExtents(m_view.items, m_expanded, rows.of);
    const std::map<std::string, int> below = nestingBelow(modules.extent);
    for (const auto &[path, extent] : modules.extent) {
        const size_t members = modules.members.at(path);
        if (members < 2) // a module of one node (a leaf called once) gets no frame
            continue;
        const auto nested = below.find(path);
        const double pad = kPad * (1 + (nested == below.end() ? 0 : nested->second));
        const auto shape = frameShape(extent, rows.span, pad, kTitle);
        // Never claim another module's node (a module called several times, its calls apart).
        if (!shape || claimsOthers(shape->first, m_view.items, path))
            continue;
        m_frames.push_back({path, shape->second, int(std::count(path.begin(), path.end(), '.')), members, shape->first});
    }
    std::sort(m_frames.begin(), m_frames.end(), [](const Frame &a, const Frame &b) { return a.depth < b.depth; });
    makeRoom(m_view, m_frames);
}

void GraphCanvas::paintFrames(QPainter &p, const QRectF &sceneRect, double scale, bool everything)
{
    if (m_frames.empty())
        return;
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    QFont f = p.font();
    f.setPixelSize(11);
    f.setBold(true);
    for (const auto &fr : m_frames) {
        if (!everything && !sceneRect.intersects(fr.rect))
            continue;
        const QColor tint = QColor::fromHsv((fr.depth * 47 + 200) % 360, 40, dark ? 90 : 250);
        p.setPen(QPen(tint.darker(dark ? 70 : 140), 1.0 / std::max(scale, 0.05)));
        QColor fill = tint;
        fill.setAlpha(dark ? 60 : 70);
        p.setBrush(fill);
        p.drawPath(fr.shape);
        if (everything || 11 * scale >= 7) {
            p.setFont(f);
            p.setPen(palette().color(QPalette::WindowText));
            const QString title = QString::fromStdString(fr.path);
            // Nested frames share their top rows: titles alternate sides by depth so they do not overlap.
            p.drawText(fr.rect.adjusted(8, 1, -8, 0), (fr.depth % 2 ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop,
                       QFontMetrics(f).elidedText(title, Qt::ElideLeft, int(std::max(10.0, fr.rect.width() - 16))));
        }
    }
}

int GraphCanvas::frameAt(QPointF pos) const
{
    const QPointF s = toScene(pos);
    int best = -1;
    for (size_t k = 0; k < m_frames.size(); ++k) // outermost first: the last hit is the innermost
        if (m_frames[k].shape.contains(s))
            best = int(k);
    return best;
}

} // namespace fxlens::views
