// SPDX-License-Identifier: MIT
// The graph canvas, driven offscreen: every bundled example opens and lays out, modules expand and
// collapse, clicking selects, a pattern's matches are highlighted, the view exports as SVG/PNG.
// Screenshots (fit and zoomed in) go to <build>/screenshots for a person to look at.
#include "BuiltinPatterns.h"
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "SlowWait.h"
#include "TestServices.h"
#include "io/GraphJson.h"
#include "rewrite/Session.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QListWidget>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include <map>
#include <set>

using namespace fxlens;

namespace {
const char *kExamples[] = {"tangle4_fx.json",     "tangle50_torch.json",     "tangle50_aten.json",
                           "transformer_fx.json", "transformer_dynamo.json", "transformer_aten.json",
                           "resnet50_fx.json.gz", "resnet50_aten.json.gz",   "tangle200_torch.json.gz"};

QString shots()
{
    QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
    return QStringLiteral(FXLENS_BUILD_DIR "/screenshots/");
}
/// An example graph on a shown canvas of the given size (the graph lives as long as the canvas);
/// null when the file does not read.
struct ShownGraph {
    std::unique_ptr<ir::Graph> graph;
    views::GraphCanvas canvas;
};
std::unique_ptr<ShownGraph> showExample(const std::string &file, int width, int height)
{
    auto r = io::readGraphFile(file);
    if (!r)
        return nullptr;
    auto shown = std::make_unique<ShownGraph>();
    shown->graph = std::move(r.value());
    shown->canvas.resize(width, height);
    shown->canvas.show();
    shown->canvas.setGraph(shown->graph.get());
    return shown;
}
} // namespace

