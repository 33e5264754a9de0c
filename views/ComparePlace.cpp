// SPDX-License-Identifier: MIT
// Where Compare Versions puts what it shows (see CompareView.h): the zoom, the move of both panes
// within the room the fit leaves and the node they are aligned at, weighed by what the user sees
// at the panes' edges.
#include "CompareView.h"

#include "GraphCanvas.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fxlens::views {

namespace {

/// What cutting something at a pane's edge costs: a node or a module's box 1, a frame's title
/// kTitleCut, a box the changes sit beside (besideChanges) kBesideCut, a node in a diff colour (of
/// any change) kChangeCut: cut, it reads as the change cut.
constexpr double kTitleCut = 10, kBesideCut = 10, kChangeCut = 100;
/// Aligned at another node than the one that lines up most of the change's neighbourhood: as much
/// as this many boxes cut (worth it to keep a box the changes sit beside, a title or a change whole).
constexpr double kRealign = 3;
/// A band of a pane left empty at one end while the drawing runs past the other end (room the
/// drawing could fill): a band the pane's whole height (or width) costs as much as this many
/// boxes cut, a fifth of it about two.
constexpr double kIdleBand = 12;
/// The changes moved off the middle of the room the fit leaves: by the pane's whole height (or
/// width), as much as this many boxes cut.
constexpr double kOffCentre = 2;
/// Zoomed out from the fit: by a tenth, as much as 0.6 of a box cut.
constexpr double kZoomOut = 6;
/// Room nearer an edge than the fit's margin is no band.
constexpr double kBandMargin = 20;
/// What is fitted moved into that margin, up to 2 px from the pane's edge: the whole margin, as
/// much as half a box cut.
constexpr double kCramped = 0.5;

/// Where a pane's drawing area ends: above its legend where the legend runs across the pane.
double drawingBottom(const GraphCanvas &c)
{
    const QRect legend = c.legendRect();
    return legend.isEmpty() || legend.width() < c.width() / 2 ? c.height() : legend.top();
}

/// The boxes of a pane that the changes sit beside: those an edge joins to a node in a diff colour,
/// and the boxes of the stacks in a module that holds one (the blocks a rewrite of one left as
/// they were).
std::vector<bool> besideChanges(const GraphCanvas &c)
{
    const auto &v = c.view();
    const auto marked = [&](size_t i) { return c.diffOf(int(i)) != GraphCanvas::DiffMark::None; };
    std::vector<bool> out(v.items.size());
    std::vector<const std::string *> held; // the modules of the nodes in a diff colour
    for (size_t i = 0; i < v.items.size(); ++i)
        if (marked(i))
            held.push_back(&v.items[i].module);
    for (const auto &e : v.edges)
        if (marked(e.from) || marked(e.to))
            out[e.from] = out[e.to] = true;
    for (size_t i = 0; i < v.items.size(); ++i) {
        const auto &it = v.items[i];
        if (it.kind != layout::ViewItem::Kind::Module || it.stacked == 0 || it.stack < 0 || size_t(it.stack) >= c.stacks().size())
            continue;
        const std::string &parent = c.stacks()[size_t(it.stack)].parent;
        out[i] = out[i] || std::any_of(held.begin(), held.end(), [&](const std::string *m) {
                     return parent.empty() || *m == parent || m->rfind(parent + '.', 0) == 0;
                 });
    }
    return out;
}

/// Something drawn, along one axis of a pane (widget coordinates), the pane's edges there, and
/// what cutting it costs.
struct Span {
    double lo, hi, e0, e1;
    double weight = 1;
};

/// One axis of both panes: what is drawn along it (the boxes and titles across the other axis in
/// view) and each pane's drawing along it, its edges and all, for a move `d` of both panes.
struct Axis {
    std::vector<Span> spans, drawings;
    double soft0 = -std::numeric_limits<double>::infinity(),
           soft1 = std::numeric_limits<double>::infinity(); ///< the moves clear of the margins

