// SPDX-License-Identifier: MIT
// GraphCanvas: fitting the drawing to the widget's scene viewport (above the legend's bar, never
// below the readable minimum) and zooming around a point.
#include "GraphCanvas.h"

#include <QFontMetricsF>
#include <QResizeEvent>
#include <QTimer>

#include <algorithm>
#include <climits>
#include <cmath>

namespace fxlens::views {

QRectF GraphCanvas::fitArea(QSizeF widget, const QRect &legend, QSizeF content)
{
    const double margin = 20;
    // The drawing goes above the legend or beside it, whichever leaves it larger: at first sight no
    // node lies under the legend.
    const QRectF area(margin, margin, widget.width() - 2 * margin, widget.height() - 2 * margin);
    if (legend.isEmpty())
        return area;
    const auto scaleIn = [&](const QRectF &r) {
        return std::min(r.width() / std::max(content.width(), 1.0), r.height() / std::max(content.height(), 1.0));
    };
    const QRectF above(area.left(), area.top(), area.width(), std::max(1.0, legend.top() - margin / 2 - area.top()));
    const QRectF beside(legend.right() + margin / 2, area.top(), std::max(1.0, area.right() - legend.right() - margin / 2), area.height());
    return scaleIn(above) >= scaleIn(beside) ? above : beside;
}

void GraphCanvas::fitToView() { fitWhole(kMinFitScale); }

void GraphCanvas::fitWhole(double least)
{
    if (m_view.items.empty() || width() <= 0 || height() <= 0) {
        m_scale = 1;
        m_offset = QPointF(0, 0);
        update();
        return;
    }
    const QRectF c = m_content.isEmpty() ? QRectF(0, 0, m_view.width, m_view.height) : m_content;
    const QRectF area = fitArea(sceneViewport().size(), {}, c.size());
    const double across = area.width() / std::max(c.width(), 1.0), down = area.height() / std::max(c.height(), 1.0);
    m_scale = std::clamp(std::min(across, down), 1e-5, 2.0); // a small graph is enlarged, up to twice its size
    m_offset = area.center() - c.center() * m_scale;
    if (m_scale < least) {
        // Too wide (or tall) to show whole: its short side fitted, at least the readable minimum,
        // a wide one centred (where a layered layout has its inputs and outputs), a tall one from
        // its top (the inputs); the minimap shows the rest.
        m_scale = std::max(m_scale, std::min({least, std::max(across, down), 2.0}));
        m_offset.setX(area.center().x() - c.center().x() * m_scale);
        m_offset.setY(c.height() * m_scale <= area.height() ? area.center().y() - c.center().y() * m_scale
                                                            : area.top() - c.top() * m_scale);
        settle(QRectF(), Settle::Hold);
    }
    update();
    Q_EMIT viewChanged();
}

QRectF GraphCanvas::nodesRect(const std::vector<const ir::Node *> &nodes) const
{
    QRectF r;
    for (const ir::Node *n : nodes)
        if (const int i = itemOf(n); i >= 0) {
            const auto &it = m_view.items[size_t(i)];
            r = r.united(QRectF(it.x, it.y, std::max(it.w, 1.0), std::max(it.h, 1.0)));
        }
    return r;
}

bool GraphCanvas::showModule(const QString &module)
{
    const std::string m = module.toStdString();
    QRectF r;
    for (const auto &it : m_view.items)
        if (it.module == m || it.module.rfind(m + ".", 0) == 0)
            r = r.united(QRectF(it.x, it.y, it.w, it.h));
    if (r.isEmpty() || width() <= 0 || height() <= 0)
        return false;
    r.adjust(-40, -40, 40, 40); // the frame and its title
    const QRectF area = fitArea(sceneViewport().size(), {}, r.size());
    // Whole at most 1:1 where that is legible, else at kLandScale from its start (its title).
    m_scale = std::clamp(std::min(area.width() / r.width(), area.height() / r.height()), kLandScale, 1.0);
    const double top = r.height() * m_scale <= area.height() ? area.center().y() - r.height() * m_scale / 2 : area.top();
    const double left = r.width() * m_scale <= area.width() ? area.center().x() - r.width() * m_scale / 2 : area.left();
    m_offset = QPointF(left - r.left() * m_scale, top - r.top() * m_scale);
    settle(focusOf(m), Settle::Context);
    m_untouched = false;
    update();
    Q_EMIT viewChanged();
    return true;
}

QRectF GraphCanvas::focusOf(const std::string &module) const
{
    const QRect vp = sceneViewport();
    for (const Frame &f : m_frames)
        if (f.path == module) // the frame when it fits in view, else its title
            return f.rect.width() * m_scale <= vp.width() && f.rect.height() * m_scale <= vp.height() ? f.rect : f.titlePlate();
    for (const auto &it : m_view.items)
        if (it.module == module) // its box
            return QRectF(it.x, it.y, it.w, it.h);
    return {};
}

void GraphCanvas::refit()
{
    if (m_selected >= 0 && size_t(m_selected) < m_view.items.size())
        landOn(m_selected);
    else
        readableView();
    update();
    Q_EMIT viewChanged();
}

void GraphCanvas::landOn(int item, bool fromHere)
{
    const QRect vp = sceneViewport();
    constexpr double kMargin = 16;
    const auto &it = m_view.items[size_t(item)];
    const QRectF node(it.x, it.y, it.w, it.h);
    const auto fitsAt = [&](const QRectF &r, double s) {
        return r.width() * s <= vp.width() - 2 * kMargin && r.height() * s <= vp.height() - 2 * kMargin;
    };
    double scale = std::max(m_scale, 0.8);
    // A small drawing's fit enlarges it (fitToView); once it no longer fits at that zoom (a step
    // unstacked blocks), a node lands at the zoom that shows most of it, legible, not enlarged.
    if (scale > 1 && !fitsAt(m_content, scale))
        scale = std::clamp(std::min((vp.width() - 2 * kMargin) / std::max(m_content.width(), 1.0),
                                    (vp.height() - 2 * kMargin) / std::max(m_content.height(), 1.0)),
                           kLandScale, 1.0);
    std::vector<const Frame *> around; // innermost first
    for (auto f = m_frames.rbegin(); f != m_frames.rend(); ++f)
        if (f->rect.contains(node))
            around.push_back(&*f);
    QRectF keep = node;
    if (!around.empty() && !fitsAt(around.front()->rect, scale)) {
        const QRectF &r = around.front()->rect;
        const double fit = std::min((vp.width() - 2 * kMargin) / r.width(), (vp.height() - 2 * kMargin) / r.height());
        if (fit >= kLandScale) // the frame whole, still readable
            scale = fit;
    }
    for (const Frame *f : around)
        if (fitsAt(f->rect, scale))
            keep = f->rect; // the largest frame around it that fits whole
        else
            break;
    if (keep == node && !around.empty()) {
        // Too large to show whole: the node and its frame's title (the title's plate), along each
        // axis where both fit.
        const QRectF title = around.front()->titleRect();
        const QFontMetricsF fm(font());
        const QRectF plate(title.left() - 2, title.top(),
                           std::min(title.width(), fm.horizontalAdvance(QString::fromStdString(around.front()->path)) + 4), title.height());
        const QRectF both = node.united(plate);
        if (both.width() * scale <= vp.width() - 2 * kMargin)
            keep.setLeft(both.left()), keep.setRight(both.right());
        if (both.height() * scale <= vp.height() - 2 * kMargin)
            keep.setTop(both.top()), keep.setBottom(both.bottom());
    }
    // The node in the centre, then panned as little as brings what to keep inside the margin.
    if (fromHere) // the view as it is, zoomed about the middle of its top edge
        m_offset = QPointF(vp.center().x(), vp.top()) - (QPointF(vp.center().x(), vp.top()) - m_offset) * (scale / m_scale);
    else
        m_offset = QRectF(vp).center() - node.center() * scale;
    m_scale = scale;
    const QRectF on = onScreen(keep);
    const QRectF inner = QRectF(vp).adjusted(kMargin, kMargin, -kMargin, -kMargin);
    m_offset += QPointF(on.left() < inner.left()         ? inner.left() - on.left()
                            : on.right() > inner.right() ? inner.right() - on.right()
                                                         : 0,
                        on.top() < inner.top()             ? inner.top() - on.top()
                            : on.bottom() > inner.bottom() ? inner.bottom() - on.bottom()
                                                           : 0);
    // No empty band past the drawing's end where the drawing runs on past the other edge: a node
    // at the end of a wide row is shown with the row beside it, not alone.
    const QRectF content = onScreen(m_content);
    const auto fill = [](double a, double b, double lo, double hi) {
        return b - a <= hi - lo ? 0.0 : a > lo ? lo - a : b < hi ? hi - b : 0.0;
    };
    m_offset += QPointF(fill(content.left(), content.right(), inner.left(), inner.right()),
                        fill(content.top(), content.bottom(), inner.top(), inner.bottom()));
    settle(keep, Settle::Context);
}

void GraphCanvas::settle(const QRectF &focus, Settle how)
{
    // The least pans; where they leave something cut at an edge, pans that also move what one axis
    // cuts out of view along the other, kept when they leave nothing cut.
    bringIn(focus);
    const QPointF from = m_offset;
    settlePan(focus, how, false);
    const int cut = cutAtEdges();
    if (cut == 0)
        return;
    const QPointF least = m_offset;
    m_offset = from;
    settlePan(focus, how, true);
    if (cutAtEdges(false) != 0 || cutAtEdges() >= cut) // kept when it cuts no item, and fewer labels
        m_offset = least;
}

void GraphCanvas::bringIn(const QRectF &focus)
{
    // Along each axis, the least pan that brings it whole into view (12 px clear of the edges), or,
    // where it does not fit, that leaves no part of the view beside it: its start (left end, top)
    // to the view's start when it starts within the view, else its end to the view's end.
    const QRectF vp = QRectF(sceneViewport()).adjusted(12, 12, -12, -12);
    if (focus.isNull() || vp.isEmpty())
        return;
    const QRectF on = onScreen(focus);
    const auto pan = [](double a, double b, double lo, double hi) {
        if (b - a > hi - lo)
            return a > lo ? lo - a : b < hi ? hi - b : 0.0;
        return a < lo ? lo - a : b > hi ? hi - b : 0.0;
    };
    m_offset += QPointF(pan(on.left(), on.right(), vp.left(), vp.right()), pan(on.top(), on.bottom(), vp.top(), vp.bottom()));
}

std::vector<GraphCanvas::SettleMark> GraphCanvas::settleMarks(const QRectF &focus) const
{
    // What is to be whole or out of view, never cut by an edge: the items, ghosts and labels near
    // the viewport, the frames' titles, and the frames small enough to be seen whole. The titles of
    // the frames around the focus are to be in view (weight 24, where a node or title cut weighs 3
    // and a label 1).
    const QRectF vp = sceneViewport();
    std::vector<SettleMark> marks;
    const QRectF near = vp.adjusted(-vp.width() / 2, -vp.height() / 2, vp.width() / 2, vp.height() / 2);
    for (int i : itemsIn(QRectF(toScene(near.topLeft()), near.size() / m_scale)))
        marks.push_back({itemRect(i), 3});
    for (const auto &g : m_ghosts)
        if (const QRectF r = onScreen(QRectF(g.x, g.y, g.w, g.h)); r.intersects(near))
            marks.push_back({r, 3});
    for (const QRectF &r : labelsIn(near))
        marks.push_back({r, 1});
    for (const Frame &f : m_frames) {
        const QRectF r = onScreen(f.rect);
        const bool around = !focus.isNull() && f.rect.contains(focus);
        if (!around && !r.intersects(near))
            continue;
        if (r.width() <= vp.width() && r.height() <= vp.height())
            marks.push_back({r, 3});
        if (const QRectF title = onScreen(f.titlePlate()); around || title.intersects(near))
            marks.push_back({title, around ? 24 : 3, around});
    }
    return marks;
}

void GraphCanvas::settlePan(const QRectF &focus, Settle how, bool hideCut)
{
    const QRectF vp = sceneViewport();
    if (m_view.items.empty() || vp.isEmpty())
        return;
    const std::vector<SettleMark> marks = settleMarks(focus);
    const QRectF keep = focus.isNull() ? QRectF() : onScreen(focus);
    const QRectF whole = onScreen(m_content);
    const QRectF minimap = minimapCover();
    QPointF moved;
    for (const bool across : {true, false, true}) {
        const auto span = [across](const QRectF &r) { return across ? std::pair{r.left(), r.right()} : std::pair{r.top(), r.bottom()}; };
        const auto [lo, hi] = span(vp);
        const QPointF unit = across ? QPointF(1, 0) : QPointF(0, 1);
        // The cost of panning by `shift` more: the marks it leaves cut (or, around the focus, not
        // in view), then, when landing on a focus, whether the drawing's start (its inputs) is out
        // of view. Each mark costs its weight over open intervals of the shift (cut) or outside a
        // closed one (not in view): summed over sorted interval ends, not mark by mark.
        std::vector<std::pair<double, int>> opens, opensEnd, closed, closedEnd;
        int base = 0;
        const auto [va, vb] = span(QRectF(vp.y(), vp.x(), vp.height(), vp.width())); // the other axis
        for (const SettleMark &m : marks) {
            const QRectF r = m.r.translated(moved);
            const auto [oa, ob] = span(QRectF(r.y(), r.x(), r.height(), r.width()));
            const auto [a, b] = span(r);
            if (m.inView && oa >= va && ob <= vb) { // to be in view: costs outside [lo - a, hi - b]
                base += m.weight;
                if (lo - a <= hi - b)
                    closed.push_back({lo - a, m.weight}), closedEnd.push_back({hi - b, m.weight});
            } else if (ob > va && oa < vb) {                               // cut at lo over (lo - b, lo - a), at hi over (hi - b, hi - a)
                if (b - a >= hi - lo || (hideCut && (oa < va || ob > vb))) // or cut across: whenever in view
                    opens.push_back({lo - b, m.weight}), opensEnd.push_back({hi - a, m.weight});
                else
                    for (const double edge : {lo, hi})
                        opens.push_back({edge - b, m.weight}), opensEnd.push_back({edge - a, m.weight});
            }
            // Under the minimap over (its lo - b, its hi - a): cleared by panning across only (a pan
            // down for it would take the drawing's start out of view).
            if (const auto [ma, mb] = span(QRectF(minimap.y(), minimap.x(), minimap.height(), minimap.width()));
                across && !minimap.isEmpty() && ob > ma && oa < mb) {
                const auto [na, nb] = span(minimap);
                opens.push_back({na - b, m.weight}), opensEnd.push_back({nb - a, m.weight});
            }
        }
        const auto prefix = [](std::vector<std::pair<double, int>> &v) {
            std::sort(v.begin(), v.end());
            for (size_t i = 1; i < v.size(); ++i)
                v[i].second += v[i - 1].second;
        };
        for (auto *v : {&opens, &opensEnd, &closed, &closedEnd})
            prefix(*v);
        const auto below = [](const std::vector<std::pair<double, int>> &v, double x, bool orEqual) { // weight of ends < x (or <= x)
            const auto it = orEqual ? std::upper_bound(v.begin(), v.end(), std::pair{x, INT_MAX})
                                    : std::lower_bound(v.begin(), v.end(), std::pair{x, INT_MIN});
            return it == v.begin() ? 0 : std::prev(it)->second;
        };
        const auto cost = [&](double shift) {
            const int cuts = base + below(opens, shift, false) - below(opensEnd, shift, true) - below(closed, shift, true) +
                below(closedEnd, shift, false);
            const auto [wa, wb] = span(whole.translated(moved + unit * shift));
            return std::pair{cuts, how == Settle::Context && wa < lo - 1 && wb > lo};
        };
        std::vector<double> shifts{0};
        for (const SettleMark &m : marks) {
            const auto [a, b] = span(m.r.translated(moved));
            for (const double s : {lo + 4 - a, hi - 4 - b, lo - 4 - b, hi + 4 - a}) // whole, 4 px clear of an edge
                if (std::abs(s) <= (hi - lo) / 2)
                    shifts.push_back(s);
        }
        const auto [ka, kb] = span(keep.translated(moved));
        // Where the drawing runs past both edges, no pan opens (or widens) an empty band past its
        // end: an empty view cuts nothing, but shows nothing either.
        const auto band = [&](double shift) {
            const auto [wa, wb] = span(whole.translated(moved + unit * shift));
            return wb - wa <= hi - lo ? 0.0 : std::max(0.0, wa - lo) + std::max(0.0, hi - wb);
        };
        const double band0 = band(0);
        double best = 0;
        auto bestCost = cost(0);
        for (const double s : shifts) {
            if ((!keep.isNull() && s != 0 && (ka + s < lo || kb + s > hi)) || band(s) > band0 + 1)
                continue; // the focus stays whole in view, the view on the drawing
            const auto c = cost(s);
            if (c < bestCost || (c == bestCost && std::abs(s) < std::abs(best)))
                best = s, bestCost = c;
        }
        moved += unit * best;
    }
    m_offset += moved;
}

std::vector<QRectF> GraphCanvas::labelsIn(const QRectF &area) const
{
    std::vector<QRectF> out;
    const auto add = [&](const QRectF &scene) {
        if (const QRectF r(scene.topLeft() * m_scale + m_offset, scene.size() * m_scale); !scene.isEmpty() && r.intersects(area))
            out.push_back(r);
    };
    if (kernelLabelsDrawn())
        for (const auto &o : m_kernelOutlines)
            add(o.label);
    if (m_scale >= kEdgeLabelScale) // as paintEdges draws them
        for (const auto &l : m_edgeLabels)
            add(l.rect);
    return out;
}

int GraphCanvas::cutAtEdges(bool labels) const
{
    const QRectF vp = sceneViewport(), minimap = minimapCover();
    const auto cut = [&](const QRectF &r) { return (r.intersects(vp) && !vp.contains(r)) || r.intersects(minimap); };
    const auto drawn = labels ? labelsIn(vp) : std::vector<QRectF>();
    int n = int(std::count_if(drawn.begin(), drawn.end(), cut));
    for (const int i : itemsIn(QRectF(toScene(vp.topLeft()), vp.size() / m_scale)))
        n += cut(itemRect(i)) ? 3 : 0; // as settlePan weighs them
    return n;
}

QRectF GraphCanvas::minimapCover() const
{
    const QRect r = minimapRect();
    return r.isEmpty() ? QRectF() : QRectF(r).adjusted(-4, -4, 4, 4);
}

void GraphCanvas::showNodes(const std::vector<const ir::Node *> &nodes, double least)
{
    const QRect vp = sceneViewport();
    const QRectF r = nodes.empty() ? m_content : nodesRect(nodes);
    if (r.isEmpty() || vp.width() <= 0 || vp.height() <= 0)
        return;
    constexpr double kMargin = 30;
    const QSizeF room(std::max(vp.width() - 2 * kMargin, 1.0), std::max(vp.height() - 2 * kMargin, 1.0));
    const double fit = std::clamp(std::min(room.width() / std::max(r.width(), 1.0), room.height() / std::max(r.height(), 1.0)), least, 1.0);
    // Along an axis where it does not fit at that zoom: its start (left end, top) in view. Then
    // settled; where that leaves something cut at an edge, zoomed out a few percent a step (down
    // to `least`) while that helps, else the first zoom's settled view.
    const auto place = [&](double scale) {
        m_scale = scale;
        const QRectF keep(r.topLeft(), QSizeF(std::min(r.width(), room.width() / m_scale), std::min(r.height(), room.height() / m_scale)));
        m_offset = QRectF(vp).center() - keep.center() * m_scale;
        settle(keep, Settle::Hold);
        return cutAtEdges();
    };
    double best = fit;
    int fewest = place(fit);
    for (double s = fit * 0.97; fewest > 0 && s >= least; s *= 0.97)
        if (const int cuts = place(s); cuts < fewest)
            fewest = cuts, best = s;
    place(best);
    update();
    Q_EMIT viewChanged();
}

void GraphCanvas::zoomBy(double factor, QPointF around)
{
    const QPointF s = toScene(around);
    m_untouched = false;
    m_scale = std::clamp(m_scale * factor, 1e-5, 8.0);
    m_offset = around - s * m_scale;
    update();
    Q_EMIT viewChanged();
}

void GraphCanvas::resizeEvent(QResizeEvent *e)
{
    QWidget::resizeEvent(e);
    if (!m_followResize || m_view.items.empty() || !e->oldSize().isValid() || e->oldSize().isEmpty() || m_beforeResize)
        return;
    // What the user saw, in the viewport before this batch of resizes (a dock dragged resizes many
    // times a second): placed again once, when the batch is over.
    const QRect old(0, 0, e->oldSize().width(), e->oldSize().height() - legendRect().height());
    const QRectF seen(toScene(old.topLeft()), toScene(QPointF(old.right() + 1, old.bottom() + 1)));
    QRectF selected;
    if (m_selected >= 0 && size_t(m_selected) < m_view.items.size()) {
        const auto &it = m_view.items[size_t(m_selected)];
        if (seen.contains(QRectF(it.x, it.y, it.w, it.h)))
            selected = QRectF(it.x, it.y, it.w, it.h);
    }
    m_beforeResize = BeforeResize{seen.contains(m_content), seen.center(), selected, m_offset, m_scale};
    QTimer::singleShot(0, this, [this] {
        const auto before = std::exchange(m_beforeResize, std::nullopt);
        if (!before || m_view.items.empty() || before->offset != m_offset || before->scale != m_scale)
            return; // placed since (a refit, a landing, a new file)
        if (before->whole) {
            fitToView();
            return;
        }
        m_offset = QRectF(sceneViewport()).center() - before->centre * m_scale;
        settle(before->selected, Settle::Hold);
        update();
        Q_EMIT viewChanged();
    });
}

} // namespace fxlens::views
