// SPDX-License-Identifier: MIT
// The graph canvas, driven offscreen: every bundled example opens and lays out, modules expand and
// collapse, clicking selects, a pattern's matches are highlighted, the view exports as SVG/PNG.
// Screenshots (fit and zoomed in) go to <build>/screenshots for a person to look at.
#include "GraphCanvas.h"
#include "MainWindow.h"
#include "VerticalPatterns.h"
#include "io/GraphJson.h"
#include "rewrite/Session.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

using namespace fxlens;

namespace {
const char *kExamples[] = {"tangle4_fx.json", "tangle50_torch.json", "tangle50_aten.json", "transformer_fx.json", "transformer_dynamo.json",
                           "transformer_aten.json", "resnet50_fx.json.gz", "resnet50_aten.json.gz", "tangle200_torch.json.gz"};

QString shots()
{
    QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
    return QStringLiteral(FXLENS_BUILD_DIR "/screenshots/");
}
} // namespace

class TestGraphCanvas : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyExampleOpens_data()
    {
        QTest::addColumn<QString>("file");
        for (const char *f : kExamples)
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void everyExampleOpens()
    {
        QFETCH(QString, file);
        views::MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/") + file));
        views::GraphCanvas *c = w.canvas();
        const auto &g = *w.graph();
        // Collapsed: one box per outermost module, plus the nodes outside modules.
        std::set<std::string> top;
        size_t loose = 0;
        for (ir::Node *n = g.first(); n; n = n->next()) {
            const auto &stack = n->meta().moduleStack;
            auto it = std::find_if(stack.begin(), stack.end(), [](const ir::ModuleFrame &f) { return !f.path.empty(); });
            if (it == stack.end())
                ++loose;
            else
                top.insert(it->path);
        }
        QCOMPARE(c->view().items.size(), top.size() + loose);
        // Every item lies inside the scene; the fitted scene lies inside the widget.
        for (const auto &it : c->view().items) {
            QVERIFY(it.x >= 0 && it.y >= 0 && it.x + it.w <= c->view().width + 1e-6 && it.y + it.h <= c->view().height + 1e-6);
        }
        for (int i : {0, int(c->view().items.size()) - 1}) {
            QRectF r = c->itemRect(i);
            QVERIFY2(QRectF(c->rect()).adjusted(-1, -1, 1, 1).contains(r), qPrintable(file));
        }
        const QString base = shots() + QFileInfo(file).baseName();
        QVERIFY(c->exportPng(base + "_fit.png"));
        // Zoomed in on the first item: text is legible there.
        c->expandAll();
        c->selectNode(QString::fromStdString(g.first()->name()));
        QVERIFY(c->scale() >= 0.8);
        QVERIFY(c->exportPng(base + "_zoomed.png"));
    }

    void expandCollapseSelect()
    {
        auto r = io::readGraphFile(FXLENS_EXAMPLES "/tangle50_torch.json");
        QVERIFY(r.ok());
        views::GraphCanvas c;
        c.resize(1200, 800);
        c.show();
        c.setGraph(r.value().get());
        const size_t collapsed = c.view().items.size();
        // Find a module box and expand it.
        int box = -1;
        for (size_t i = 0; i < c.view().items.size(); ++i)
            if (c.view().items[i].kind == layout::ViewItem::Kind::Module) {
                box = int(i);
                break;
            }
        QVERIFY(box >= 0);
        const QString module = QString::fromStdString(c.view().items[size_t(box)].module);
        const size_t inside = c.view().items[size_t(box)].nodeCount;
        QSignalSpy toggled(&c, &views::GraphCanvas::moduleToggled);
        c.fitToView();
        const QPointF at = c.itemRect(box).center();
        QTest::mouseDClick(&c, Qt::LeftButton, {}, at.toPoint());
        QCOMPARE(toggled.count(), 1);
        QVERIFY(c.isExpanded(module));
        // Its direct nodes and one box per child module replace the box.
        std::set<std::string> children;
        size_t direct = 0;
        for (ir::Node *n = r.value()->first(); n; n = n->next()) {
            const auto &stack = n->meta().moduleStack;
            for (size_t k = 0; k < stack.size(); ++k)
                if (stack[k].path == module.toStdString()) {
                    if (k + 1 < stack.size())
                        children.insert(stack[k + 1].path);
                    else
                        ++direct;
                }
        }
        QVERIFY(inside >= direct + children.size());
        QCOMPARE(c.view().items.size(), collapsed - 1 + direct + children.size());
        c.setExpanded(module, false);
        QCOMPARE(c.view().items.size(), collapsed);

        // Selecting a node inside a collapsed module expands it and centres the node.
        QVERIFY(c.selectNode(QStringLiteral("tanh_3")));
        QCOMPARE(c.selectedLabel(), QStringLiteral("tanh_3"));
        // Clicking an item emits its name.
        QSignalSpy selected(&c, &views::GraphCanvas::nodeSelected);
        int target = -1;
        for (size_t i = 0; i < c.view().items.size(); ++i)
            if (c.view().items[i].label == "tanh_3")
                target = int(i);
        QVERIFY(target >= 0);
        QTest::mouseClick(&c, Qt::LeftButton, {}, c.itemRect(target).center().toPoint());
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.at(0).at(0).toString(), QStringLiteral("tanh_3"));
        // Zoom keeps the point under the cursor.
        const QRectF before = c.itemRect(target);
        c.zoomBy(2.0, before.center());
        QVERIFY(std::abs(c.itemRect(target).center().x() - before.center().x()) < 1.0);
        QVERIFY(std::abs(c.itemRect(target).width() - 2 * before.width()) < 1e-6);
    }

    void highlightMatchesAndExport()
    {
        auto r = io::readGraphFile(FXLENS_EXAMPLES "/tangle4_fx.json");
        QVERIFY(r.ok());
        ir::Graph &g = *r.value();
        rewrite::PatternRegistry reg;
        QVERIFY(patterns::registerVerticalPatterns(reg).empty());
        std::string err;
        rewrite::Session s(g, reg.preset("vertical", err));
        auto matches = s.candidates();
        QVERIFY(!matches.empty());
        views::GraphCanvas c;
        c.resize(1000, 700);
        c.show();
        c.setGraph(&g);
        c.expandAll();
        std::vector<const ir::Node *> anchors;
        for (const auto &m : matches)
            anchors.push_back(m.anchor);
        c.setMarked(anchors);
        const auto &m = matches.front();
        c.setHighlight(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
        int anchorItems = 0, matched = 0, marked = 0;
        for (size_t i = 0; i < c.view().items.size(); ++i) {
            anchorItems += c.highlightOf(int(i)) == 2;
            matched += c.highlightOf(int(i)) >= 1;
            marked += c.isMarked(int(i));
        }
        QCOMPARE(anchorItems, 1);
        QCOMPARE(matched, int(m.nodes.size()));
        std::set<const ir::Node *> distinct(anchors.begin(), anchors.end());
        QCOMPARE(marked, int(distinct.size()));
        QVERIFY(c.exportPng(shots() + "tangle4_match.png"));

        QTemporaryDir tmp;
        const QString svg = tmp.filePath(QStringLiteral("g.svg"));
        QVERIFY(c.exportSvg(svg));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray data = f.readAll();
        QVERIFY(data.startsWith("<?xml") || data.contains("<svg"));
        QVERIFY(data.contains(QByteArray::fromStdString(m.anchor->name())));
    }
};

QTEST_MAIN(TestGraphCanvas)
#include "tst_GraphCanvas.moc"
