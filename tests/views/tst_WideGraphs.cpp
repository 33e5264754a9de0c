// SPDX-License-Identifier: MIT
// Wide graphs at first sight: tangle50's 50 identical blocks open stacked as one box with the
// input and the output in view, readable, the first candidate outlined in it; Fit never makes a
// sliver; unstacking gives the 50 boxes back; after a full run, the batched ops are drawn in their
// blocks' range, not in blocks.0. Saves screenshots of the window.
#include "MainWindow.h"
#include "SlowWait.h"
#include "TestServices.h"

#include "GraphCanvas.h"
#include "RewriteDebugger.h"
#include "Selection.h"
#include "io/GraphJson.h"
#include "layout/Layered.h"

#include <QDir>
#include <QtTest>

using fxlens::views::GraphCanvas;
using fxlens::views::MainWindow;
using Kind = fxlens::layout::ViewItem::Kind;

namespace {

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }

QString shots()
{
    QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
    return QStringLiteral(FXLENS_BUILD_DIR "/screenshots/");
}

/// Text is drawn from this scale up (GraphCanvas paints names once 32 px boxes are 14 px tall).
constexpr double kLegible = 14.0 / 32.0;

/// Every item of the canvas' view lies inside the canvas.
bool allInView(const GraphCanvas *c)
{
    for (size_t i = 0; i < c->view().items.size(); ++i)
        if (!c->rect().contains(c->itemRect(int(i)).toAlignedRect()))
            return false;
    return true;
}

/// The item outlined as the candidate's anchor (on it, or on the box that holds it), -1 for none.
int anchorItem(const GraphCanvas *c)
{
    for (size_t i = 0; i < c->view().items.size(); ++i)
        if (c->highlightOf(int(i)) == 2)
            return int(i);
    return -1;
}

int itemLabelled(const GraphCanvas *c, const std::string &label)
{
    for (size_t i = 0; i < c->view().items.size(); ++i)
        if (c->view().items[i].label == label)
            return int(i);
    return -1;
}

} // namespace