    double cut(double d) const
    {
        double n = 0;
        for (const Span &s : spans)
            n += ((s.lo + d < s.e0 && s.hi + d > s.e0) || (s.lo + d < s.e1 && s.hi + d > s.e1)) ? s.weight : 0;
        return n;
    }
    /// The bands of the panes left empty that their drawings could fill, in panes: the wider
    /// empty end of a pane (past its margin), less half the room a drawing smaller than the pane
    /// leaves (a drawing in the middle of a pane leaves none).
    double idle(double d) const
    {
        double n = 0;
        for (const Span &s : drawings) {
            const double room = s.e1 - s.e0 - 2 * kBandMargin;
            const double gap = std::max({0.0, s.lo + d - s.e0 - kBandMargin, s.e1 - kBandMargin - s.hi - d});
            n += std::max(0.0, gap - std::max(0.0, room - (s.hi - s.lo)) / 2) / std::max(1.0, s.e1 - s.e0);
        }
        return n;
    }
    double cost(double d) const
    {
        const double size = drawings.empty() ? 1 : std::max(1.0, drawings.front().e1 - drawings.front().e0);
        const double cramped = std::max({0.0, soft0 - d, d - soft1}) / kBandMargin;
        return cut(d) + kIdleBand * idle(d) + kOffCentre * std::abs(d) / size + kCramped * cramped;
    }
    /// The `n` moves within [lo, hi] that cost least, cheapest first (of two that cost alike, the
    /// smaller), each with its cost: where a box just past an edge comes into view whole or goes
    /// clearly out of it, where a drawing's end meets the pane's margin, or where it is in the
    /// middle of the pane; and no move.
    std::vector<std::pair<double, double>> cheapest(double lo, double hi, size_t n)
    {
        if (lo > hi)
            return {{0, cost(0)}};
        // Only what an edge can cut within the room counts for the cut.
        std::erase_if(spans, [&](const Span &s) {
            return !(s.lo + lo < s.e0 + 2 && s.hi + hi > s.e0 - 2) && !(s.lo + lo < s.e1 + 2 && s.hi + hi > s.e1 - 2);
        });
        std::vector<double> tries{0, lo, hi, std::clamp(soft0, lo, hi), std::clamp(soft1, lo, hi)};
        for (const Span &s : spans)
            for (const double d : {s.e0 + 2 - s.lo, s.e0 - 2 - s.hi, s.e1 - 2 - s.hi, s.e1 + 2 - s.lo})
                tries.push_back(d);
        for (const Span &s : drawings)
            for (const double d : {s.e0 + kBandMargin - s.lo, s.e1 - kBandMargin - s.hi, (s.e0 + s.e1 - s.lo - s.hi) / 2})
                tries.push_back(std::clamp(d, lo, hi));
        std::vector<std::pair<double, double>> out; // cost, move
        for (const double d : tries)
            if (d >= lo && d <= hi)
                out.emplace_back(cost(d), d);
        std::sort(out.begin(), out.end(), [](const auto &x, const auto &y) {
            return std::pair(x.first, std::abs(x.second)) < std::pair(y.first, std::abs(y.second));
        });
        std::vector<std::pair<double, double>> picked; // move, cost
        for (const auto &[c, d] : out)
            if (picked.size() < n &&
                std::none_of(picked.begin(), picked.end(), [d = d](const auto &p) { return std::abs(p.first - d) < 1; }))
                picked.emplace_back(d, c);
        return picked;
    }
};

} // namespace

