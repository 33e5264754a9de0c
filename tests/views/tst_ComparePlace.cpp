// SPDX-License-Identifier: MIT
// Where Compare Versions places what it shows, as the user sees it on versions reached by hand
// (`--apply-steps N`) and on "All changes": every changed node whole in both panes with the titles
// of the frames around it, the panes' edges cutting few of the boxes around the changes, and no
// band of a pane left empty that the drawing could fill. Screenshots go to <build>/screenshots for
// a person to look at.
#include "CompareSupport.h"

using namespace comparetest;

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
};

QTEST_MAIN(TestComparePlace)
#include "tst_ComparePlace.moc"
