// SPDX-License-Identifier: MIT
// Where Compare Versions places what it shows, as the user sees it on versions reached by hand
// (`--apply-steps N`) and on "All changes": every changed node whole in both panes with the titles
// of the frames around it, the panes' edges cutting few of the boxes around the changes (none of
// the changed nodes, the stacks' boxes and the boxes next to a change, in either pane), and no
// band of a pane left empty that the drawing could fill. Screenshots go to <build>/screenshots for
// a person to look at.
#include "CompareSupport.h"

using namespace comparetest;

namespace {

/// The boxes of a pane the user reads a change by: the nodes in a diff colour, the stacks' boxes
/// (what a change sits beside: the blocks it was not applied to), and the boxes an edge joins to a
/// node in a diff colour.
std::vector<int> boxesAroundChanges(const GraphCanvas *c)
{
    const auto &v = c->view();
    std::vector<bool> pick(v.items.size());
    for (size_t i = 0; i < v.items.size(); ++i)
        pick[i] = c->diffOf(int(i)) != GraphCanvas::DiffMark::None ||
            (v.items[i].kind == layout::ViewItem::Kind::Module && v.items[i].stacked > 0);
    for (const auto &e : v.edges)
        if (c->diffOf(int(e.from)) != GraphCanvas::DiffMark::None || c->diffOf(int(e.to)) != GraphCanvas::DiffMark::None)
            pick[e.from] = pick[e.to] = true;
    std::vector<int> out;
    for (size_t i = 0; i < pick.size(); ++i)
        if (pick[i])
            out.push_back(int(i));
    return out;
}

/// The boxes around the changes (boxesAroundChanges) that an edge of the pane's drawing area cuts:
/// partly in it, partly out.
QStringList cutAround(const GraphCanvas *c)
{
    QStringList out;
    const QRectF area = drawingArea(c);
    for (const int i : boxesAroundChanges(c))
        if (const QRectF r = c->itemRect(i); r.intersects(area) && !area.contains(r)) {
            const auto &it = c->view().items[size_t(i)];
            out << QStringLiteral("%1 at %2..%3, %4..%5")
                       .arg(QString::fromStdString(it.node ? it.node->name() : it.label))
                       .arg(r.left(), 0, 'f', 0)
                       .arg(r.right(), 0, 'f', 0)
                       .arg(r.top(), 0, 'f', 0)
                       .arg(r.bottom(), 0, 'f', 0);
        }
    return out;
}

/// Whether a pane has a stack's box, and every one whole in its drawing area.
bool stackWhole(const GraphCanvas *c)
{
    bool any = false;
    for (size_t i = 0; i < c->view().items.size(); ++i)
        if (c->view().items[i].kind == layout::ViewItem::Kind::Module && c->view().items[i].stacked > 0) {
            any = true;
            if (!drawingArea(c).contains(c->itemRect(int(i))))
                return false;
        }
    return any;
}

} // namespace