/// Fitted when it fits at kReadableScale (into the panes' margins if need be). Else a fitted view
/// would be a sliver of unreadable boxes (every change of BERT is its whole graph): at
/// kReadableScale from the start of what is shown (its top at the top, across where the shared
/// node is), for "All changes" the first change (as it is shown alone, at the smaller zoom: the
/// changes after it come into view below), and the position label says that N / Shift+N step
/// through them.
void CompareView::placeCurrent()
{
    Frame f = frame(m_current);
    if (f.both.isEmpty())
        return;
    m_tooLarge = roomFit(f) < kReadableScale;
    if (m_tooLarge && m_current < 0 && !m_changes.empty())
        f = frame(0);
    double scale = m_tooLarge ? kReadableScale : f.fit;
    QPointF centre = f.both.center(); // of A's scene, at the area's centre
    if (m_tooLarge) {                 // the start: the top, across at the shared node, within the change
        const double halfW = f.area.width() / 2 / scale, halfH = f.area.height() / 2 / scale;
        const auto within = [](double v, double lo, double hi) { return lo > hi ? (lo + hi) / 2 : std::clamp(v, lo, hi); };
        centre = QPointF(within(f.anchor.x(), f.both.left() + halfW, f.both.right() - halfW), f.both.top() + halfH);
    } else {
        // Where a box the changes sit beside is drawn further off them in one version than in the
        // other (the stack's box beside a changed block that is wider in A), no zoom and move of
        // both panes may keep it whole in both: aligned at another node near the changes (another
        // offset of B against A), it may be whole in both, or in one and out of view in the other.
        // Only at no smaller zoom (it stands for zooming out), the node whole on screen.
        auto [s, move, least] = zoomAndMove(f);
        for (const auto &[box, shift] : f.others) {
            Frame g = frame(m_current, &shift);
            if (g.shift != shift || roomFit(g) < kReadableScale)
                continue;
            const auto [gs, gmove, cost] = zoomAndMove(g);
            const QPointF at = (box.topLeft() - g.both.center()) * gs + gmove + g.area.center();
            if (cost + kRealign < least - 1e-9 && gs >= s - 1e-9 && roomOf(g).contains(QRectF(at, box.size() * gs)))
                std::tie(f, s, move, least) = std::tuple(std::move(g), gs, gmove, cost + kRealign);
        }
        scale = s;
        centre = f.both.center() - move / scale;
    }
    m_shift = f.shift;
    m_syncing = true;
    for (GraphCanvas *c : {m_left, m_right})
        c->setView(scale,
                   (c == m_left ? centre : centre + f.shift) + (QPointF(c->width() / 2.0, c->height() / 2.0) - f.area.center()) / scale);
    m_syncing = false;
    updatePosition();
}

/// Fitted to the changes, what lies around them may be cut at an edge, or a band of a pane left
/// empty that the drawing could fill: of the zooms from the fit down (3% a step), each with the
/// move the slack finds, the one that costs least, zooming out costing too (below 60% of the fit
/// only where no changed node is cut, at half the cost of one: only a changed node no longer cut
/// pays for that).
std::tuple<double, QPointF, double> CompareView::zoomAndMove(const Frame &f) const
{
    const double fit = std::max(f.fit, kReadableScale); // into the margins where the fit is not readable
    std::tuple<double, QPointF, double> best{fit, QPointF(), std::numeric_limits<double>::infinity()};
    for (double s = fit; s >= kReadableScale - 1e-9; s *= 0.97) {
        const auto [move, cost] = slack(f, s, f.both.center());
        const bool far = s < 0.6 * f.fit;
        if (const double total = cost + kZoomOut * std::max(0.0, 1 - s / f.fit) + (far ? kChangeCut / 2 : 0);
            total < std::get<2>(best) - 1e-9 && (!far || cost < kChangeCut))
            best = {s, move, total};
    }
    return best;
}

QRectF CompareView::roomOf(const Frame &f) const
{
    const double w = std::min(m_left->width(), m_right->width()), bottom = std::min(drawingBottom(*m_left), drawingBottom(*m_right));
    const QRectF &area = f.area;
    return QRectF(QPointF(area.left() <= kBandMargin + 1 ? 2 : area.left(), area.top() <= kBandMargin + 1 ? 2 : area.top()),
                  QPointF(area.right() >= w - kBandMargin - 1 ? w - 2 : area.right(),
                          area.bottom() >= bottom - kBandMargin - 1 ? bottom - 2 : area.bottom()));
}

double CompareView::roomFit(const Frame &f) const
{
    const QRectF room = roomOf(f);
    return std::max(f.fit, std::min({1.0, room.width() / std::max(f.both.width(), 1.0), room.height() / std::max(f.both.height(), 1.0)}));
}

