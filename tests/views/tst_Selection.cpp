// SPDX-License-Identifier: MIT
// The selection as state: it knows no panel; panels follow it by connecting themselves. A panel
// that exists only in this file follows every change the window's panels make.
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "Selection.h"
#include "SourceServices.h"

#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

using namespace fxlens;
using views::Selection;

namespace {

/// A new panel, written here only: it shows the current node and how many nodes are highlighted,
/// and can select through the selection like any other panel.
class FollowPanel : public QLabel {
public:
    void setSelection(Selection *selection)
    {
        m_selection = selection;
        connect(selection, &Selection::currentNodeChanged, this, [this](const ir::Node *n, QObject *origin) {
            setText(n ? QString::fromStdString(n->name()) : QString());
            lastOrigin = origin;
        });
        connect(selection, &Selection::moduleSelected, this, [this](const QString &path) { setText(QStringLiteral("module ") + path); });
        connect(selection, &Selection::highlightChanged, this,
                [this](const std::vector<const ir::Node *> &nodes) { highlighted = nodes.size(); });
    }
    /// The user picks a node in this panel.
    void pick(const QString &name) { m_selection->setCurrentNode(name, this); }

    size_t highlighted = 0;
    QObject *lastOrigin = nullptr;

private:
    Selection *m_selection = nullptr;
};

/// tangle4 in a shown 1200x800 window, its first layout done.
bool openTangle4(views::MainWindow &w)
{
    w.resize(1200, 800);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w) || !w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")))
        return false;
    QCoreApplication::processEvents();
    return true;
}

} // namespace

