// SPDX-License-Identifier: MIT
// Modules as the canvas and the Inspector show them: a box's node count is the Inspector's (ops
// and the weights hidden with them, in words), and the status bar counts the same way; a node that
// fused several modules' ops is drawn in the module they share; a range's class is the one its
// box shows.
#include "GraphCanvas.h"
#include "Inspector.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "Selection.h"
#include "TestServices.h"
#include "layout/Layered.h"

#include <QLabel>
#include <QRegularExpression>
#include <QStatusBar>
#include <QtTest>

using fxlens::layout::ViewItem;
using fxlens::views::GraphCanvas;
using fxlens::views::MainWindow;

namespace {

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }

const QStringList kLayer0 = {QStringLiteral("model"), QStringLiteral("model.encoder"), QStringLiteral("model.encoder.layer.0"),
                             QStringLiteral("model.encoder.layer.0.attention"), QStringLiteral("model.encoder.layer.0.attention.self")};

/// The Inspector's row `key` for what is selected ("" when it has none): its table's cells are
/// lines of its text, a key's value the line after it.
QString inspectorRow(const MainWindow &w, const QString &key)
{
    auto *inspector = w.findChild<fxlens::views::Inspector *>(QStringLiteral("inspector"));
    const QStringList lines = inspector ? inspector->toPlainText().split(QLatin1Char('\n')) : QStringList{};
    const qsizetype at = lines.indexOf(key);
    return at >= 0 && at + 1 < lines.size() ? lines[at + 1].trimmed() : QString();
}

/// Selects the box of module item `i` as a click on it does (the Inspector shows the module).
void clickItem(GraphCanvas *c, int i) { Q_EMIT c->moduleSelected(QString::fromStdString(c->view().items[size_t(i)].module)); }

/// Every module box of the canvas: its count (the end of its detail) is the Inspector's, its
/// class the Inspector's. Returns the boxes compared.
/// BERT run to its fixpoint (preset all, 87 steps) in a shown window, the encoder open.
bool bertAtFixpointEncoderOpen(MainWindow &w)
{
    w.resize(1400, 900);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w) || !w.openFile(example("bert_base_dynamo.json.gz")))
        return false;
    w.debugger()->setPreset(QStringLiteral("all"));
    if (w.debugger()->run() != QStringLiteral("fixpoint"))
        return false;
    for (const QString &m : {QStringLiteral("model"), QStringLiteral("model.encoder")})
        w.canvas()->setExpanded(m, true);
    return true;
}

int boxesAgreeWithInspector(MainWindow &w)
{
    GraphCanvas *c = w.canvas();
    int compared = 0;
    for (size_t i = 0; i < c->view().items.size(); ++i) {
        const ViewItem it = c->view().items[i];
        if (it.kind != ViewItem::Kind::Module)
            continue;
        clickItem(c, int(i));
        const QString nodes = inspectorRow(w, QStringLiteral("nodes"));
        const QString detail = QString::fromStdString(it.detail);
        if (nodes.isEmpty() || !detail.endsWith(QStringLiteral(", ") + nodes)) {
            qWarning("%s: box '%s', Inspector '%s'", it.module.c_str(), qPrintable(detail), qPrintable(nodes));
            return -1;
        }
        const QString type = detail.left(detail.lastIndexOf(QStringLiteral(", ")));
        if (!inspectorRow(w, QStringLiteral("module")).contains(QLatin1Char('(') + type + QLatin1Char(')'))) {
            qWarning("%s: box class '%s', Inspector '%s'", it.module.c_str(), qPrintable(type),
                     qPrintable(inspectorRow(w, QStringLiteral("module"))));
            return -1;
        }
        ++compared;
    }
    return compared;
}

} // namespace