class TestGraphCanvas : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// Zoomed in on the middle of the longest edge (transformer's skip edge around attention), with
    /// both its ends off screen: the edge is still drawn across the view.
    void longEdgeCrossingTheView()
    {
        auto s = showExample(FXLENS_EXAMPLES "/transformer_dynamo.json", 400, 300);
        QVERIFY(s);
        views::GraphCanvas &c = s->canvas;
        size_t longest = 0;
        double span = 0;
        for (size_t e = 0; e < c.view().edges.size(); ++e)
            if (const QRectF r = c.edgeBounds(e); r.height() > span)
                span = r.height(), longest = e;
        const auto &route = c.view().edges[longest].route;
        QVERIFY(route.size() >= 2);
        // Viewed at the middle of its route (halfway down the segment that crosses its middle height).
        QVERIFY2(span > 400, qPrintable(QString::number(span)));
        const double half = (route.front().y + route.back().y) / 2;
        QPointF mid;
        for (size_t k = 1; k < route.size(); ++k)
            if ((route[k - 1].y - half) * (route[k].y - half) <= 0) {
                const double t = route[k].y == route[k - 1].y ? 0.5 : (half - route[k - 1].y) / (route[k].y - route[k - 1].y);
                mid = QPointF(route[k - 1].x + t * (route[k].x - route[k - 1].x), half);
                break;
            }
        c.setView(1.0, mid);
        const auto &edge = c.view().edges[longest];
        for (const uint32_t end : {edge.from, edge.to})
            QVERIFY(!c.itemRect(int(end)).intersects(QRectF(c.rect())));
        const QImage img = c.grab().toImage();
        const QPoint at = (QPointF(mid.x(), mid.y()) * c.scale() +
                           (c.itemRect(0).topLeft() - QPointF(c.view().items[0].x, c.view().items[0].y) * c.scale()))
                              .toPoint();
        bool inked = false;
        for (int dx = -2; dx <= 2; ++dx)
            for (int dy = -2; dy <= 2; ++dy)
                inked = inked || qGray(img.pixel(at + QPoint(dx, dy))) < 200;
        QVERIFY2(inked, qPrintable(QStringLiteral("no edge at %1,%2").arg(at.x()).arg(at.y())));
    }

    void everyExampleOpens_data()
    {
        QTest::addColumn<QString>("file");
        for (const char *f : kExamples)
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void everyExampleOpens()
    {
        QFETCH(QString, file);
        views::MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/") + file));
        views::GraphCanvas *c = w.canvas();
        const auto &g = *w.graph();
        // Collapsed: one box per call of an outermost module, plus the nodes outside modules;
        // parameters and constants hidden (each counted on its reader), inputs and output shown.
        std::set<std::string> top;
        size_t loose = 0, hidden = 0;
        const auto constants = layout::constantNodes(g);
        for (ir::Node *n = g.first(); n; n = n->next()) {
            if (constants[n->id()]) {
                ++hidden;
                continue;
            }
            const auto &stack = layout::displayModules(n);
            auto it = std::find_if(stack.begin(), stack.end(), [](const ir::ModuleFrame &f) { return !f.path.empty(); });
            if (it == stack.end())
                ++loose;
            else
                top.insert(it->path);
        }
        size_t laterCalls = 0, counted = 0, standFor = 0; // a stack's box or lane stands for its members
        for (const auto &it : c->view().items) {
            standFor += std::max<size_t>(it.stacked, 1);
            laterCalls += it.kind == layout::ViewItem::Kind::Module && it.call > 0;
            counted += it.hiddenInputs;
            QVERIFY(!it.node || (it.node->op() != ir::OpKind::GetAttr && !constants[it.node->id()]));
            QVERIFY(!it.node || it.node->op() != ir::OpKind::Placeholder || it.kind == layout::ViewItem::Kind::Node);
        }
        QCOMPARE(standFor - laterCalls, top.size() + loose);
        QVERIFY(counted <= hidden); // constants nobody reads are dropped
        c->fitToView();
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
        auto shown = showExample(FXLENS_EXAMPLES "/tangle50_torch.json", 1200, 800);
        QVERIFY(shown);
        views::GraphCanvas &c = shown->canvas;
        while (!c.stacks().empty()) // single boxes here (tst_WideGraphs: stacks of them)
            c.unstack(0);
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
        const QRectF boxOnScreen = c.itemRect(box);
        std::map<std::string, QRectF> onScreen;
        for (size_t i = 0; i < c.view().items.size(); ++i)
            onScreen[c.view().items[i].label] = c.itemRect(int(i));
        QTest::mouseDClick(&c, Qt::LeftButton, {}, at.toPoint());
        QCOMPARE(toggled.count(), 1);
        QVERIFY(c.isExpanded(module));
        // The expanded module takes its box's place: its frame starts at the box's top (its contents
        // below the frame's title band), centred under it.
        bool framed = false;
        for (const auto &f : c.frames())
            framed = framed || QString::fromStdString(f.path) == module;
        QVERIFY(framed);
        QRectF contents;
        for (size_t i = 0; i < c.view().items.size(); ++i) {
            const auto &it = c.view().items[i];
            if (QString::fromStdString(it.module) == module || QString::fromStdString(it.module).startsWith(module + QLatin1Char('.')))
                contents = contents.united(c.itemRect(int(i)));
        }
        // (Or, where that is past an edge of the view, the frame brought whole into view.)
        const bool inPlace = std::abs(contents.center().x() - boxOnScreen.center().x()) < 1.5 &&
            std::abs(contents.top() - layout::kFrameTitle * c.scale() - boxOnScreen.top()) < 1.5;
        const bool broughtIn = !QRectF(c.rect()).contains(boxOnScreen) && QRectF(c.rect()).contains(contents);
        QVERIFY2(inPlace || broughtIn,
                 qPrintable(QStringLiteral("%1,%2 vs %3,%4")
                                .arg(contents.center().x())
                                .arg(contents.top())
                                .arg(boxOnScreen.center().x())
                                .arg(boxOnScreen.top())));
        // Nothing else moves on screen but what lies below the module (straight down) or beside it
        // (everything moves with the view where the frame is brought into view).
        size_t still = broughtIn ? 1 : 0;
        for (size_t i = 0; i < c.view().items.size() && inPlace; ++i) {
            const auto o = onScreen.find(c.view().items[i].label);
            if (o == onScreen.end())
                continue;
            const QRectF now = c.itemRect(int(i)), was = o->second;
            if (was.bottom() <= boxOnScreen.top()) {
                QVERIFY2((now.topLeft() - was.topLeft()).manhattanLength() < 1.5, c.view().items[i].label.c_str());
                ++still;
            } else if (was.top() >= boxOnScreen.bottom()) {
                QVERIFY2(std::abs(now.left() - was.left()) < 1.5 && now.top() >= was.top() - 1.5, c.view().items[i].label.c_str());
            }
        }
        QVERIFY(still > 0);
        // Its direct nodes and one box per child module replace the box.
        std::set<std::string> children;
        size_t direct = 0;
        for (ir::Node *n = shown->graph->first(); n; n = n->next()) {
            const auto &stack = layout::displayModules(n);
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
        for (size_t i = 0; i < c.view().items.size() && inPlace; ++i) // collapsed again: the box is back where it was
            if (QString::fromStdString(c.view().items[i].module) == module && c.view().items[i].kind == layout::ViewItem::Kind::Module)
                QVERIFY((c.itemRect(int(i)).topLeft() - boxOnScreen.topLeft()).manhattanLength() < 1.5);

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

    /// The Patterns panel lists every pattern with its matches; choosing one outlines a match.
    void windowHighlightsMatches()
    {
        views::MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle50_torch.json")));
        auto *patterns = w.findChild<QListWidget *>(QStringLiteral("patternList"));
        auto *matches = w.findChild<QListWidget *>(QStringLiteral("matchList"));
        QVERIFY(patterns && matches);
        QTRY_VERIFY_WITH_TIMEOUT(patterns->count() > 50, kSlowWait); // counted after the first frame
        int row = -1;
        for (int i = 0; i < patterns->count(); ++i)
            if (patterns->item(i)->data(Qt::UserRole).toString() == QLatin1String("split_cat"))
                row = i;
        QVERIFY(row >= 0);
        QVERIFY2(patterns->item(row)->text().contains(QStringLiteral("(50)")), qPrintable(patterns->item(row)->text()));
        patterns->setCurrentRow(row);
        QCOMPARE(matches->count(), 50);
        views::GraphCanvas *c = w.canvas();
        int anchors = 0, outlined = 0;
        for (size_t i = 0; i < c->view().items.size(); ++i) {
            anchors += c->highlightOf(int(i)) == 2;
            outlined += c->highlightOf(int(i)) >= 1;
        }
        QCOMPARE(anchors, 1);
        QVERIFY(outlined > 1);
        QVERIFY(!c->selectedLabel().isEmpty());
        QVERIFY(c->exportPng(shots() + "window_match_zoomed.png"));
        QVERIFY(w.grab().save(shots() + "window_tangle50.png"));
        matches->setCurrentRow(3);
        QCOMPARE(c->selectedLabel(), matches->item(3)->text().section(QLatin1Char(':'), 0, 0));
        // The inspector's links select the node they name.
        auto *inspector = w.findChild<QTextBrowser *>();
        QVERIFY(inspector && inspector->toHtml().contains(QStringLiteral("href=\"node:")));
    }

    /// Graphviz dot runs off the GUI thread and replaces the layered positions; a cancelled run is
    /// discarded.
    void graphvizLayoutOffThread()
    {
#ifndef FXLENS_HAVE_GRAPHVIZ
        QSKIP("built without Graphviz");
#endif
        auto shown = showExample(FXLENS_EXAMPLES "/transformer_fx.json", 900, 700);
        QVERIFY(shown);
        views::GraphCanvas &c = shown->canvas;
        c.expandAll();
        const auto layered = c.view().items;
        QSignalSpy finished(&c, &views::GraphCanvas::layoutFinished);
        QSignalSpy started(&c, &views::GraphCanvas::layoutStarted);
        c.setEngine(views::GraphCanvas::Engine::Graphviz);
        QCOMPARE(started.count(), 1);
        QVERIFY(c.layoutRunning());
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        bool moved = false;
        for (size_t i = 0; i < layered.size(); ++i)
            moved = moved || std::abs(layered[i].x - c.view().items[i].x) > 1 || std::abs(layered[i].y - c.view().items[i].y) > 1;
        QVERIFY(moved);
        for (const auto &it : c.view().items)
            QVERIFY(it.x >= 0 && it.y >= 0 && it.x + it.w <= c.view().width + 1e-6 && it.y + it.h <= c.view().height + 1e-6);
        QVERIFY(c.exportPng(shots() + "transformer_fx_graphviz.png"));
        // Cancel: collapse (a new layout starts), cancel it, and the layered positions stay.
        finished.clear();
        c.collapseAll();
        const auto before = c.view().items;
        QVERIFY(c.layoutRunning());
        c.cancelLayout();
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QTest::qWait(1500); // the thread finishes; its result must not land
        QCOMPARE(c.view().items.size(), before.size());
        for (size_t i = 0; i < before.size(); ++i)
            QCOMPARE(c.view().items[i].x, before[i].x);
    }

    void minimapAndTheme()
    {
        views::MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/resnet50_fx.json.gz")));
        views::GraphCanvas *c = w.canvas();
        c->expandAll();
        c->zoomBy(8.0, QPointF(10, 10));
        const QRect mm = c->minimapRect();
        QVERIFY(mm.isValid() && c->rect().contains(mm));
        // Clicking the minimap's bottom moves the view there.
        const double before = c->itemRect(0).top();
        QTest::mouseClick(c, Qt::LeftButton, {}, QPoint(mm.center().x(), mm.bottom() - 2));
        QVERIFY(c->itemRect(0).top() < before - 100);
        w.setDarkTheme(true);
        c->expandAll();
        QVERIFY(c->palette().color(QPalette::Base).lightness() < 100);
        QVERIFY(w.grab().save(shots() + "window_resnet50_dark.png"));
        w.setDarkTheme(false);
    }

    void highlightMatchesAndExport()
    {
        auto r = io::readGraphFile(FXLENS_EXAMPLES "/tangle4_fx.json");
        QVERIFY(r.ok());
        ir::Graph &g = *r.value();
        rewrite::PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
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

    /// `fxlens GRAPH --export out.svg|out.png [--scale S]` writes the canvas' picture without a
    /// display (no QT_QPA_PLATFORM, no DISPLAY) and quits; a bad scale or suffix is refused.
    void headlessExport()
    {
        QTemporaryDir dir;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        auto run = [&](const QStringList &args, QString *out = nullptr) {
            QProcess p;
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(FXLENS_APP), args);
            if (!p.waitForFinished(60000))
                return -1;
            if (out)
                *out = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
            return p.exitCode();
        };
        const QString graph = QStringLiteral(FXLENS_EXAMPLES "/resnet50_aten.json.gz");
        const QString svg = dir.filePath(QStringLiteral("r.svg")), png = dir.filePath(QStringLiteral("r.png"));
        QString out;
        QCOMPARE(run({graph, QStringLiteral("--export"), svg}, &out), 0);
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.contains("<svg") && text.contains("layer4") && text.contains("fc"));
        QVERIFY(!text.contains("conv1_weight")); // constants hidden by default
        QCOMPARE(run({graph, QStringLiteral("--export"), png, QStringLiteral("--scale"), QStringLiteral("2")}, &out), 0);
        QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(run({graph, QStringLiteral("--export"), dir.filePath(QStringLiteral("r1.png"))}), 0);
        QImage one(dir.filePath(QStringLiteral("r1.png")));
        QVERIFY(std::abs(image.width() - 2 * one.width()) <= 2 && std::abs(image.height() - 2 * one.height()) <= 2);
        QVERIFY(run({graph, QStringLiteral("--export"), dir.filePath(QStringLiteral("r.txt"))}, &out) != 0);
        QVERIFY(out.contains(QStringLiteral(".svg or .png")));
        QVERIFY(run({graph, QStringLiteral("--export"), png, QStringLiteral("--scale"), QStringLiteral("0")}, &out) != 0);
        QVERIFY(run({QStringLiteral("/nonexistent.json"), QStringLiteral("--export"), png}, &out) != 0);
        QVERIFY(out.contains(QStringLiteral("nonexistent.json")));
    }

    /// Tooltips on nodes (with the parameters they read) and on edges (the value they carry);
    /// the selection's in and out edges; search hits outlined; the legend lists the categories.
    void tooltipsSelectionSearch()
    {
        auto shown = showExample(FXLENS_EXAMPLES "/transformer_aten.json", 1200, 900);
        QVERIFY(shown);
        views::GraphCanvas &c = shown->canvas;
        c.expandAll();
        c.fitToView();
        int reader = -1;
        for (size_t i = 0; i < c.view().items.size(); ++i)
            if (c.view().items[i].hiddenInputs > 0)
                reader = int(i);
        QVERIFY(reader >= 0);
        const QString tip = c.toolTipAt(c.itemRect(reader).center());
        QVERIFY2(tip.contains(QStringLiteral("hidden parameter")) && tip.contains(QStringLiteral("weight")), qPrintable(tip));
        // An edge's tooltip: hover the middle of its route.
        const auto &e = c.view().edges.front();
        const auto &p0 = e.route[e.route.size() - 2], &p1 = e.route.back();
        const QPointF mid = c.itemRect(0).topLeft() - QPointF(c.view().items[0].x, c.view().items[0].y) * c.scale() +
            QPointF((p0.x + p1.x) / 2, (p0.y + p1.y) / 2) * c.scale();
        QVERIFY(c.edgeAt(mid) >= 0);
        QVERIFY2(c.toolTipAt(mid).contains(QStringLiteral("→")), qPrintable(c.toolTipAt(mid)));
        // Search hits.
        std::vector<const ir::Node *> hits;
        for (const ir::Node *n = shown->graph->first(); n; n = n->next())
            if (n->target().find("softmax") != std::string::npos)
                hits.push_back(n);
        QVERIFY(!hits.empty());
        c.setSearchHits(hits);
        QVERIFY(c.isSearchHit(c.itemOf(hits.front())));
        QVERIFY(!c.isSearchHit(0) || c.view().items[0].node == hits.front());
        // Anchors: a match's anchor and members, and candidate anchors, say so on hover.
        const ir::Node *softmax = hits.front(), *scores = softmax->inputNodes().front();
        c.setHighlight({scores, softmax}, softmax);
        QVERIFY(c.toolTipAt(c.itemRect(c.itemOf(softmax)).center()).contains(QStringLiteral("anchor of the highlighted match")));
        QVERIFY(c.toolTipAt(c.itemRect(c.itemOf(scores)).center()).contains(QStringLiteral("part of the highlighted match")));
        c.setHighlight({}, nullptr);
        c.setMarked({softmax});
        QVERIFY(c.toolTipAt(c.itemRect(c.itemOf(softmax)).center()).contains(QStringLiteral("candidate anchor")));
        QVERIFY(!c.toolTipAt(c.itemRect(c.itemOf(scores)).center()).contains(QStringLiteral("anchor")));
        c.setMarked({});
        // Colours by category and the legend (drawn; categories distinct).
        QVERIFY(views::GraphCanvas::categoryColour(layout::OpCategory::MatMulConv, false) !=
                views::GraphCanvas::categoryColour(layout::OpCategory::Elementwise, false));
        QVERIFY(c.legendVisible());
        QVERIFY(c.exportPng(shots() + QStringLiteral("transformer_aten_legend.png")));
        // Constants on demand.
        const size_t before = c.view().items.size();
        c.setShowConstants(true);
        QVERIFY(c.view().items.size() > before);
        c.setShowConstants(false);
        QCOMPARE(c.view().items.size(), before);
    }

    /// Expanded modules get nested frames with their name around their own items only; double-
    /// clicking a frame folds its module.
    void moduleFrames()
    {
        for (const char *file : {"resnet50_fx.json.gz", "resnet50_aten.json.gz", "tangle50_aten.json"}) {
            auto shown = showExample(std::string(FXLENS_EXAMPLES "/") + file, 1200, 900);
            QVERIFY(shown);
            views::GraphCanvas &c = shown->canvas;
            c.expandAll();
            QVERIFY2(!c.frames().empty(), file);
            for (const auto &f : c.frames()) {
                auto member = [&](const layout::ViewItem &it) { return it.module == f.path || it.module.rfind(f.path + ".", 0) == 0; };
                size_t inside = 0;
                for (const auto &it : c.view().items) {
                    const QRectF rect(it.x, it.y, it.w, it.h);
                    if (member(it)) {
                        QVERIFY2(f.shape.contains(rect), qPrintable(QString::fromStdString(f.path + " / " + it.label)));
                        ++inside;
                    } else {
                        // A node of another module is never drawn inside this frame.
                        QVERIFY2(!f.shape.contains(rect.center()),
                                 qPrintable(QStringLiteral("%1: %2 inside the frame of %3")
                                                .arg(QString::fromLatin1(file), QString::fromStdString(it.label),
                                                     QString::fromStdString(f.path))));
                    }
                }
                QCOMPARE(inside, f.members);
                // A child's frame lies inside its parent's.
                const size_t dot = f.path.rfind('.');
                if (dot != std::string::npos)
                    for (const auto &p : c.frames())
                        if (p.path == f.path.substr(0, dot))
                            QVERIFY2(f.shape.subtracted(p.shape).isEmpty(), // nothing of the child outside its parent
                                     qPrintable(QString::fromStdString(f.path + " in " + p.path)));
            }
        }
        auto shown = showExample(FXLENS_EXAMPLES "/resnet50_fx.json.gz", 1200, 900);
        QVERIFY(shown);
        views::GraphCanvas &c = shown->canvas;
        QVERIFY(c.grab().save(shots() + QStringLiteral("expand_in_place_before.png")));
        c.setExpanded(QStringLiteral("layer1"), true);
        QVERIFY(c.grab().save(shots() + QStringLiteral("expand_in_place_after.png")));
        c.fitToView();
        QCOMPARE(c.frames().size(), size_t(1));
        // The frame's title band (above its first row of items) folds it on double-click.
        const QRectF fr = c.frames().front().rect;
        const QPointF title = (fr.topLeft() + QPointF(fr.width() / 2, 4)) * c.scale() +
            (c.itemRect(0).topLeft() - QPointF(c.view().items[0].x, c.view().items[0].y) * c.scale());
        QCOMPARE(c.frameAt(title), 0);
        QTest::mouseDClick(&c, Qt::LeftButton, {}, title.toPoint());
        QVERIFY(!c.isExpanded(QStringLiteral("layer1")));
        QVERIFY(c.frames().empty());
    }

    /// After a step the picture stays put: unchanged nodes where they were, the new ones green in
    /// free places, the removed ones red ghosts where they were; Re-layout starts afresh.
    void stepDiffKeepsPlaces()
    {
        views::MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        views::GraphCanvas *c = w.canvas();
        c->expandAll();
        std::map<std::string, QRectF> before;
        for (const auto &it : c->view().items)
            before[it.label] = QRectF(it.x, it.y, it.w, it.h);
        QVERIFY(w.debugger()->applySelected());
        std::set<std::string> now;
        size_t kept = 0, added = 0;
        for (size_t i = 0; i < c->view().items.size(); ++i) {
            const auto &it = c->view().items[i];
            now.insert(it.label);
            const QRectF r(it.x, it.y, it.w, it.h);
            if (auto b = before.find(it.label); b != before.end()) {
                QCOMPARE(r.topLeft(), b->second.topLeft()); // unchanged: where it was
                ++kept;
            } else {
                QCOMPARE(c->diffOf(int(i)), views::GraphCanvas::DiffMark::Added);
                ++added;
            }
        }
        size_t removed = 0;
        for (const auto &[label, r] : before)
            removed += !now.count(label);
        QVERIFY(kept > 0 && added + removed > 0);
        QCOMPARE(c->ghosts().size(), removed);
        // Nothing overlaps: items with each other and with the ghosts.
        std::vector<QRectF> boxes;
        for (const auto &it : c->view().items)
            boxes.emplace_back(it.x, it.y, it.w, it.h);
        for (const auto &g : c->ghosts())
            boxes.emplace_back(g.x, g.y, g.w, g.h);
        for (size_t a = 0; a < boxes.size(); ++a)
            for (size_t b = a + 1; b < boxes.size(); ++b)
                QVERIFY2(!boxes[a].adjusted(1, 1, -1, -1).intersects(boxes[b].adjusted(1, 1, -1, -1)),
                         qPrintable(QStringLiteral("%1 / %2").arg(a).arg(b)));
        QCOMPARE(layout::measureLayout(c->view(), 0).edgesThroughItems, size_t(0));
        QVERIFY(QDir().mkpath(shots()));
        QVERIFY(c->exportPng(shots() + QStringLiteral("step_diff_tangle4.png")));
        QVERIFY(c->exportScenePng(shots() + QStringLiteral("step_diff_tangle4_scene.png"), 0.5));
        c->relayoutFresh();
        QVERIFY(c->ghosts().empty());
        for (size_t i = 0; i < c->view().items.size(); ++i)
            QCOMPARE(c->diffOf(int(i)), views::GraphCanvas::DiffMark::None);
        // Undo: back to the previous picture's places for what both versions have.
        c->setStableLayout(false);
        QVERIFY(w.debugger()->undo());
        QVERIFY(c->ghosts().empty());
    }
};

QTEST_MAIN(TestGraphCanvas)
#include "tst_GraphCanvas.moc"
