// SPDX-License-Identifier: MIT
// Compare Versions, as the user sees it on a real rewrite history (tangle4, the engine run to its
// fixpoint): the difference by provenance, both panes opened on the changes at a readable zoom with
// their modules expanded, expansion / zoom / pan kept in step, Next / Previous change visiting every
// change in order, the panes placed to cut few boxes at their edges and leave no band empty that
// the drawing could fill, the diff colours in the legends, Esc closing the window, and the versions
// picked from the history (the chooser, a history row's "Compare with Version on Screen", a branch).
// Screenshots go to <build>/screenshots for a person to look at.
#include "CompareView.h"
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "TestServices.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QLayout>
#include <QListView>
#include <QPointer>
#include <QTimer>
#include <QtTest>

#include <set>

using namespace fxlens;
using views::CompareView;
using views::GraphCanvas;

namespace {

QString shots()
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
std::vector<int> marked(const GraphCanvas *c)
{
    std::vector<int> out;
    for (size_t i = 0; i < c->view().items.size(); ++i)
        if (c->diffOf(int(i)) != GraphCanvas::DiffMark::None)
            out.push_back(int(i));
    return out;
}

/// Whether these nodes' items are on screen in the pane: inside it, clear of its legend and minimap.
bool inView(const GraphCanvas *c, const std::vector<const ir::Node *> &nodes, QString *why)
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
std::pair<int, int> centrePair(const GraphCanvas *from, const GraphCanvas *to)
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
QRectF onScreen(const GraphCanvas *c, const QRectF &scene)
{
    return QRectF((scene.topLeft() - c->viewCentre()) * c->scale() + QPointF(c->width() / 2.0, c->height() / 2.0),
                  scene.size() * c->scale());
}

/// The frames of a pane around any of these nodes (an expanded module holding one).
std::vector<const GraphCanvas::Frame *> framesAround(const GraphCanvas *c, const std::vector<const ir::Node *> &nodes)
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
QRectF shownRect(const CompareView &v, bool inA)
{
    const GraphCanvas *c = inA ? v.left() : v.right();
    QRectF r;
    for (const ir::Node *n : v.shownNodes(inA))
        r = r.united(c->itemRect(c->itemOf(n)));
    return r;
}

/// What the panes are fitted to is the change shown: its changed nodes on each side (every change's
/// when none is current), or for a side without any one node drawn as itself, where the change is.
bool showsTheChange(const CompareView &v, QString *why)
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
bool sharedNodeAligned(const CompareView &v, QString *why, bool onScreen = true)
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
bool wholeOrStart(const CompareView &v, const GraphCanvas *c, const std::vector<const ir::Node *> &nodes, QString *why)
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
/// two together span 60 % of a pane's width or height, or the zoom is 1:1), never below the
/// readable zoom (what does not fit there is shown at it from its start).
bool aligned(const CompareView &v, bool fitted, QString *why)
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
        both.width() >= 0.6 * pane.width() || both.height() >= 0.6 * pane.height();
}

/// Every node a pane is fitted to whole inside it (clear of its legend and minimap), and the title
/// of every frame around one of them readable on screen.
bool changesWhole(const CompareView &v, QString *why)
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
QRectF drawingArea(const GraphCanvas *c)
{
    const QRect legend = c->legendRect();
    return QRectF(0, 0, c->width(), legend.isEmpty() || legend.width() < c->width() / 2 ? c->height() : legend.top());
}

/// The boxes (nodes, modules' and stacks' boxes) an edge of a pane's drawing area cuts: partly in
/// it, partly out.
QStringList cutAtEdges(const GraphCanvas *c)
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
double emptyBand(const GraphCanvas *c)
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

QString positionText(const CompareView &v) { return v.findChild<QLabel *>(QStringLiteral("comparePosition"))->text(); }

/// A module box or a frame's title on screen in either pane (clear of the legend), double-clicked
/// as a user does: the module expands or folds in both panes.
bool toggleAModule(CompareView &v, QString *module)
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