class TestComparePlace : public QObject {
    Q_OBJECT
private Q_SLOTS:
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
        auto v = r.compareAfter(file, steps, all);
        QVERIFY2(v, qPrintable(r.error));
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
        // it needs a zoom below the readable one; aligned at the nodes above the changes, it is
        // whole in B and out of view in A (boxesBesideChangesNeverCut).
        QTest::newRow("tangle50_0v3_all") << QStringLiteral("tangle50_torch.json") << 3 << true << 0;
        QTest::newRow("tangle50_aten_0v3_all") << QStringLiteral("tangle50_aten.json") << 3 << true << 0;
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
        auto v = r.compareAfter(file, steps, all);
        QVERIFY2(v, qPrintable(r.error));
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_placed_%1.png").arg(QString::fromLatin1(QTest::currentDataTag()))));
        QString why;
        QVERIFY2(changesWhole(*v, &why), qPrintable(why));
        QVERIFY2(aligned(*v, false, &why), qPrintable(why));
        const QStringList cutA = cutAtEdges(v->left()), cutB = cutAtEdges(v->right());
        const double emptyA = emptyBand(v->left()), emptyB = emptyBand(v->right());
        // Known limit: with edges 20 px from frame sides A's blocks.49 is wider still; aligned with
        // A, B keeps an empty band right of its frame (0.23 of the pane) while its stack's box lies
        // past its left edge. The placement trades that against realigning; not yet weighed right.
        QEXPECT_FAIL("tangle50_0v3_all", "B keeps an idle band beside A's wider frame", Continue);
        QVERIFY2(cutA.size() + cutB.size() <= cuts && emptyA <= 0.1 && emptyB <= 0.1,
                 qPrintable(QStringLiteral("cut in A: %1; in B: %2; empty band: A %3, B %4 of the pane")
                                .arg(cutA.join(QStringLiteral(", ")), cutB.join(QStringLiteral(", ")))
                                .arg(emptyA, 0, 'f', 2)
                                .arg(emptyB, 0, 'f', 2)));
    }

    void boxesBesideChangesNeverCut_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QSize>("window");
        QTest::addColumn<bool>("both"); // the stack's box whole in both panes, else in one (out of view in the other)
        // The stack's box beside blocks.49 (blocks.0–48 ×49) is drawn about 210 scene px further
        // left of the changes in A than in B (A's blocks.49 is wider). Whole in A with them it
        // needs panes 707 px wide at the readable zoom: only the largest window has them.
        QTest::newRow("tangle50_1400x850") << QStringLiteral("tangle50_torch.json") << QSize(1400, 850) << false;
        QTest::newRow("tangle50_1200x800") << QStringLiteral("tangle50_torch.json") << QSize(1200, 800) << false;
        QTest::newRow("tangle50_1600x1000") << QStringLiteral("tangle50_torch.json") << QSize(1600, 1000) << true;
        QTest::newRow("tangle50_aten_1400x850") << QStringLiteral("tangle50_aten.json") << QSize(1400, 850) << false;
        QTest::newRow("tangle50_aten_1600x1000") << QStringLiteral("tangle50_aten.json") << QSize(1600, 1000) << true;
    }

    /// tangle50 after Run's first three steps, original vs step 3, "All changes", in the window as
    /// it opens (1400×850) and in others: every change whole in both panes at one readable zoom,
    /// a node both versions have at one place in both, and no box the changes touch or sit beside
    /// (a changed node, the stack's box, a box an edge joins to a change) cut by either pane's
    /// edge; the stack's box whole in both panes where they hold it with the changes at that zoom,
    /// else whole in one.
    void boxesBesideChangesNeverCut()
    {
        QFETCH(QString, file);
        QFETCH(QSize, window);
        QFETCH(bool, both);
        Rewritten r;
        QVERIFY2(r.applyFirst(file, 3), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        v->resize(window);
        QTest::keyClick(v->left(), Qt::Key_A);
        QCOMPARE(v->currentChange(), -1);
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_beside_%1.png").arg(QString::fromLatin1(QTest::currentDataTag()))));
        QCOMPARE(v->right()->scale(), v->left()->scale());
        QVERIFY2(v->left()->scale() >= CompareView::kReadableScale - 1e-9, qPrintable(QString::number(v->left()->scale())));
        QString why;
        QVERIFY2(!positionText(*v).contains(QStringLiteral("more than one screen")), qPrintable(positionText(*v)));
        QVERIFY2(changesWhole(*v, &why), qPrintable(why));
        QVERIFY2(aligned(*v, false, &why), qPrintable(why));
        const QStringList cutA = cutAround(v->left()), cutB = cutAround(v->right());
        QVERIFY2(cutA.isEmpty() && cutB.isEmpty(),
                 qPrintable(QStringLiteral("zoom %1; cut in A: %2; in B: %3")
                                .arg(v->left()->scale())
                                .arg(cutA.join(QStringLiteral("; ")), cutB.join(QStringLiteral("; ")))));
        const bool inA = stackWhole(v->left()), inB = stackWhole(v->right());
        // Known limit: at 1400×850 the placement aligns the panes at the bottom and leaves the
        // stack's box out of view (not cut) in both; a box out of view costs it nothing yet.
        QEXPECT_FAIL("tangle50_1400x850", "the stack's box out of view in both panes", Continue);
        QVERIFY2(both ? inA && inB : inA || inB, qPrintable(QStringLiteral("the stack's box whole in A: %1, in B: %2").arg(inA).arg(inB)));
    }
    /// tangle4 after Run's first three steps, original vs step 3, "All changes", then blocks.2 (a
    /// sibling of blocks.3, where every change is) expanded by a double-click on its box in pane B,
    /// as a user does: both panes expand it, and "All changes" and N still show the changed nodes
    /// whole in both panes (or, where every change does not fit, the first change's start).
    void expandingASiblingKeepsChangesReachable()
    {
        Rewritten r;
        QVERIFY2(r.applyFirst(QStringLiteral("tangle4_fx.json"), 3), qPrintable(r.error));
        auto v = r.compare();
        QVERIFY2(v, qPrintable(r.error));
        QTest::keyClick(v->left(), Qt::Key_A);
        GraphCanvas *b = v->right();
        int box = -1;
        for (size_t i = 0; i < b->view().items.size(); ++i)
            if (b->view().items[i].kind == layout::ViewItem::Kind::Module && b->view().items[i].module == "blocks.2")
                box = int(i);
        QVERIFY(box >= 0);
        QVERIFY2(QRectF(b->rect()).contains(b->itemRect(box).center()), "blocks.2's box on screen in B");
        QTest::mouseDClick(b, Qt::LeftButton, {}, b->itemRect(box).center().toPoint());
        QVERIFY(v->left()->isExpanded(QStringLiteral("blocks.2")) && b->isExpanded(QStringLiteral("blocks.2")));
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_sibling_expanded.png")));
        QString why;
        QTest::keyClick(v->left(), Qt::Key_A);
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_sibling_expanded_all.png")));
        QCOMPARE(v->currentChange(), -1);
        QVERIFY2(v->left()->scale() >= CompareView::kReadableScale - 1e-9, qPrintable(QString::number(v->left()->scale())));
        QVERIFY2(aligned(*v, false, &why), qPrintable(QStringLiteral("All changes: ") + why));
        if (positionText(*v).contains(QStringLiteral("more than one screen"))) {
            // Every change does not fit at the readable zoom: the first one from its start.
            QCOMPARE(v->left()->scale(), CompareView::kReadableScale);
            for (const GraphCanvas *c : {v->left(), b}) {
                std::vector<const ir::Node *> first;
                for (const ir::Node *n : c == b ? v->changes().front().b : v->changes().front().a)
                    if (c->itemOf(n) >= 0)
                        first.push_back(n);
                QVERIFY2(wholeOrStart(*v, c, first, &why), qPrintable(QStringLiteral("All changes: ") + why));
            }
        } else {
            QVERIFY2(changesWhole(*v, &why), qPrintable(QStringLiteral("All changes: ") + why));
        }
        QTest::keyClick(v->left(), Qt::Key_N);
        QVERIFY(v->grab().save(shots() + QStringLiteral("compare_sibling_expanded_next.png")));
        QCOMPARE(v->currentChange(), 0);
        QVERIFY2(aligned(*v, true, &why), qPrintable(QStringLiteral("N: ") + why));
        QVERIFY2(changesWhole(*v, &why), qPrintable(QStringLiteral("N: ") + why));
    }
};

QTEST_MAIN(TestComparePlace)
#include "tst_ComparePlace.moc"