class TestWideGraphs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    /// tangle50 at the default window size (and a larger one): the input, the split, the stacked
    /// blocks, the cat and the output all in view, text legible; the first candidate (preset all)
    /// is outlined and in view.
    void firstScreenIsAnOverview()
    {
        for (const QSize size : {QSize(1200, 800), QSize(1600, 1000)}) {
            MainWindow w(testServices());
            w.resize(size);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QVERIFY(w.openFile(example("tangle50_torch.json")));
            GraphCanvas *c = w.canvas();
            QTRY_VERIFY_WITH_TIMEOUT(w.debugger()->candidateCount() > 0, kSlowWait);
            int anchor = -1;
            QTRY_VERIFY_WITH_TIMEOUT((anchor = anchorItem(c)) >= 0, kSlowWait);
            QVERIFY(w.grab().save(shots() + QStringLiteral("tangle50_first_screen_%1x%2.png").arg(size.width()).arg(size.height())));
            QVERIFY2(c->scale() >= kLegible, qPrintable(QString::number(c->scale())));
            QVERIFY(allInView(c));
            QVERIFY(itemLabelled(c, "l_x_") >= 0 && itemLabelled(c, "output") >= 0 && itemLabelled(c, "split") >= 0);
            // Every block is in view: in a stack's box, or (the candidate's) expanded on its own.
            size_t blocks = 0;
            for (const auto &it : c->view().items)
                blocks += it.kind == Kind::Module ? std::max<size_t>(it.stacked, 1) : 0;
            blocks += c->frames().size();
            QCOMPARE(blocks, size_t(50));
            QVERIFY(c->rect().contains(c->itemRect(anchor).toAlignedRect()));
            // The anchor hidden in the stack is named on it, beside the box's title, inside the box.
            const auto &box = c->view().items[size_t(anchor)];
            const QString name = w.selection()->currentNode();
            QVERIFY(box.kind == Kind::Module && !name.isEmpty());
            const auto [note, at] = c->anchorNote(anchor);
            QCOMPARE(note,
                     QStringLiteral("%1 in %2")
                         .arg(name, QString::fromStdString(fxlens::layout::displayModules(w.selection()->find(name)).back().path)));
            QVERIFY(QRectF(box.x, box.y, box.w, box.h).contains(at));
        }
    }

    /// tangle200's ATen export opens with its profile, which tints the stack box red by its device
    /// time: the candidate's note on it stays readable (on a light plate, clear of the mark's dot),
    /// and the legend says what the red tint means.
    void candidateNoteReadableOnTint()
    {
        MainWindow w(testServices());
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(example("tangle200_aten.json.gz")));
        GraphCanvas *c = w.canvas();
        int anchor = -1;
        QTRY_VERIFY_WITH_TIMEOUT((anchor = anchorItem(c)) >= 0, kSlowWait);
        QVERIFY2(c->heatOf(anchor) > 0.5, qPrintable(QString::number(c->heatOf(anchor)))); // tinted red
        const auto rows = c->legendRows();
        QVERIFY(std::any_of(rows.begin(), rows.end(), [](const auto &r) { return r.name.startsWith(QStringLiteral("device time")); }));
        const auto &box = c->view().items[size_t(anchor)];
        const auto [note, at] = c->anchorNote(anchor);
        QVERIFY(!note.isEmpty());
        if (c->isMarked(anchor))
            QVERIFY(!at.adjusted(-4, -4, 4, 4).contains(QPointF(box.x + box.w - 6, box.y + 6)));
        const QRectF onScreen(c->itemRect(anchor).topLeft() + (at.topLeft() - QPointF(box.x, box.y)) * c->scale(), at.size() * c->scale());
        const QImage image = c->grab().toImage();
        int light = 0, all = 0;
        for (int y = int(onScreen.top()) + 1; y < int(onScreen.bottom()) - 1; ++y)
            for (int x = int(onScreen.left()) + 1; x < int(onScreen.right()) - 1; ++x, ++all)
                light += QColor(image.pixel(x, y)).lightness() > 200;
        QVERIFY(all > 50);
        QVERIFY2(light * 2 > all, qPrintable(QStringLiteral("%1 of %2 pixels light under \"%3\"").arg(light).arg(all).arg(note)));
        QTRY_VERIFY_WITH_TIMEOUT(c->isMarked(anchor), kSlowWait); // the anchors of the patterns listed
        {                                                         // the mark's red dot ringed in light, not red on red
            const QImage marked = c->grab().toImage();
            const QPointF dot = c->itemRect(anchor).topLeft() + QPointF(box.w - 6, 6) * c->scale();
            int ring = 0;
            for (int k = 0; k < 16; ++k) {
                const QPointF q =
                    dot + QPointF(std::cos(k * M_PI / 8), std::sin(k * M_PI / 8)) * 3.5 * c->scale(); // on the ring (radius 3.5, 2 wide)
                ring += QColor(marked.pixel(q.toPoint())).lightness() > 200;
            }
            QVERIFY2(ring >= 12, qPrintable(QStringLiteral("%1 of 16 light round the dot").arg(ring)));
        }
        QVERIFY(w.grab().save(shots() + QStringLiteral("tangle200_candidate_on_tint.png")));
    }

    /// The stack box reads "blocks.0–49 ×50" and its edges stand for 50 each; a double-click
    /// unstacks it into 50 boxes; Fit then shows them at a readable minimum, not a one-pixel strip; so for a flat
    /// graph with no modules to stack (tangle200's ATen export).
    void stackUnstackAndFit()
    {
        auto g = fxlens::io::readGraphFile(example("tangle50_torch.json").toStdString());
        QVERIFY(g);
        GraphCanvas c;
        c.resize(900, 600);
        c.show();
        c.setGraph(g.value().get());
        const int box = itemLabelled(&c, "blocks.0\u201349 \u00d750");
        QVERIFY(box >= 0);
        size_t fifty = 0;
        for (const auto &e : c.view().edges)
            fifty += (e.from == uint32_t(box) || e.to == uint32_t(box)) && e.count == 50;
        QCOMPARE(fifty, size_t(2));
        QCOMPARE(c.stacks().size(), size_t(1));
        QVERIFY(QTest::qWaitForWindowExposed(&c));
        QTest::mouseDClick(&c, Qt::LeftButton, {}, c.itemRect(box).center().toPoint()); // unstacks
        size_t boxes = 0;
        for (const auto &it : c.view().items)
            boxes += it.kind == Kind::Module && !it.stacked && it.module.rfind("blocks.", 0) == 0;
        QCOMPARE(boxes, size_t(50));
        QVERIFY(c.stacks().empty());
        c.fitToView();
        QVERIFY2(c.view().height * c.scale() >= 100, qPrintable(QString::number(c.view().height * c.scale())));
        QVERIFY(c.scale() >= GraphCanvas::kMinFitScale);
        QVERIFY(c.rect().contains(c.itemRect(itemLabelled(&c, "l_x_")).toAlignedRect())); // centred on the input
        QVERIFY(c.grab().save(shots() + QStringLiteral("tangle50_unstacked_fit.png")));

        auto flat = fxlens::io::readGraphFile(example("tangle200_aten.json.gz").toStdString());
        QVERIFY(flat);
        c.setGraph(flat.value().get());
        c.fitToView();
        QVERIFY2(std::min(c.view().height, c.view().width) * c.scale() >= 100, qPrintable(QString::number(c.scale())));
    }

    /// Preset all to its fixpoint: every batched op (a node standing in for many blocks' nodes) is
    /// in the blocks' range "blocks.0–49", none in blocks.0 alone; the canvas shows the range.
    void batchedOpsNameTheirRange()
    {
        MainWindow w(testServices());
        w.resize(1200, 800);
        w.show();
        QVERIFY(w.openFile(example("tangle50_torch.json")));
        w.debugger()->setPreset(QStringLiteral("all"));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        size_t batched = 0;
        for (const fxlens::ir::Node *n = w.graph()->first(); n; n = n->next()) {
            const auto &p = n->meta().provenance;
            if (!p || p->replaced.size() < 50)
                continue;
            ++batched;
            QVERIFY(!n->meta().moduleStack.empty());
            QCOMPARE(n->meta().moduleStack.front().path, std::string("blocks.0\u201349"));
        }
        QVERIFY(batched >= 5);
        for (const fxlens::ir::Node *n = w.graph()->first(); n; n = n->next())
            for (const auto &f : n->meta().provenance ? n->meta().moduleStack : std::vector<fxlens::ir::ModuleFrame>{})
                QVERIFY2(f.path.rfind("blocks.0.", 0) != 0 && f.path != "blocks.0", qPrintable(QString::fromStdString(n->name())));
        GraphCanvas *c = w.canvas();
        // One box for the range, holding every batched op (the batched ops are one run of it, not
        // a chain of "(call k of n)" boxes).
        int boxes = 0;
        for (const auto &it : c->view().items)
            if (it.kind == fxlens::layout::ViewItem::Kind::Module && it.module.rfind("blocks.0\u201349", 0) == 0) {
                ++boxes;
                QVERIFY2(it.label.find("(call") == std::string::npos, it.label.c_str());
                QVERIFY(it.nodeCount >= 5);
            }
        QCOMPARE(boxes, 1);
        QVERIFY(w.grab().save(shots() + QStringLiteral("tangle50_after_all.png")));
        // Opened, the range is a frame of its own, titled with the range.
        c->setExpanded(QStringLiteral("blocks.0\u201349"), true);
        bool framed = false;
        for (const auto &f : c->frames())
            framed = framed || f.path == "blocks.0\u201349";
        QVERIFY(framed);
        c->fitToView();
        QVERIFY(w.grab().save(shots() + QStringLiteral("tangle50_after_all_expanded.png")));
    }
};

QTEST_MAIN(TestWideGraphs)
#include "tst_WideGraphs.moc"
