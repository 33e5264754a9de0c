// SPDX-License-Identifier: MIT
// What the Compare Versions tests measure on the panes, as the user sees them: the examples
// rewritten and compared, the changes shown whole and aligned, the boxes the panes' edges cut, the
// bands left empty.
#pragma once

#include "CompareView.h"
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "TestServices.h"

#include <QAction>
#include <QDir>
#include <QLabel>
#include <QtTest>

#include <set>

using namespace fxlens;
using views::CompareView;
using views::GraphCanvas;

namespace comparetest {

inline QString shots()
{
    QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
    return QStringLiteral(FXLENS_BUILD_DIR "/screenshots/");
}

/// An example (tangle4 unless named) with the engine run to its fixpoint (every pattern of the
/// preset, the default one unless named).
struct Rewritten {
    views::GraphDocument doc{testServices()};
    QString error;
    bool open(const QString &file = QStringLiteral("tangle4_fx.json"), const QString &preset = {})
    {
        if (!doc.open(QStringLiteral(FXLENS_EXAMPLES "/") + file, &error))
            return false;
        if (!preset.isEmpty())
            doc.history()->setPreset(preset);
        doc.history()->run();
        return doc.history()->historySize() > 1;
    }
    /// An example with Run's first `steps` steps (preset "all"), as `fxlens FILE --apply-steps N`
    /// takes them.
    bool applyFirst(const QString &file, int steps)
    {
        if (!doc.open(QStringLiteral(FXLENS_EXAMPLES "/") + file, &error))
            return false;
        doc.history()->setPreset(QStringLiteral("all"));
        doc.history()->run(size_t(steps));
        return doc.history()->historySize() == steps;
    }
    /// `file` with Run's first `steps` steps (all of them with preset "all" when negative),
    /// original vs the last version, "All changes" pressed when `all`; null on failure (`error`).
    std::unique_ptr<CompareView> compareAfter(const QString &file, int steps, bool all)
    {
        if (!(steps < 0 ? open(file, QStringLiteral("all")) : applyFirst(file, steps))) {
            error = error.isEmpty() ? QStringLiteral("no steps taken on ") + file : error;
            return nullptr;
        }
        auto v = compare();
        if (v && all)
            QTest::keyClick(v->left(), Qt::Key_A);
        return v;
    }
    /// Original vs version `b` (-1: the last), shown and active.
    std::unique_ptr<CompareView> compare(int b = -1)
    {
        std::unique_ptr<CompareView> v(views::compareVersions(doc, 0, b < 0 ? doc.history()->historySize() : b, nullptr, &error));
        if (!v)
            return v;
        v->setAttribute(Qt::WA_DeleteOnClose, false);
        v->show();
        v->activateWindow();
        return QTest::qWaitForWindowActive(v.get()) ? std::move(v) : nullptr;
    }
};

/// The items of a pane marked removed, added or changed.
inline std::vector<int> marked(const GraphCanvas *c)
{
    std::vector<int> out;
    for (size_t i = 0; i < c->view().items.size(); ++i)
        if (c->diffOf(int(i)) != GraphCanvas::DiffMark::None)
            out.push_back(int(i));
    return out;
}

/// Whether these nodes' items are on screen in the pane: inside it, clear of its legend and minimap.
inline bool inView(const GraphCanvas *c, const std::vector<const ir::Node *> &nodes, QString *why)
{
    for (const ir::Node *n : nodes) {
        const QRectF r = c->itemRect(c->itemOf(n));
        if (r.isEmpty() || !QRectF(c->rect()).contains(r) || r.intersects(c->legendRect()) || r.intersects(c->minimapRect())) {
            *why = QStringLiteral("%1 at %2,%3 %4×%5 in a %6×%7 pane")
                       .arg(QString::fromStdString(n->name()))
                       .arg(r.x())
                       .arg(r.y())
                       .arg(r.width())
                       .arg(r.height())
                       .arg(c->width())
                       .arg(c->height());
            return false;
        }
    }
    return true;
}

/// The item nearest a pane's centre that the other pane shows too (the same node, or the same
/// module's box), and its item there.
inline std::pair<int, int> centrePair(const GraphCanvas *from, const GraphCanvas *to)
{
    const QPointF centre = from->viewCentre();
    std::pair<int, int> best{-1, -1};
    double bestD = 1e300;
    const auto &tv = to->view();
    for (size_t i = 0; i < from->view().items.size(); ++i) {
        const auto &it = from->view().items[i];
        const double d = std::hypot(it.x + it.w / 2 - centre.x(), it.y + it.h / 2 - centre.y());
        if (d >= bestD)
            continue;
        int other = -1;
        if (it.node)
            other = to->itemOf(to->graph()->find(it.node->name()));
        else
            for (size_t k = 0; k < tv.items.size() && other < 0; ++k)
                if (tv.items[k].kind == layout::ViewItem::Kind::Module && tv.items[k].module == it.module && tv.items[k].call == it.call)
                    other = int(k);
        if (other >= 0) {
            best = {int(i), other};
            bestD = d;
        }
    }
    return best;
}

/// A scene rectangle of a pane where the pane draws it (widget coordinates).
inline QRectF onScreen(const GraphCanvas *c, const QRectF &scene)
{
    return QRectF((scene.topLeft() - c->viewCentre()) * c->scale() + QPointF(c->width() / 2.0, c->height() / 2.0),
                  scene.size() * c->scale());
}

/// The frames of a pane around any of these nodes (an expanded module holding one).
inline std::vector<const GraphCanvas::Frame *> framesAround(const GraphCanvas *c, const std::vector<const ir::Node *> &nodes)
{
    std::vector<const GraphCanvas::Frame *> out;
    for (const auto &f : c->frames())
        if (std::any_of(nodes.begin(), nodes.end(), [&](const ir::Node *n) {
                const auto &it = c->view().items[size_t(c->itemOf(n))];
                return f.rect.contains(QRectF(it.x, it.y, it.w, it.h));
            }))
            out.push_back(&f);
    return out;
}

/// Where a pane shows what it is fitted to (widget coordinates).
inline QRectF shownRect(const CompareView &v, bool inA)
{
    const GraphCanvas *c = inA ? v.left() : v.right();
    QRectF r;
    for (const ir::Node *n : v.shownNodes(inA))
        r = r.united(c->itemRect(c->itemOf(n)));
    return r;
}

/// What the panes are fitted to is the change shown: its changed nodes on each side (every change's
/// when none is current), or for a side without any one node drawn as itself, where the change is.
inline bool showsTheChange(const CompareView &v, QString *why)
{
    for (bool inA : {true, false}) {
        std::set<const ir::Node *> want;
        for (size_t k = 0; k < v.changes().size(); ++k)
            if (v.currentChange() < 0 || int(k) == v.currentChange())
                for (const ir::Node *n : inA ? v.changes()[k].a : v.changes()[k].b)
                    if ((inA ? v.left() : v.right())->itemOf(n) >= 0) // drawn (a constant nobody reads is not)
                        want.insert(n);
        const auto shown = v.shownNodes(inA);
        const GraphCanvas *c = inA ? v.left() : v.right();
        for (const ir::Node *n : shown)
            if (!want.count(n) && v.currentChange() >= 0 && !want.empty()) {
                *why = QStringLiteral("%1 is shown but not in the change").arg(QString::fromStdString(n->name()));
                return false;
            }
        for (const ir::Node *n : want)
            if (std::find(shown.begin(), shown.end(), n) == shown.end()) {
                *why = QStringLiteral("%1 is changed but not shown").arg(QString::fromStdString(n->name()));
                return false;
            }
        if (want.empty() && (shown.size() != 1 || c->view().items[size_t(c->itemOf(shown.front()))].node != shown.front())) {
            *why = QStringLiteral("a side without changes shows %1 nodes").arg(shown.size());
            return false;
        }
    }
    return true;
}

/// A node both versions have, drawn as itself (and `onScreen`) in both panes at the same place
/// (within 3 px across and down): what did not change lines up. Where no two such nodes line up
/// at any one placement (8 scene pixels apart at most: a rewrite that replaced everything
/// between the input and the output), the middles of the two sides of the change at one place.
inline bool sharedNodeAligned(const CompareView &v, QString *why, bool onScreen = true)
{
    const GraphCanvas *a = v.left(), *b = v.right();
    double best = 1e300;
    std::vector<QPointF> offsets; // of every node both draw, B's place less A's
    for (size_t i = 0; i < a->view().items.size(); ++i) {
        const ir::Node *n = a->view().items[i].node;
        const ir::Node *m = n ? b->graph()->find(n->name()) : nullptr;
        const int j = m && m->meta().modulePath() == n->meta().modulePath() ? b->itemOf(m) : -1;
        if (j < 0 || b->view().items[size_t(j)].node != m)
            continue;
        const QRectF ra = a->itemRect(int(i)), rb = b->itemRect(j);
        const QPointF d = ra.center() - QPointF(a->width() / 2.0, 0) - (rb.center() - QPointF(b->width() / 2.0, 0));
        offsets.push_back(d);
        if (onScreen && (!QRectF(a->rect()).contains(ra) || !QRectF(b->rect()).contains(rb)))
            continue;
        best = std::min(best, std::max(std::abs(d.x()), std::abs(d.y())));
    }
    if (best <= 3)
        return true;
    bool linesUp = false;
    for (size_t i = 0; i < offsets.size(); ++i)
        for (size_t j = i + 1; j < offsets.size(); ++j)
            linesUp =
                linesUp || std::max(std::abs(offsets[i].x() - offsets[j].x()), std::abs(offsets[i].y() - offsets[j].y())) < 8 * a->scale();
    const QPointF middles =
        shownRect(v, true).center() - QPointF(a->width() / 2.0, 0) - (shownRect(v, false).center() - QPointF(b->width() / 2.0, 0));
    if (!linesUp && middles.manhattanLength() <= 3)
        return true;
    *why += QStringLiteral("; no node on screen in both panes at one place (nearest %1 px apart)").arg(best);
    return false;
}

/// What a pane shows of the nodes it is fitted to: all of them, clear of the legend; or, when they
/// do not fit at CompareView::kReadableScale, at that zoom from their start (their top on screen,
/// with one of them).
inline bool wholeOrStart(const CompareView &v, const GraphCanvas *c, const std::vector<const ir::Node *> &nodes, QString *why)
{
    if (inView(c, nodes, why))
        return true;
    if (std::abs(c->scale() - CompareView::kReadableScale) > 1e-9)
        return false;
    QRectF r;
    bool one = false;
    for (const ir::Node *n : nodes) {
        r = r.united(c->itemRect(c->itemOf(n)));
        QString ignored;
        one = one || inView(c, {n}, &ignored);
    }
    return one && r.top() >= 0 && r.top() < c->height() / 4.0;
}

/// Both panes show the change at one zoom, a node both versions have at the same place in both.
/// `fitted`: and each side whole in its pane, clear of the legend, as large as the panes allow (the
/// two together span half of a pane's width or height, or the zoom is 1:1), never below the
/// readable zoom (what does not fit there is shown at it from its start).
inline bool aligned(const CompareView &v, bool fitted, QString *why)
{
    const QRectF a = shownRect(v, true), b = shownRect(v, false);
    const auto rect = [](const QRectF &r) {
        return QStringLiteral("%1,%2 %3×%4")
            .arg(r.x(), 0, 'f', 0)
            .arg(r.y(), 0, 'f', 0)
            .arg(r.width(), 0, 'f', 0)
            .arg(r.height(), 0, 'f', 0);
    };
    *why = QStringLiteral("change %1: A %2, B %3 in panes %4×%5 / %6×%7, zoom %8 / %9")
               .arg(v.currentChange())
               .arg(rect(a), rect(b))
               .arg(v.left()->width())
               .arg(v.left()->height())
               .arg(v.right()->width())
               .arg(v.right()->height())
               .arg(v.left()->scale())
               .arg(v.right()->scale());
    if (a.isEmpty() || b.isEmpty() || std::abs(v.left()->scale() - v.right()->scale()) > 1e-9 || !sharedNodeAligned(v, why, fitted))
        return false;
    if (!fitted)
        return true;
    if (v.left()->scale() < CompareView::kReadableScale - 1e-9)
        return false;
    QString detail;
    for (const GraphCanvas *c : {v.left(), v.right()})
        if (!wholeOrStart(v, c, v.shownNodes(c == v.left()), &detail)) {
            *why += QStringLiteral("; ") + detail;
            return false;
        }
    // What is fitted: the nodes and, when readable with them, the titles of the frames around them.
    QRectF ta = a, tb = b;
    for (const GraphCanvas *c : {v.left(), v.right()})
        for (const GraphCanvas::Frame *f : framesAround(c, v.shownNodes(c == v.left())))
            (c == v.left() ? ta : tb) |= onScreen(c, f->titlePlate());
    const QSizeF pane = v.left()->size();
    const QRectF both = ta.united(tb.translated((v.left()->width() - v.right()->width()) / 2.0, 0));
    return v.left()->scale() > 0.999 || std::abs(v.left()->scale() - CompareView::kReadableScale) < 1e-9 ||
        both.width() >= 0.5 * pane.width() || both.height() >= 0.5 * pane.height();
}

/// Every node a pane is fitted to whole inside it (clear of its legend and minimap), and the title
/// of every frame around one of them readable on screen.
inline bool changesWhole(const CompareView &v, QString *why)
{
    for (const GraphCanvas *c : {v.left(), v.right()}) {
        const auto nodes = v.shownNodes(c == v.left());
        QString detail;
        if (!inView(c, nodes, &detail)) {
            *why = QStringLiteral("%1: %2").arg(c == v.left() ? "A" : "B", detail);
            return false;
        }
        const QRectF pane = QRectF(c->rect()).adjusted(0, 0, 0, -std::max(0, c->height() - c->legendRect().top()));
        for (const GraphCanvas::Frame *f : framesAround(c, nodes)) {
            const QRectF title = onScreen(c, f->titlePlate());
            if (!pane.contains(title)) {
                *why = QStringLiteral("%1: the title of %2 at %3,%4 %5×%6 in a %7×%8 pane")
                           .arg(c == v.left() ? "A" : "B", QString::fromStdString(f->path))
                           .arg(title.x())
                           .arg(title.y())
                           .arg(title.width())
                           .arg(title.height())
                           .arg(c->width())
                           .arg(c->height());
                return false;
            }
        }
    }
    return true;
}

/// A pane's drawing area: the pane above its legend when the legend runs across it.
inline QRectF drawingArea(const GraphCanvas *c)
{
    const QRect legend = c->legendRect();
    return QRectF(0, 0, c->width(), legend.isEmpty() || legend.width() < c->width() / 2 ? c->height() : legend.top());
}

/// The boxes (nodes, modules' and stacks' boxes) an edge of a pane's drawing area cuts: partly in
/// it, partly out.
inline QStringList cutAtEdges(const GraphCanvas *c)
{
    QStringList out;
    const QRectF area = drawingArea(c);
    for (size_t i = 0; i < c->view().items.size(); ++i)
        if (const QRectF r = c->itemRect(int(i)); r.intersects(area) && !area.contains(r)) {
            const auto &it = c->view().items[i];
            out << QString::fromStdString(it.node ? it.node->name() : it.label);
        }
    return out;
}

/// The widest band of a pane's drawing area that the drawing (its boxes and frames) leaves empty
/// at one side beyond what its size leaves (half the room when it is smaller than the pane), as
/// a share of the pane, across or down: a quarter of the pane empty above a drawing that runs past
/// the bottom is 0.25, a short drawing in the middle of a tall pane 0.
inline double emptyBand(const GraphCanvas *c)
{
    QRectF drawing;
    for (size_t i = 0; i < c->view().items.size(); ++i)
        drawing |= c->itemRect(int(i));
    for (const auto &f : c->frames())
        drawing |= onScreen(c, f.rect);
    const QRectF area = drawingArea(c);
    const auto band = [](double lo, double hi, double e0, double e1) {
        const double gap = std::max({0.0, lo - e0, e1 - hi}), forced = std::max(0.0, (e1 - e0) - (hi - lo)) / 2;
        return (gap - forced) / (e1 - e0);
    };
    return std::max(band(drawing.left(), drawing.right(), area.left(), area.right()),
                    band(drawing.top(), drawing.bottom(), area.top(), area.bottom()));
}

inline QString positionText(const CompareView &v) { return v.findChild<QLabel *>(QStringLiteral("comparePosition"))->text(); }

/// A module box or a frame's title on screen in either pane (clear of the legend), double-clicked
/// as a user does: the module expands or folds in both panes.
inline bool toggleAModule(CompareView &v, QString *module)
{
    for (GraphCanvas *c : {v.left(), v.right()}) {
        const auto visible = [c](const QRectF &r) { return QRectF(c->rect()).contains(r) && !r.intersects(c->legendRect()); };
        // a box wider than the pane is still double-clicked at its centre
        const auto clickable = [c](const QRectF &r) {
            const QRectF centre(r.center() - QPointF(4, 4), QSizeF(8, 8));
            return r.height() >= 8 && QRectF(c->rect()).contains(centre) && !centre.intersects(c->legendRect());
        };
        for (size_t i = 0; i < c->view().items.size(); ++i)
            if (c->view().items[i].kind == layout::ViewItem::Kind::Module && !c->view().items[i].stacked &&
                clickable(c->itemRect(int(i)))) {
                *module = QString::fromStdString(c->view().items[i].module);
                QTest::mouseDClick(c, Qt::LeftButton, {}, c->itemRect(int(i)).center().toPoint());
                return v.left()->isExpanded(*module) && v.right()->isExpanded(*module);
            }
        for (const auto &f : c->frames()) {
            const QRectF title((f.titleRect().topLeft() - c->viewCentre()) * c->scale() + QPointF(c->width() / 2.0, c->height() / 2.0),
                               f.titleRect().size() * c->scale());
            if (visible(title) && title.height() >= 4) {
                *module = QString::fromStdString(f.path);
                QTest::mouseDClick(c, Qt::LeftButton, {}, title.center().toPoint());
                return !v.left()->isExpanded(*module) && !v.right()->isExpanded(*module);
            }
        }
    }
    return false;
}

inline QAction *actionWithKey(QWidget &w, const QKeySequence &key)
{
    for (QAction *a : w.findChildren<QAction *>())
        if (a->shortcut() == key)
            return a;
    return nullptr;
}

} // namespace comparetest