class TestSelection : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test-selection")); }

    /// The selection alone: names are looked up in the document's graph; a new graph drops it.
    void stateOnly()
    {
        views::GraphDocument doc(test::sourceServices());
        Selection s(&doc);
        QString error;
        QVERIFY2(doc.open(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), &error), qPrintable(error));
        QSignalSpy current(&s, &Selection::currentNodeChanged), named(&s, &Selection::nodeSelected), module(&s, &Selection::moduleSelected),
            highlight(&s, &Selection::highlightChanged);
        QVERIFY(!s.selectNode(QStringLiteral("no_such_node")));
        QCOMPARE(current.size(), 0);
        QVERIFY(s.selectNode(QStringLiteral("split")));
        QCOMPARE(s.currentNode(), QStringLiteral("split"));
        QCOMPARE(current.size(), 1);
        QCOMPARE(current.at(0).at(2).toBool(), true); // by name: panels reveal it
        QCOMPARE(named.at(0).at(0).toString(), QStringLiteral("split"));
        s.selectModule(QStringLiteral("blocks.0"), nullptr);
        QCOMPARE(s.currentNode(), QString());
        QCOMPARE(s.currentModule(), QStringLiteral("blocks.0"));
        QCOMPARE(module.size(), 1);
        QCOMPARE(named.last().at(0).toString(), QString());
        const ir::Node *x = s.find(QStringLiteral("x"));
        QVERIFY(x);
        s.highlight({x}, x);
        QCOMPARE(highlight.size(), 1);
        QCOMPARE(s.anchor(), x);
        QCOMPARE(s.currentNode(), QStringLiteral("x"));
        QCOMPARE(current.last().at(2).toBool(), false); // a highlight's anchor is followed, not revealed
        QVERIFY(doc.open(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), &error));
        QCOMPARE(s.currentNode(), QString());
        QVERIFY(s.highlighted().empty() && !s.anchor());
        QVERIFY(s.graph() == doc.graph());
    }

    /// A panel added in this file only follows what the window's panels select, and selects for
    /// them: nothing else had to change for it.
    void newPanelFollows()
    {
        views::MainWindow w(test::sourceServices());
        w.resize(1200, 800);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        FollowPanel panel;
        panel.setSelection(w.selection());

        QVERIFY(w.selectNode(QStringLiteral("split"))); // the window (an inspector link, a profile row)
        QCOMPARE(panel.text(), QStringLiteral("split"));
        QVERIFY(panel.lastOrigin == nullptr);

        Q_EMIT w.canvas()->nodeSelected(QStringLiteral("x")); // a click on the canvas
        QCOMPARE(panel.text(), QStringLiteral("x"));
        QVERIFY(panel.lastOrigin == w.canvas());

        Q_EMIT w.canvas()->moduleSelected(QStringLiteral("blocks.0.linear"));
        QCOMPARE(panel.text(), QStringLiteral("module blocks.0.linear"));

        int matches = 0; // the Patterns panel outlines a pattern's first match
        for (const auto *p : w.document()->registry().all())
            if ((matches = w.showMatches(QString::fromStdString(p->name))) > 0)
                break;
        QVERIFY(matches > 0);
        QVERIFY(panel.highlighted > 0);
        QCOMPARE(panel.text(), w.selection()->currentNode()); // the match's anchor
        QVERIFY(w.selection()->anchor() && panel.text() == QString::fromStdString(w.selection()->anchor()->name()));

        panel.pick(QStringLiteral("split")); // the new panel selects: every other panel follows
        QCOMPARE(w.canvas()->selectedLabel(), QStringLiteral("split"));
        QVERIFY(w.inspectorText().startsWith(QStringLiteral("split")));
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        QCOMPARE(table->selectionModel()->selectedRows().size(), 1);
        QCOMPARE(table->currentIndex().data().toString(), QStringLiteral("split"));
        QVERIFY(panel.lastOrigin == &panel);
    }

    /// A click on empty canvas selects nothing, and every panel follows it to empty as it follows
    /// it to a node: the node table keeps no row highlighted, the inspector clears.
    void emptyClickEmptiesEveryPanel()
    {
        views::MainWindow w(test::sourceServices());
        QVERIFY(openTangle4(w));
        auto *canvas = w.canvas();
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        const QRectF split = canvas->itemRect(canvas->itemOf(w.selection()->find(QStringLiteral("split"))));
        QVERIFY(QRectF(canvas->rect()).contains(split));
        QTest::mouseClick(canvas, Qt::LeftButton, {}, split.center().toPoint());
        QCOMPARE(canvas->selectedLabel(), QStringLiteral("split"));
        QCOMPARE(table->currentIndex().data().toString(), QStringLiteral("split"));
        QVERIFY(w.inspectorText().startsWith(QStringLiteral("split")));
        // A point of the canvas with nothing there: no item, edge, frame or kernel outline.
        QPoint empty(-1, -1);
        for (int y = 20; y < canvas->height() / 2 && empty.x() < 0; y += 7)
            for (int x = 20; x < canvas->width() - 20 && empty.x() < 0; x += 7)
                if (canvas->toolTipAt(QPointF(x, y)).isEmpty() && canvas->frameAt(QPointF(x, y)) < 0 &&
                    canvas->kernelGroupAt(QPointF(x, y)) < 0)
                    empty = QPoint(x, y);
        QVERIFY(empty.x() >= 0);
        QTest::mouseClick(canvas, Qt::LeftButton, {}, empty);
        QCOMPARE(canvas->selectedLabel(), QString());
        QCOMPARE(w.selection()->currentNode(), QString());
        QVERIFY2(w.inspectorText().isEmpty(), qPrintable(w.inspectorText()));
        QCOMPARE(table->selectionModel()->selectedRows().size(), 0);
        QVERIFY(!table->currentIndex().isValid());
    }

    /// After an edit (a step, an undo) every panel shows the same current node as the window's
    /// selection: the node the step left selected, or none; never the canvas or the table holding
    /// a node the selection has dropped.
    void panelsAgreeAfterAnEdit()
    {
        views::MainWindow w(test::sourceServices());
        QVERIFY(openTangle4(w));
        auto *canvas = w.canvas();
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        const auto agree = [&](const char *when) {
            const QString current = w.selection()->currentNode();
            QVERIFY2(canvas->selectedLabel() == current,
                     qPrintable(QStringLiteral("%1: canvas %2, selection %3").arg(QLatin1String(when), canvas->selectedLabel(), current)));
            const QString row = table->currentIndex().isValid() ? table->currentIndex().siblingAtColumn(0).data().toString() : QString();
            QVERIFY2(row == current, qPrintable(QStringLiteral("%1: table %2, selection %3").arg(QLatin1String(when), row, current)));
        };
        QVERIFY(w.selection()->selectNode(QStringLiteral("x")));
        agree("selected");
        QVERIFY(w.debugger()->applySelected());
        QCoreApplication::processEvents();
        agree("after a step");
        QVERIFY(w.selection()->selectNode(QStringLiteral("x")));
        QVERIFY(w.debugger()->undo());
        QCoreApplication::processEvents();
        agree("after undo");
    }

    /// Showing a module (`--expand`) after the file's first candidate was selected elsewhere
    /// (BERT: reshape_11 in layer 11): the module is what the Inspector describes, and no node off
    /// screen stays selected in the table or outlined on the canvas.
    void shownModuleIsTheSelection()
    {
        views::MainWindow w(test::sourceServices());
        w.resize(1200, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/bert_base_dynamo.json.gz")));
        QCoreApplication::processEvents();
        QVERIFY(!w.selection()->currentNode().isEmpty()); // the first candidate
        const QString module = QStringLiteral("model.encoder.layer.0.attention.self");
        const QStringList parts = module.split(QLatin1Char('.'));
        for (qsizetype i = 1; i <= parts.size(); ++i)
            w.canvas()->setExpanded(parts.mid(0, i).join(QLatin1Char('.')), true);
        QVERIFY(w.showModule(module));
        QCoreApplication::processEvents();
        QVERIFY2(w.inspectorText().contains(module), qPrintable(w.inspectorText().left(200)));
        QVERIFY(w.selection()->currentNode().isEmpty());
        QVERIFY2(w.canvas()->selectedLabel().isEmpty(), qPrintable(w.canvas()->selectedLabel()));
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        QCOMPARE(table->selectionModel()->selectedRows().size(), 0);
    }
};

QTEST_MAIN(TestSelection)
#include "tst_Selection.moc"