class TestModuleViews : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    /// BERT's modules, collapsed and opened down to layer 0's attention, before and after preset
    /// all: each box says what the Inspector says for its module ("30 ops · 16 weights").
    void boxCountIsTheInspectors()
    {
        MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(example("bert_base_dynamo.json.gz")));
        GraphCanvas *c = w.canvas();
        QVERIFY(boxesAgreeWithInspector(w) >= 1); // "model"
        for (const QString &m : kLayer0)
            c->setExpanded(m, true);
        int before = boxesAgreeWithInspector(w);
        QVERIFY2(before >= 6, qPrintable(QString::number(before))); // embeddings, layers 1–11, query, key, value, ...
        bool weighed = false;
        for (const auto &it : c->view().items)
            weighed = weighed || (it.module == "model.encoder.layer.0.attention.self.query" && it.weights == 2 && it.nodeCount == 1);
        QVERIFY(weighed); // the linear, with its weight and bias
        w.debugger()->setPreset(QStringLiteral("all"));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        const int after = boxesAgreeWithInspector(w);
        QVERIFY2(after >= 4, qPrintable(QString::number(after)));
    }

    /// Double-clicking a module box opens it and leaves it what the Inspector describes: the
    /// release that ends the double-click selects nothing, though the new layout has put another
    /// box or node under the pointer (ResNet-50: layer1, then layer1.0 inside it).
    void doubleClickOpensWithoutSelectingAnother()
    {
        MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(example("resnet50_fx.json.gz")));
        GraphCanvas *c = w.canvas();
        QSignalSpy nodes(c, &GraphCanvas::nodeSelected), modules(c, &GraphCanvas::moduleSelected);
        for (const std::string module : {"layer1", "layer1.0"}) {
            int box = -1;
            for (size_t i = 0; i < c->view().items.size(); ++i)
                if (c->view().items[i].kind == ViewItem::Kind::Module && c->view().items[i].module == module)
                    box = int(i);
            QVERIFY2(box >= 0, module.c_str());
            QVERIFY(QRectF(c->sceneViewport()).contains(c->itemRect(box).center()));
            // As a mouse does it: press, release, double-click, release (mouseDClick sends only the third).
            const QPoint at = c->itemRect(box).center().toPoint();
            QTest::mouseClick(c, Qt::LeftButton, {}, at);
            QTest::mouseDClick(c, Qt::LeftButton, {}, at);
            QTest::mouseRelease(c, Qt::LeftButton, {}, at);
            QCoreApplication::processEvents();
            QVERIFY(c->isExpanded(QString::fromStdString(module)));
            QVERIFY2(!modules.isEmpty() && modules.last().first().toString() == QString::fromStdString(module),
                     qPrintable(modules.isEmpty() ? QString() : modules.last().first().toString()));
            QVERIFY2(nodes.isEmpty(), qPrintable(nodes.isEmpty() ? QString() : nodes.last().first().toString()));
            QCOMPARE(c->selectedLabel(), QString());
            auto *inspector = w.findChild<fxlens::views::Inspector *>(QStringLiteral("inspector"));
            QVERIFY(inspector);
            QCOMPARE(inspector->toPlainText().section(QLatin1Char('\n'), 0, 0).trimmed(), QString::fromStdString(module)); // its heading
        }
    }

    /// A weight read by several modules counts in the one that holds all its readers: BERT's
    /// attention mask, first read in layer 0 and read by all twelve layers, counts in the encoder,
    /// so layer 0 counts the weights every other layer counts (18, not 25), on its box too.
    void sharedWeightsCountWhereAllTheirReadersAre()
    {
        MainWindow w(testServices());
        QVERIFY(w.openFile(example("bert_base_dynamo.json.gz")));
        const fxlens::ir::Graph &g = *w.graph();
        const auto l0 = fxlens::layout::moduleNodeCount(g, "model.encoder.layer.0"),
                   l1 = fxlens::layout::moduleNodeCount(g, "model.encoder.layer.1");
        QCOMPARE(l0.ops, l1.ops);
        QCOMPARE(l0.weights, l1.weights);
        size_t layers = 0;
        for (int k = 0; k < 12; ++k)
            layers += fxlens::layout::moduleNodeCount(g, "model.encoder.layer." + std::to_string(k)).weights;
        QVERIFY(fxlens::layout::moduleNodeCount(g, "model.encoder").weights > layers); // the mask's nodes
        w.canvas()->setExpanded(QStringLiteral("model"), true);
        w.canvas()->setExpanded(QStringLiteral("model.encoder"), true);
        w.canvas()->setExpanded(QStringLiteral("model.encoder.layer.1"), true); // layer 0 a box of its own
        bool seen = false;
        for (const auto &it : w.canvas()->view().items)
            if (it.module == "model.encoder.layer.0" && it.kind == ViewItem::Kind::Module) {
                QCOMPARE(it.weights, l1.weights);
                seen = true;
            }
        QVERIFY(seen);
    }

    /// BERT at its fixpoint (87 steps), the encoder open: after 87 → 83 → 87 with layer 3 open, the
    /// other layers are two stacks in program order, "layer.0–2 ×3" above layer 3's frame and
    /// "layer.4–11 ×8" below it (not one range across it and a "(call 2)"); after 87 → 82 → 87 and
    /// after single steps whose stacks regroup, no ghost stands for nodes that are still there.
    void stacksAfterHistoryJumps()
    {
        MainWindow w(testServices());
        QVERIFY(bertAtFixpointEncoderOpen(w));
        GraphCanvas *c = w.canvas();
        const QString layer3 = QStringLiteral("model.encoder.layer.3");
        QVERIFY(w.debugger()->checkout(83));
        c->setExpanded(layer3, true);
        QVERIFY(w.debugger()->checkout(87));
        QVERIFY(c->isExpanded(layer3));
        QStringList layers;
        QRectF above, below, frame;
        for (const auto &it : c->view().items) {
            const QString label = QString::fromStdString(it.label);
            QVERIFY2(!label.contains(QStringLiteral("(call")), qPrintable(label));
            if (it.kind == ViewItem::Kind::Module && it.stacked)
                layers << label;
            (it.module == "model.encoder.layer.0\u20132"        ? above
                 : it.module == "model.encoder.layer.4\u201311" ? below
                                                                : frame) = QRectF(it.x, it.y, it.w, it.h);
        }
        QCOMPARE(
            layers,
            (QStringList{QStringLiteral("model.encoder.layer.0\u20132 \u00d73"), QStringLiteral("model.encoder.layer.4\u201311 \u00d78")}));
        for (const auto &f : c->frames())
            if (f.path == layer3.toStdString())
                frame = f.rect;
        QVERIFY(!frame.isEmpty());
        QVERIFY(above.bottom() <= frame.top() && below.top() >= frame.bottom());
        QVERIFY(c->ghosts().empty());
    }

    /// BERT at its fixpoint, the encoder open: after 87 → 82 → 87 no ghost is left (step 87 removes
    /// nothing); step by step from 60, a ghost is only a node the step erased, never a stack whose
    /// members are still drawn (regrouped by the step).
    void ghostsOnlyForRemovedNodes()
    {
        MainWindow w(testServices());
        QVERIFY(bertAtFixpointEncoderOpen(w));
        GraphCanvas *c = w.canvas();
        QVERIFY(w.debugger()->checkout(82));
        QVERIFY(w.debugger()->checkout(87));
        QCOMPARE(c->ghosts().size(), size_t(0)); // step 87 removes nothing

        // Step by step from 60 (the view shows each step): a ghost is a node the step erased.
        QVERIFY(w.debugger()->checkout(60));
        c->collapseAll();
        for (const QString &m : {QStringLiteral("model"), QStringLiteral("model.encoder")})
            c->setExpanded(m, true);
        bool sawGhosts = false;
        for (int v = 61; v <= 87; ++v) {
            QVERIFY(w.debugger()->redo());
            for (const auto &g : c->ghosts()) {
                const fxlens::ir::Node *n = g.kind == ViewItem::Kind::Node ? w.graph()->find(g.label) : nullptr;
                QVERIFY2(g.kind == ViewItem::Kind::Node ? !n : !g.stacked,
                         qPrintable(QString::number(v) + QLatin1Char(' ') + QString::fromStdString(g.label)));
            }
            sawGhosts = sawGhosts || !c->ghosts().empty();
        }
        QVERIFY(sawGhosts); // steps that fuse layers' projections remove their nodes
        // A jump over such steps shows no ghosts: they would be no step's removal.
        QVERIFY(w.debugger()->checkout(66));
        QVERIFY(w.debugger()->checkout(72));
        QCOMPARE(c->ghosts().size(), size_t(0));
    }

    /// tangle50 after a full run: the status bar's nodes are the node table's rows (the ops) and
    /// the weights hidden with them.
    void statusBarCountsAsTheBoxes()
    {
        MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(example("tangle50_torch.json")));
        w.debugger()->setPreset(QStringLiteral("all"));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        auto *stats = w.statusBar()->findChild<QLabel *>();
        QVERIFY(stats);
        const auto m = QRegularExpression(QStringLiteral("^(\\d+) nodes \\((\\d+) ops · (\\d+) weights\\)")).match(stats->text());
        QVERIFY2(m.hasMatch(), qPrintable(stats->text()));
        QCOMPARE(m.captured(1).toInt(), int(w.graph()->size()));
        QCOMPARE(m.captured(2).toInt(), w.visibleNodeCount());
        QCOMPARE(m.captured(2).toInt() + m.captured(3).toInt(), int(w.graph()->size()));
    }

    /// BERT after preset all: the fused Q/K/V projection is drawn in attention.self, outside the
    /// frames of query, key and value; tangle50 after a full run: the batched linear's range has
    /// the class its box shows.
    void fusedNodesInTheirModules()
    {
        MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(example("bert_base_dynamo.json.gz")));
        w.debugger()->setPreset(QStringLiteral("all"));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        GraphCanvas *c = w.canvas();
        c->expandAll();
        const fxlens::ir::Node *fused = nullptr;
        for (const fxlens::ir::Node *n = w.graph()->first(); n; n = n->next())
            if (n->target() == "torch.nn.functional.linear" && n->meta().provenance && n->meta().provenance->replaced.size() == 3 &&
                n->meta().modulePath().rfind("model.encoder.layer.0.", 0) == 0)
                fused = n;
        QVERIFY(fused);
        QCOMPARE(fused->meta().modulePath(), std::string("model.encoder.layer.0.attention.self"));
        const int item = c->view().itemOfNode[fused->id()];
        QVERIFY(item >= 0);
        const auto &it = c->view().items[size_t(item)];
        QCOMPARE(it.cluster, std::string("model.encoder.layer.0.attention.self"));
        const QRectF r(it.x, it.y, it.w, it.h);
        bool inSelf = false;
        for (const auto &f : c->frames()) {
            if (f.path == it.cluster)
                inSelf = f.rect.contains(r);
            else if (f.path.rfind(it.cluster + ".", 0) == 0)
                QVERIFY2(!f.rect.intersects(r), f.path.c_str());
        }
        QVERIFY(inSelf);
        QVERIFY(w.selection()->selectNode(QString::fromStdString(fused->name())));
        QCOMPARE(inspectorRow(w, QStringLiteral("module")), QString::fromStdString(fused->meta().modulePath()));

        QVERIFY(w.openFile(example("tangle50_torch.json")));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        c->setExpanded(QStringLiteral("blocks.0\u201349"), true);
        int linear = -1;
        for (size_t i = 0; i < c->view().items.size(); ++i)
            if (c->view().items[i].module == "blocks.0\u201349.linear" && c->view().items[i].kind == ViewItem::Kind::Module)
                linear = int(i);
        QVERIFY(linear >= 0);
        QVERIFY(
            QString::fromStdString(c->view().items[size_t(linear)].detail).startsWith(QStringLiteral("torch.nn.modules.linear.Linear, ")));
        clickItem(c, linear);
        QCOMPARE(inspectorRow(w, QStringLiteral("module")), QStringLiteral("Linear (torch.nn.modules.linear.Linear)"));
        QVERIFY(boxesAgreeWithInspector(w) >= 2);
    }
};

QTEST_MAIN(TestModuleViews)
#include "tst_ModuleViews.moc"