/// Where the fitted nodes leave room in the area, both panes move together (staying aligned), the
/// move that costs least: what the panes' edges cut, the bands left empty, the way off the middle.
std::pair<QPointF, double> CompareView::slack(const Frame &f, double scale, QPointF centre) const
{
    const QRectF shown((f.both.topLeft() - centre) * scale + f.area.center(), f.both.size() * scale);
    // What both panes draw where they draw it unmoved: the boxes and titles (weight: what cutting
    // them costs) and the frames (no weight: they only make the drawing larger).
    struct Drawn {
        const GraphCanvas *pane;
        QRectF r;
        double weight;
    };
    std::vector<Drawn> drawn;
    for (const GraphCanvas *c : {m_left, m_right}) {
        const QPointF at = (c == m_left ? centre : centre + f.shift) - f.area.center() / scale;
        const auto put = [&](const QRectF &scene, double weight) {
            drawn.push_back({c, QRectF((scene.topLeft() - at) * scale, scene.size() * scale), weight});
        };
        const auto &items = c->view().items;
        const auto beside = besideChanges(*c);
        for (size_t i = 0; i < items.size(); ++i)
            put(QRectF(items[i].x, items[i].y, items[i].w, items[i].h),
                c->diffOf(int(i)) != GraphCanvas::DiffMark::None ? kChangeCut
                    : beside[i]                                  ? kBesideCut
                                                                 : 1);
        for (const auto &fr : c->frames()) {
            put(fr.titlePlate(), kTitleCut);
            put(fr.rect, 0);
        }
    }
    // The room the fit leaves: what is fitted inside the area (clear of the margins), or up to
    // 2 px from the panes' edges where the area is at the margin, at a cost.
    const QRectF area = f.area, room = roomOf(f);
    const double x0 = area.left() - shown.left(), x1 = area.right() - shown.right();
    const double y0 = area.top() - shown.top(), y1 = area.bottom() - shown.bottom();
    const double X0 = std::min(x0, room.left() - shown.left()), X1 = std::max(x1, room.right() - shown.right());
    const double Y0 = std::min(y0, room.top() - shown.top()), Y1 = std::max(y1, room.bottom() - shown.bottom());
    const auto axis = [&](bool across, QPointF moved) {
        Axis out;
        out.soft0 = across ? x0 : y0;
        out.soft1 = across ? x1 : y1;
        for (const GraphCanvas *c : {m_left, m_right}) {
            const double end = drawingBottom(*c), e1 = across ? c->width() : end;
            Span drawing{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 0, e1};
            for (const Drawn &d : drawn) {
                const QRectF r = d.r.translated(moved);
                if (d.pane != c || (across ? r.bottom() <= 0 || r.top() >= end : r.right() <= 0 || r.left() >= c->width()))
                    continue; // another pane's, or beside this pane's drawing area
                const double lo = across ? r.left() : r.top(), hi = across ? r.right() : r.bottom();
                if (d.weight > 0)
                    out.spans.push_back({lo, hi, 0, e1, d.weight});
                drawing.lo = std::min(drawing.lo, lo);
                drawing.hi = std::max(drawing.hi, hi);
            }
            if (drawing.lo < drawing.hi)
                out.drawings.push_back(drawing);
        }
        return out;
    };
    // The moves down that cost least along that axis (and none), each with the move across that
    // is best with it (what is in view down decides what is cut at the sides): the pair whose
    // costs add up least.
    const double across = axis(true, {}).cheapest(X0, X1, 1).front().first;
    auto downs = axis(false, {across, 0}).cheapest(Y0, Y1, 6);
    downs.emplace_back(0, 0);
    std::pair<QPointF, double> best{{}, std::numeric_limits<double>::infinity()};
    for (const auto &down : downs) {
        const double dy = down.first;
        const auto [dx, cost] = axis(true, {0, dy}).cheapest(X0, X1, 1).front();
        if (const double total = cost + axis(false, {dx, 0}).cost(dy); total < best.second - 1e-9)
            best = {{dx, dy}, total};
    }
    return best;
}

} // namespace fxlens::views