QAction *actionWithKey(QWidget &w, const QKeySequence &key)
{
    for (QAction *a : w.findChildren<QAction *>())
        if (a->shortcut() == key)
            return a;
    return nullptr;
}

} // namespace

class TestCompare : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void differenceByProvenance_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::newRow("tangle4") << QStringLiteral("tangle4_fx.json") << QString();
        // Its rewrites give freed names to new nodes in other modules ("linear_20").
        QTest::newRow("bert") << QStringLiteral("bert_base_dynamo.json.gz") << QStringLiteral("all");
    }

    /// The difference by provenance (removed, added, changed nodes by name in their module), the
    /// document left where it was, and a version past the history refused.
    void differenceByProvenance()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        Rewritten r;
        QVERIFY2(r.open(file, preset), qPrintable(r.error));
        auto *h = r.doc.history();
        const int last = h->historySize();
        std::set<std::pair<std::string, std::string>> after;
        for (const ir::Node *n = r.doc.graph()->first(); n; n = n->next())
            after.insert({n->name(), n->meta().modulePath()});
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        size_t removed = 0, added = 0;
        for (const ir::Node *n = v->left()->graph()->first(); n; n = n->next())
            removed += !after.count({n->name(), n->meta().modulePath()});
        added = after.size() - (v->left()->graph()->size() - removed);
        QCOMPARE(v->removed(), removed);
        QCOMPARE(v->added(), added);
        QVERIFY(v->removed() + v->added() + v->changed() > 0);
        QCOMPARE(h->version(), last); // the document is where it was
        size_t inChanges = 0;
        for (const auto &c : v->changes())
            inChanges += c.a.size() + c.b.size();
        QCOMPARE(inChanges, v->removed() + v->added() + 2 * v->changed()); // every change in one region
        QVERIFY(!views::compareVersions(r.doc, 0, last + 5, nullptr, &r.error));
        QVERIFY(r.error.contains(QStringLiteral("0 to %1").arg(last)));
    }

    /// On open both panes show the changed nodes (no collapsed module holds them), inside the pane
    /// and clear of the legend and minimap, all of them at a readable zoom or else the first
    /// change; the minimap is never larger than the drawing it maps.
    void opensFittedOnChanges()
    {
        Rewritten r;
        QVERIFY2(r.open(), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        QVERIFY(v->currentChange() == 0 || v->left()->scale() >= CompareView::kReadableScale);
        for (const GraphCanvas *c : {v->left(), v->right()}) {
            const auto items = marked(c);
            QVERIFY(!items.empty());
            std::vector<const ir::Node *> shown;
            // Every change, or (when they do not all fit at a readable zoom) where the first starts.
            for (const auto &ch : v->changes()) {
                const auto &side = c == v->left() ? ch.a : ch.b;
                if (v->currentChange() < 0)
                    shown.insert(shown.end(), side.begin(), side.end());
                else if (shown.empty() && !side.empty())
                    shown.push_back(side.front());
            }
            for (const ir::Node *n : shown) // a node, or a stack's box standing for a change in its members
                QVERIFY2(c->view().items[size_t(c->itemOf(n))].kind == layout::ViewItem::Kind::Node ||
                             c->view().items[size_t(c->itemOf(n))].stacked,
                         n->name().c_str());
            QString why;
            QVERIFY2(inView(c, shown, &why), qPrintable(why));
            const QRectF drawing = QRectF(c->itemRect(0).topLeft() - QPointF(c->view().items[0].x, c->view().items[0].y) * c->scale(),
                                          QSizeF(c->view().width, c->view().height) * c->scale())
                                       .intersected(QRectF(c->rect()));
            const QRect mr = c->minimapRect();
            QVERIFY(mr.isEmpty() || mr.width() * mr.height() < drawing.width() * drawing.height() / 4);
        }
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_tangle4_open.png")));
    }

    /// Unstacking a stack in one pane (tangle50 0 ↔ 3: blocks.0–… in both) unstacks it in the other.
    void unstackSynced()
    {
        Rewritten r;
        QVERIFY2(r.applyFirst(QStringLiteral("tangle50_torch.json"), 3), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        GraphCanvas *a = v->left(), *b = v->right();
        const auto heads = [](const GraphCanvas *c) {
            std::set<std::string> out;
            for (const auto &st : c->stacks())
                out.insert(st.members.front());
            return out;
        };
        std::string first;
        for (const std::string &h : heads(a))
            if (heads(b).count(h))
                first = h;
        QVERIFY(!first.empty());
        for (const auto &[from, to] : {std::pair{a, b}, std::pair{b, a}}) {
            if (!heads(from).count(first))
                continue; // unstacked in both already
            for (size_t i = 0; i < from->stacks().size(); ++i)
                if (from->stacks()[i].members.front() == first)
                    from->unstack(int(i));
            QVERIFY(!heads(from).count(first) && !heads(to).count(first));
            const auto boxOf = [&](const GraphCanvas *c) {
                return std::any_of(c->view().items.begin(), c->view().items.end(),
                                   [&](const auto &it) { return it.module == first && !it.stacked; });
            };
            QVERIFY(boxOf(from) && boxOf(to));
        }
    }

    /// Expanding a module in A expands it in B; on every change (no one change to keep aligned),
    /// zooming and panning A shows the node at A's centre at B's centre, at the same zoom, and the
    /// other way round.
    void expansionAndZoomSynced()
    {
        Rewritten r;
        QVERIFY2(r.open(), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        GraphCanvas *a = v->left(), *b = v->right();
        // A collapsed module box on screen (at the first change), double-clicked as a user does:
        // the other pane expands it too.
        auto boxOnScreen = [](const GraphCanvas *c) {
            for (size_t i = 0; i < c->view().items.size(); ++i)
                if (c->view().items[i].kind == layout::ViewItem::Kind::Module && !c->view().items[i].stacked &&
                    QRectF(c->rect()).contains(c->itemRect(int(i))) && !c->itemRect(int(i)).intersects(c->legendRect()))
                    return int(i);
            return -1;
        };
        GraphCanvas *clicked = boxOnScreen(a) >= 0 ? a : b, *other = clicked == a ? b : a;
        const int box = boxOnScreen(clicked);
        QVERIFY(box >= 0);
        const QString module = QString::fromStdString(clicked->view().items[size_t(box)].module);
        QVERIFY(!other->isExpanded(module));
        QTest::mouseDClick(clicked, Qt::LeftButton, {}, clicked->itemRect(box).center().toPoint());
        QVERIFY(clicked->isExpanded(module));
        QVERIFY(other->isExpanded(module));
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_after_expand.png")));
        v->fitToChanges();
        a->zoomBy(1.6, QPointF(a->width() / 2.0, a->height() / 2.0));
        QTest::mouseMove(a, QPoint(200, 200));
        QTest::mousePress(a, Qt::LeftButton, {}, QPoint(200, 200));
        QTest::mouseMove(a, QPoint(260, 150));
        QTest::mouseRelease(a, Qt::LeftButton, {}, QPoint(260, 150));
        for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
            if (from == b) // and the other way round
                b->zoomBy(0.8, QPointF(100, 100));
            QCOMPARE(to->scale(), from->scale());
            const auto [i, j] = centrePair(from, to);
            QVERIFY(i >= 0 && j >= 0);
            const QPointF offFrom = from->itemRect(i).center() - QPointF(from->width() / 2.0, from->height() / 2.0);
            const QPointF offTo = to->itemRect(j).center() - QPointF(to->width() / 2.0, to->height() / 2.0);
            QVERIFY2((offFrom - offTo).manhattanLength() < 2,
                     qPrintable(QStringLiteral("%1: %2,%3 vs %4,%5")
                                    .arg(QString::fromStdString(from->view().items[size_t(i)].label))
                                    .arg(offFrom.x())
                                    .arg(offFrom.y())
                                    .arg(offTo.x())
                                    .arg(offTo.y())));
        }
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_after_zoom.png")));
    }

    void alignedOpenNextExpandZoom_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::newRow("tangle4") << QStringLiteral("tangle4_fx.json") << QString();
        QTest::newRow("tangle50") << QStringLiteral("tangle50_torch.json") << QStringLiteral("all");
        QTest::newRow("bert") << QStringLiteral("bert_base_dynamo.json.gz") << QStringLiteral("all");
    }

    /// What the user sees of the change shown: both panes fitted to it, clear of the legends, with
    /// it at the same place in both, as the window opens, after the first N (both panes move), after
    /// expanding or folding a module (in both panes), after Shift+N, and still aligned after zooming.
    void alignedOpenNextExpandZoom()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        Rewritten r;
        QVERIFY2(r.open(file, preset), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        const QString name = QString::fromLatin1(QTest::currentDataTag());
        QString why;
        QVERIFY2(showsTheChange(*v, &why), qPrintable(why));
        QVERIFY2(aligned(*v, true, &why), qPrintable(QStringLiteral("open: ") + why));
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_%1_open.png").arg(name)));
        const int n = int(v->changes().size());
        const int first = v->currentChange();
        QTest::keyClick(v->left(), Qt::Key_N);
        QCOMPARE(v->currentChange(), n == 1 ? 0 : (first + 1) % n);
        QVERIFY2(showsTheChange(*v, &why), qPrintable(why));
        QVERIFY2(aligned(*v, true, &why), qPrintable(QStringLiteral("first N: ") + why));
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_%1_next.png").arg(name)));
        QString module;
        QVERIFY2(toggleAModule(*v, &module), qPrintable(module));
        QVERIFY2(aligned(*v, true, &why), qPrintable(QStringLiteral("after toggling %1: %2").arg(module, why)));
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_%1_expand.png").arg(name)));
        for (const auto mod : {Qt::ShiftModifier, Qt::NoModifier}) {
            QTest::keyClick(v->right(), Qt::Key_N, mod);
            QVERIFY2(aligned(*v, true, &why), qPrintable(QStringLiteral("N / Shift+N: ") + why));
        }
        if (v->currentChange() < 0)
            QTest::keyClick(v->left(), Qt::Key_N); // zooming keeps a change aligned
        QTest::keyClick(v->left(), Qt::Key_Plus);
        QCOMPARE(v->right()->scale(), v->left()->scale());
        QVERIFY2(aligned(*v, false, &why), qPrintable(QStringLiteral("after zooming A: ") + why));
        QTest::keyClick(v->right(), Qt::Key_Minus);
        QVERIFY2(aligned(*v, false, &why), qPrintable(QStringLiteral("after zooming B: ") + why));
    }

    void opensOnFirstChangeReadable_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("version");
        QTest::newRow("tangle4") << QStringLiteral("tangle4_fx.json") << QString() << -1;
        QTest::newRow("tangle50_0v3") << QStringLiteral("tangle50_torch.json") << QStringLiteral("all") << 3;
        QTest::newRow("tangle50_0vlast") << QStringLiteral("tangle50_torch.json") << QStringLiteral("all") << -1;
    }

    /// Every compare opens on change 1 ("change 1 of N"), though the last one was left on "All
    /// changes", at a readable zoom, a node both versions have at one place in both panes.
    void opensOnFirstChangeReadable()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        QFETCH(int, version);
        Rewritten r;
        QVERIFY2(r.open(file, preset), qPrintable(r.error));
        for (int round = 0; round < 2; ++round) {
            auto v = r.compare(version);
            QVERIFY2(v, qPrintable(r.error));
            QCOMPARE(v->currentChange(), 0);
            QVERIFY2(positionText(*v).startsWith(QStringLiteral("change 1 of")), qPrintable(positionText(*v)));
            QVERIFY2(v->left()->scale() >= CompareView::kReadableScale - 1e-9, qPrintable(QString::number(v->left()->scale())));
            QString why;
            QVERIFY2(aligned(*v, true, &why), qPrintable(why));
            QVERIFY(v->grab().save(shots() + QStringLiteral("compare_%1_change1.png").arg(QString::fromLatin1(QTest::currentDataTag()))));
            QTest::keyClick(v->left(), Qt::Key_A); // the window is left on "All changes"
            QCOMPARE(v->currentChange(), -1);
        }
    }

    void allChangesReadableAndAligned_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("version");
        QTest::addColumn<bool>("fits"); // every change fits at a readable zoom in 700 px panes
        QTest::newRow("tangle4") << QStringLiteral("tangle4_fx.json") << QString() << -1 << false;
        QTest::newRow("tangle50_0v3") << QStringLiteral("tangle50_torch.json") << QStringLiteral("all") << 3 << true;
        QTest::newRow("tangle50_0vlast") << QStringLiteral("tangle50_torch.json") << QStringLiteral("all") << -1 << true;
        QTest::newRow("bert") << QStringLiteral("bert_base_dynamo.json.gz") << QStringLiteral("all") << -1 << false;
    }

    /// "All changes" (A), from any change shown: both panes at one zoom, never below the readable
    /// one, a node both versions have at one place in both; every changed node on screen in both
    /// panes, clear of the legends, when they fit at that zoom; else that zoom from the first change
    /// (its nodes on screen, or its start), and the position label says N / Shift+N step through the rest.
    void allChangesReadableAndAligned()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        QFETCH(int, version);
        QFETCH(bool, fits);
        Rewritten r;
        QVERIFY2(r.open(file, preset), qPrintable(r.error));
        auto v = r.compare(version);
        QVERIFY2(v, qPrintable(r.error));
        QTest::keyClick(v->left(), Qt::Key_N);
        QTest::keyClick(v->left(), Qt::Key_A);
        QCOMPARE(v->currentChange(), -1);
        QCOMPARE(v->right()->scale(), v->left()->scale());
        QVERIFY2(v->left()->scale() >= CompareView::kReadableScale - 1e-9, qPrintable(QString::number(v->left()->scale())));
        QString why;
        QVERIFY2(sharedNodeAligned(*v, &why), qPrintable(why));
        bool whole = true;
        for (const GraphCanvas *c : {v->left(), v->right()})
            whole = whole && inView(c, v->shownNodes(c == v->left()), &why);
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_%1_all_changes.png").arg(QString::fromLatin1(QTest::currentDataTag()))));
        QCOMPARE(whole, fits);
        const bool said = positionText(*v).contains(QStringLiteral("more than one screen"));
        QCOMPARE(said, !whole);
        // The header stays one line, with the position's note whole.
        const auto *summary = v->findChild<QLabel *>(QStringLiteral("compareSummary"));
        const auto *position = v->findChild<QLabel *>(QStringLiteral("comparePosition"));
        v->layout()->activate(); // as the window's event loop does before it paints
        QVERIFY2(position->width() >= position->sizeHint().width(), qPrintable(QString::number(position->width())));
        QVERIFY2(summary->heightForWidth(summary->width()) < 2 * summary->fontMetrics().lineSpacing(), qPrintable(summary->text()));
        if (whole)
            return;
        QCOMPARE(v->left()->scale(), CompareView::kReadableScale);
        for (const GraphCanvas *c : {v->left(), v->right()}) {
            std::vector<const ir::Node *> first;
            for (const ir::Node *n : c == v->left() ? v->changes().front().a : v->changes().front().b)
                if (c->itemOf(n) >= 0)
                    first.push_back(n);
            QVERIFY2(wholeOrStart(*v, c, first, &why), qPrintable(why));
        }
    }

    void stepsByHandShowChangesWhole_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("steps"); // the first candidate applied that many times (-1: preset "all" to its fixpoint)
        QTest::addColumn<bool>("all");  // "All changes", else the first change as the window opens
        QTest::addColumn<int>("next");  // then "Next change" pressed that many times
        QTest::newRow("tangle50_0v3_all") << QStringLiteral("tangle50_torch.json") << 3 << true << 0;
        QTest::newRow("tangle50_0v3_open") << QStringLiteral("tangle50_torch.json") << 3 << false << 0;
        QTest::newRow("tangle4_0v3_open") << QStringLiteral("tangle4_fx.json") << 3 << false << 0;
        QTest::newRow("tangle4_0v3_change2") << QStringLiteral("tangle4_fx.json") << 3 << false << 1;
        QTest::newRow("tangle4_0v3_change3") << QStringLiteral("tangle4_fx.json") << 3 << false << 2;
        QTest::newRow("tangle4_0v3_change4") << QStringLiteral("tangle4_fx.json") << 3 << false << 3;
        QTest::newRow("tangle4_0v3_all") << QStringLiteral("tangle4_fx.json") << 3 << true << 0;
        QTest::newRow("tangle50_0vlast_open") << QStringLiteral("tangle50_torch.json") << -1 << false << 0;
        QTest::newRow("bert_0vlast_open") << QStringLiteral("bert_base_dynamo.json.gz") << -1 << false << 0;
    }

    /// Versions reached as the user reaches them (`--apply-steps N`, or F5), compared: every changed
    /// node shown whole in both panes, clear of the legends, the frames around them with their
    /// titles on screen, no node both versions draw whole in one pane and cut in the other, and
    /// nothing cut at the panes' top; or, when "All changes" does not fit at the readable zoom,
    /// the note that says so.
    void stepsByHandShowChangesWhole()
    {
        QFETCH(QString, file);
        QFETCH(int, steps);
        QFETCH(bool, all);
        QFETCH(int, next);
        Rewritten r;
        QVERIFY2(steps < 0 ? r.open(file, QStringLiteral("all")) : r.applyFirst(file, steps), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        if (all)
            QTest::keyClick(v->left(), Qt::Key_A);
        for (int k = 0; k < next; ++k)
            QTest::keyClick(v->left(), Qt::Key_N);
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_%1.png").arg(QString::fromLatin1(QTest::currentDataTag()))));
        QString why;
        QVERIFY2(v->left()->scale() >= CompareView::kReadableScale - 1e-9, qPrintable(QString::number(v->left()->scale())));
        QVERIFY2(aligned(*v, false, &why), qPrintable(why));
        if (all && positionText(*v).contains(QStringLiteral("more than one screen")))
            return;
        QVERIFY2(changesWhole(*v, &why), qPrintable(why));
        // Nothing cut at the top; at the sides, no node in a diff colour (of any change: cut, it
        // reads as the change cut).
        for (const GraphCanvas *c : {v->left(), v->right()})
            for (size_t i = 0; i < c->view().items.size(); ++i) {
                const QRectF rc = c->itemRect(int(i));
                const auto &it = c->view().items[i];
                const QString name = QString::fromStdString(it.node ? it.node->name() : it.module);
                const bool module = it.kind == layout::ViewItem::Kind::Module;
                QVERIFY2(!(rc.top() < 0 && rc.bottom() > 0) || module, qPrintable(name + QStringLiteral(" cut at the top")));
                const QRect legend = c->legendRect();
                const int bottom = legend.isEmpty() || legend.width() < c->width() / 2 ? c->height() : legend.top();
                if (rc.bottom() <= 0 || rc.top() >= bottom || c->diffOf(int(i)) == GraphCanvas::DiffMark::None)
                    continue;
                QVERIFY2(!(rc.left() < 0 && rc.right() > 0) && !(rc.left() < c->width() && rc.right() > c->width()),
                         qPrintable(QStringLiteral("%1 cut at a side of %2").arg(name, c == v->left() ? "A" : "B")));
            }
    }

    void placedToCutFewAndFillPanes_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("steps"); // as in stepsByHandShowChangesWhole
        QTest::addColumn<bool>("all");
        QTest::addColumn<int>("cuts"); // the most boxes cut at the edges of both panes together
        // Fitted, the drawing runs past the bottom and the right, its top a quarter of the panes
        // down, with getitem_50 and blocks.3.norm cut at B's right edge: x near the top, the
        // changes after it whole below, the boxes at B's right whole.
        QTest::newRow("tangle4_0v3_open") << QStringLiteral("tangle4_fx.json") << 3 << false << 2;
        // The stack box left of blocks.49 (blocks.0–48 ×49), cut in both panes when fitted, is
        // drawn about 150 px further left in A than in B (A's blocks.49 is wider): whole in both
        // it needs a zoom below the readable one, and whole in B with A's out of view cannot be,
        // so one pane cuts it.
        QTest::newRow("tangle50_0v3_all") << QStringLiteral("tangle50_torch.json") << 3 << true << 1;
        QTest::newRow("tangle50_aten_0v3_all") << QStringLiteral("tangle50_aten.json") << 3 << true << 1;
        // Nothing in A lines up with B but the input and the output: A's six boxes in the middle
        // of its pane, not at its bottom.
        QTest::newRow("tangle50_0vlast_open") << QStringLiteral("tangle50_torch.json") << -1 << false << 0;
    }

    /// Fitted to the change(s), both panes placed so that the edges cut few of the boxes around
    /// them (each whole in view or out of it) and no pane has a band empty that the drawing could
    /// fill (a tenth of the pane at most), the changes still whole, at one zoom and aligned.
    void placedToCutFewAndFillPanes()
    {
        QFETCH(QString, file);
        QFETCH(int, steps);
        QFETCH(bool, all);
        QFETCH(int, cuts);
        Rewritten r;
        QVERIFY2(steps < 0 ? r.open(file, QStringLiteral("all")) : r.applyFirst(file, steps), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        if (all)
            QTest::keyClick(v->left(), Qt::Key_A);
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_placed_%1.png").arg(QString::fromLatin1(QTest::currentDataTag()))));
        QString why;
        QVERIFY2(changesWhole(*v, &why), qPrintable(why));
        QVERIFY2(aligned(*v, false, &why), qPrintable(why));
        const QStringList cutA = cutAtEdges(v->left()), cutB = cutAtEdges(v->right());
        const double emptyA = emptyBand(v->left()), emptyB = emptyBand(v->right());
        QVERIFY2(cutA.size() + cutB.size() <= cuts && emptyA <= 0.1 && emptyB <= 0.1,
                 qPrintable(QStringLiteral("cut in A: %1; in B: %2; empty band: A %3, B %4 of the pane")
                                .arg(cutA.join(QStringLiteral(", ")), cutB.join(QStringLiteral(", ")))
                                .arg(emptyA, 0, 'f', 2)
                                .arg(emptyB, 0, 'f', 2)));
    }

    /// N / F8 visit every change in order, each on screen in both panes, fitted and aligned; Shift+N
    /// goes back; both wrap around.
    void nextPreviousVisitEveryChange()
    {
        Rewritten r;
        QVERIFY2(r.open(), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        const int n = int(v->changes().size());
        QVERIFY(n > 1);
        const int start = v->currentChange(); // -1: every change on screen; else the one shown
        for (int k = 0; k < n; ++k) {
            QTest::keyClick(v->left(), k % 2 ? Qt::Key_F8 : Qt::Key_N);
            QCOMPARE(v->currentChange(), (start + 1 + k) % n);
            QString why;
            QVERIFY2(aligned(*v, true, &why), qPrintable(why));
            for (const GraphCanvas *pane : {v->left(), v->right()})
                QVERIFY2(wholeOrStart(*v, pane, v->shownNodes(pane == v->left()), &why),
                         qPrintable(QStringLiteral("change %1: %2").arg(k).arg(why)));
        }
        v->showChange(n - 1);
        QTest::keyClick(v->left(), Qt::Key_N); // after the last, the first
        QCOMPARE(v->currentChange(), 0);
        QTest::keyClick(v->right(), Qt::Key_N, Qt::ShiftModifier); // before the first, the last
        QCOMPARE(v->currentChange(), n - 1);
        QTest::keyClick(v->right(), Qt::Key_F8, Qt::ShiftModifier);
        QCOMPARE(v->currentChange(), n - 2);
    }

    /// Each pane's legend shows the removed, added and changed colours (as drawn on screen).
    void legendHasDiffColours()
    {
        Rewritten r;
        QVERIFY2(r.open(), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        for (GraphCanvas *c : {v->left(), v->right()}) {
            const QImage shot = c->grab().toImage();
            const QRect legend = c->legendRect();
            QVERIFY(!legend.isEmpty());
            for (auto d : {GraphCanvas::DiffMark::Removed, GraphCanvas::DiffMark::Added, GraphCanvas::DiffMark::Changed}) {
                const QRgb want = GraphCanvas::diffColour(d, false).rgb();
                int pixels = 0;
                for (int y = legend.top(); y <= legend.bottom(); ++y)
                    for (int x = legend.left(); x <= legend.right(); ++x)
                        pixels += shot.pixel(x, y) == want;
                QVERIFY2(pixels >= 50, qPrintable(QStringLiteral("%1 pixels of %2").arg(pixels).arg(QColor(want).name())));
            }
        }
    }

    void escCloses()
    {
        Rewritten r;
        QVERIFY2(r.open(), qPrintable(r.error));
        QPointer<CompareView> v = views::compareVersions(r.doc, 0, r.doc.history()->historySize(), nullptr, &r.error);
        QVERIFY(v);
        v->show();
        v->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(v));
        QTest::keyClick(v->right(), Qt::Key_Escape);
        QTRY_VERIFY(v.isNull()); // closed, and deleted as it closed
    }

    /// Ctrl+D lists the history's versions with their steps and its branches: picking two shows
    /// them; a history row's "Compare with Version on Screen" shows it beside the current version;
    /// a branch's last version can be picked, and the history is as it was afterwards.
    void chooseVersionsFromHistory()
    {
        views::MainWindow w(testServices());
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        views::RewriteDebugger *d = w.debugger();
        QVERIFY(d->applySelected() && d->applySelected() && d->applySelected());
        QVERIFY(d->undo());
        QVERIFY(d->applySelected()); // version 3 of 3 again, the old step 3 kept as a branch
        QCOMPARE(d->branchCount(), 1);
        QAction *compare = actionWithKey(w, QKeySequence(Qt::CTRL | Qt::Key_D));
        QVERIFY(compare);
        auto pick = [&](int rowA, int rowB) {
            QTimer::singleShot(0, &w, [=] {
                auto *chooser = qobject_cast<views::CompareChooser *>(QApplication::activeModalWidget());
                QVERIFY(chooser);
                QCOMPARE(chooser->listA()->model()->rowCount(), 4 + 1); // 0..3 and the branch
                QCOMPARE(chooser->b().version, 3);
                QCOMPARE(chooser->a().version, 0);
                chooser->listA()->setCurrentIndex(chooser->listA()->model()->index(rowA, 0));
                chooser->listB()->setCurrentIndex(chooser->listB()->model()->index(rowB, 0));
                chooser->grab().save(shots() + QStringLiteral("compare_chooser.png"));
                chooser->accept();
            });
            compare->trigger();
            auto views = w.findChildren<CompareView *>();
            return views.isEmpty() ? QString() : views.back()->windowTitle();
        };
        const QString title = pick(1, 2);
        QVERIFY2(title.contains(QStringLiteral("step 1 (")) && title.contains(QStringLiteral("step 2 (")), qPrintable(title));
        const QString branch = pick(4, 3);
        QVERIFY2(branch.contains(QStringLiteral("branch from version 2")) && branch.contains(QStringLiteral("step 3 (")),
                 qPrintable(branch));
        QCOMPARE(d->version(), 3);
        QCOMPARE(d->historySize(), 3);
        QCOMPARE(d->branchCount(), 1);
        // A history row's context action: that version beside the one on screen.
        qDeleteAll(w.findChildren<CompareView *>());
        d->historyList()->setCurrentIndex(d->historyList()->model()->index(0, 0));
        auto *row = d->historyList()->findChild<QAction *>(QStringLiteral("compareWithCurrent"));
        QVERIFY(row && d->historyList()->actions().contains(row));
        row->trigger();
        const auto opened = w.findChildren<CompareView *>();
        QCOMPARE(opened.size(), 1);
        QVERIFY2(opened.front()->windowTitle().startsWith(QStringLiteral("Compare: original ↔ step 3")),
                 qPrintable(opened.front()->windowTitle()));
    }
};

QTEST_MAIN(TestCompare)
#include "tst_Compare.moc"
