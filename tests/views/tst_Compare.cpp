// SPDX-License-Identifier: MIT
// Compare Versions, as the user sees it on a real rewrite history (tangle4, the engine run to its
// fixpoint): the difference by provenance, both panes opened on the changes at a readable zoom with
// their modules expanded, expansion / zoom / pan kept in step, Next / Previous change visiting every
// change in order, the diff colours in the legends, Esc closing the window, and the versions picked
// from the history (the chooser, a history row's "Compare with Version on Screen", a branch). Where
// the panes are placed: tst_ComparePlace. Screenshots go to <build>/screenshots for a person to
// look at.
#include "CompareSupport.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "SlowWait.h"

#include <QAction>
#include <QApplication>
#include <QLayout>
#include <QListView>
#include <QPointer>
#include <QTimer>

using namespace comparetest;

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
        QTRY_VERIFY_WITH_TIMEOUT(v.isNull(), kSlowWait); // closed, and deleted as it closed
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
