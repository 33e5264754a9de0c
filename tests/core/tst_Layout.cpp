// SPDX-License-Identifier: MIT
// The canvas' layered layout (core/layout/Layered): views with collapsed and expanded modules, the
// layer of every edge, no overlap within a layer, wrapping of wide layers.
#include "io/GraphJson.h"
#include "layout/Layered.h"

#include <QDir>
#include <QtTest>

#include <map>

using namespace fxlens;

namespace {

std::unique_ptr<ir::Graph> example(const char *name)
{
    auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES "/") + name);
    return r ? std::move(r.value()) : nullptr;
}

bool overlap(const layout::ViewItem &a, const layout::ViewItem &b)
{
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

} // namespace

class TestLayout : public QObject {
    Q_OBJECT
private Q_SLOTS:

    /// Two sibling modules expanded side by side (tangle4's blocks.2 and blocks.3), with boxes at
    /// the root that the layers' order puts right of blocks.3's frame: the frames make room for
    /// each other without pushing the rest ever further right (the scene about as wide as its
    /// widest layer, not tens of thousands of pixels), and nothing overlaps.
    void siblingFramesKeepTheSceneCompact()
    {
        auto g = example("tangle4_fx.json");
        QVERIFY(g);
        auto v = layout::buildView(*g, {"blocks.2", "blocks.3"});
        layout::layeredLayout(v);
        std::map<int, double> rowWidth; // per layer: its items side by side, with the gaps
        for (const auto &it : v.items)
            rowWidth[it.layer] += it.w + 14;
        double widest = 0;
        for (const auto &[layer, w] : rowWidth)
            widest = std::max(widest, w);
        QVERIFY2(v.width < 1.5 * widest, qPrintable(QStringLiteral("%1 wide, the widest layer %2").arg(v.width).arg(widest)));
        for (size_t i = 0; i < v.items.size(); ++i)
            for (size_t j = i + 1; j < v.items.size(); ++j)
                QVERIFY2(!overlap(v.items[i], v.items[j]), qPrintable(QString::fromStdString(v.items[i].label + " / " + v.items[j].label)));
        std::string why;
        QVERIFY2(layout::framesTrue(v, &why), why.c_str());
    }
    /// Collapsed: every node shows as its outermost collapsed module's box (or itself at the root);
    /// expanding a module replaces its box by its children.
    void viewsFollowExpandedModules()
    {
        auto g = example("tangle4_fx.json");
        QVERIFY(g);
        auto collapsed = layout::buildView(*g, {});
        auto expanded = layout::buildView(*g, layout::allModules(*g));
        QVERIFY(collapsed.items.size() < expanded.items.size());
        size_t modules = 0, nodes = 0;
        for (const auto &it : collapsed.items)
            (it.kind == layout::ViewItem::Kind::Module ? modules : nodes) += 1;
        QVERIFY(modules > 0);
        for (const auto &it : expanded.items)
            QVERIFY(it.kind == layout::ViewItem::Kind::Node);
        QCOMPARE(expanded.items.size(), g->size());
        // Every node of the graph maps to an item of the view, and collapsed items count their nodes.
        size_t counted = 0;
        for (const auto &it : collapsed.items)
            counted += it.nodeCount;
        QCOMPARE(counted, g->size());
        for (const ir::Node *n = g->first(); n; n = n->next())
            QVERIFY(collapsed.itemOfNode[n->id()] >= 0);
    }

    /// Layers: every edge goes down at least one layer, items of a layer do not overlap, and the
    /// scene holds every item.
    void edgesGoDownAndItemsDoNotOverlap()
    {
        auto g = example("transformer_fx.json");
        QVERIFY(g);
        auto v = layout::buildView(*g, layout::allModules(*g));
        layout::layeredLayout(v);
        for (const auto &e : v.edges)
            QVERIFY2(v.items[e.from].layer < v.items[e.to].layer,
                     qPrintable(QString::fromStdString(v.items[e.from].label + " -> " + v.items[e.to].label)));
        std::map<int, std::vector<const layout::ViewItem *>> byLayer;
        for (const auto &it : v.items) {
            byLayer[it.layer].push_back(&it);
            QVERIFY(it.w > 0 && it.h > 0);
            QVERIFY(it.x >= 0 && it.y >= 0 && it.x + it.w <= v.width + 1e-6 && it.y + it.h <= v.height + 1e-6);
        }
        for (const auto &[layer, items] : byLayer)
            for (size_t i = 0; i < items.size(); ++i)
                for (size_t j = i + 1; j < items.size(); ++j)
                    QVERIFY2(!overlap(*items[i], *items[j]), qPrintable(QString::fromStdString(items[i]->label + " / " + items[j]->label)));
    }

    /// A layer wider than the wrap width continues on further rows instead of one very wide row.
    void wideLayersWrap()
    {
        auto g = example("tangle50_torch.json");
        QVERIFY(g);
        auto v = layout::buildView(*g, layout::allModules(*g));
        layout::LayoutOptions narrow;
        narrow.minWrapWidth = 400;
        narrow.wrapItems = 0; // views this small do not wrap by default
        layout::layeredLayout(v, narrow);
        auto wide = layout::buildView(*g, layout::allModules(*g));
        layout::LayoutOptions noWrap;
        noWrap.minWrapWidth = 1e9;
        layout::layeredLayout(wide, noWrap);
        QVERIFY2(v.width < wide.width, qPrintable(QStringLiteral("%1 vs %2").arg(v.width).arg(wide.width)));
        QVERIFY(v.height > wide.height);
    }

    /// Module boxes are ranked by their inputs on every IR: in ResNet-50 from torch.fx and from
    /// torch.export/ATen (where each box's first node is a weight read early), conv1 is above
    /// layer1 … layer4 above fc, and every edge goes down.
    void moduleBoxesFollowDataFlow()
    {
        for (const char *file :
             {"resnet50_fx.json.gz", "resnet50_aten.json.gz", "ctr_dynamo.json", "transformer_dynamo.json", "tangle50_aten.json"}) {
            auto g = example(file);
            QVERIFY(g);
            auto v = layout::buildView(*g, {});
            layout::layeredLayout(v);
            for (const auto &e : v.edges) {
                QVERIFY2(!e.back, file);
                QVERIFY2(v.items[e.from].layer < v.items[e.to].layer,
                         qPrintable(QStringLiteral("%1: %2 -> %3")
                                        .arg(QString::fromLatin1(file), QString::fromStdString(v.items[e.from].label),
                                             QString::fromStdString(v.items[e.to].label))));
            }
            if (std::string(file).rfind("resnet50", 0) != 0)
                continue;
            auto y = [&](const std::string &label) {
                for (const auto &it : v.items)
                    if (it.label == label)
                        return it.y;
                return -1.0;
            };
            QVERIFY2(y("conv1") >= 0 && y("conv1") < y("layer1") && y("layer1") < y("layer2") && y("layer3") < y("layer4") &&
                         y("layer4") < y("fc"),
                     file);
        }
    }

    /// Parameters and constants are hidden by default and counted on their readers; the toggle
    /// shows them; the model input is always an item of its own.
    void constantsHiddenInputsShown()
    {
        auto g = example("resnet50_aten.json.gz");
        QVERIFY(g);
        auto v = layout::buildView(*g, {});
        const auto hiddenNodes = layout::constantNodes(*g);
        size_t constants = 0, read = 0;
        for (const ir::Node *n = g->first(); n; n = n->next()) {
            QVERIFY(!layout::isConstant(n, *g) || hiddenNodes[n->id()]);
            constants += hiddenNodes[n->id()];
            read += hiddenNodes[n->id()] && v.itemOfNode[n->id()] >= 0;
            // A constant read by a node that shows is on that node's item.
            if (layout::isConstant(n, *g))
                for (const ir::Node *u : n->users())
                    if (!hiddenNodes[u->id()]) {
                        QVERIFY(v.itemOfNode[n->id()] >= 0);
                        break;
                    }
        }
        QVERIFY(constants >= 300);
        size_t counted = 0;
        bool input = false;
        for (const auto &it : v.items) {
            QVERIFY(!it.node || it.node->op() != ir::OpKind::GetAttr);
            counted += it.hiddenInputs;
            input = input || (it.node && it.node->op() == ir::OpKind::Placeholder);
        }
        QVERIFY(input);
        QCOMPARE(counted, read); // every read constant is on its reader; unread ones (num_batches_tracked) are gone
        QVERIFY(v.items.size() < 20);
        layout::ViewOptions all;
        all.showConstants = true;
        auto shown = layout::buildView(*g, layout::allModules(*g), all);
        auto hidden = layout::buildView(*g, layout::allModules(*g));
        QCOMPARE(shown.items.size(), hidden.items.size() + constants);
        QCOMPARE(layout::opCategory(g->find("conv1_weight")), layout::OpCategory::Constant);
    }

    /// What is computed from constants alone (a transposed weight, position ids from arange) is
    /// hidden with them and counted on the node that reads it; what reads a model input, or makes
    /// fresh random numbers, is not.
    void derivedConstantsHidden()
    {
        const std::string text = R"({"format": "fxlens-graph", "version": 1, "name": "t", "ir": "aten", "nodes": [
          {"name": "x", "op": "placeholder", "target": "x", "args": []},
          {"name": "w", "op": "get_attr", "target": "lin.weight", "args": []},
          {"name": "wt", "op": "call_function", "target": "aten.t.default", "args": [{"node": "w"}]},
          {"name": "mm", "op": "call_function", "target": "aten.mm.default", "args": [{"node": "x"}, {"node": "wt"}]},
          {"name": "pos", "op": "call_function", "target": "aten.arange.default", "args": [4]},
          {"name": "pos2", "op": "call_function", "target": "aten.unsqueeze.default", "args": [{"node": "pos"}, 0]},
          {"name": "add", "op": "call_function", "target": "aten.add.Tensor", "args": [{"node": "mm"}, {"node": "pos2"}]},
          {"name": "noise", "op": "call_function", "target": "aten.randn.default", "args": [[4]]},
          {"name": "add2", "op": "call_function", "target": "aten.add.Tensor", "args": [{"node": "add"}, {"node": "noise"}]},
          {"name": "output", "op": "output", "target": "output", "args": [{"node": "add2"}]}]})";
        auto g = io::parseGraphJson(text, "derived.json");
        QVERIFY2(g, g ? "" : g.error().toString().c_str());
        const ir::Graph &graph = *g.value();
        const auto hidden = layout::constantNodes(graph);
        auto hiddenByName = [&](const char *name) { return hidden[graph.find(name)->id()] != 0; };
        for (const char *name : {"w", "wt", "pos", "pos2"})
            QVERIFY2(hiddenByName(name), name);
        for (const char *name : {"x", "mm", "add", "noise", "add2", "output"})
            QVERIFY2(!hiddenByName(name), name);
        auto v = layout::buildView(graph, {});
        QCOMPARE(v.items.size(), size_t(6));
        const auto &mm = v.items[size_t(v.itemOfNode[graph.find("mm")->id()])];
        const auto &add = v.items[size_t(v.itemOfNode[graph.find("add")->id()])];
        QCOMPARE(mm.hiddenInputs, 2u);  // w through wt
        QCOMPARE(add.hiddenInputs, 2u); // pos through pos2
        QVERIFY(mm.hiddenSummary.find("wt") != std::string::npos);
        QCOMPARE(v.itemOfNode[graph.find("w")->id()], v.itemOfNode[graph.find("mm")->id()]);
        layout::ViewOptions all;
        all.showConstants = true;
        QCOMPARE(layout::buildView(graph, {}, all).items.size(), graph.size());
    }

    /// Expanding a module in place: every other item keeps its position, the module's contents
    /// take its place below its top (nothing overlaps, nothing is drawn through), and collapsing
    /// it again brings back the box where the contents began.
    void expandInPlaceKeepsTheRest()
    {
        auto g = example("resnet50_fx.json.gz");
        QVERIFY(g);
        auto before = layout::buildView(*g, {});
        layout::layeredLayout(before);
        auto after = layout::buildView(*g, {"layer2"});
        QVERIFY(layout::placeInPlace(after, before));
        std::map<std::string, const layout::ViewItem *> old;
        for (const auto &it : before.items)
            old[it.label] = &it;
        const layout::ViewItem *box = old.at("layer2");
        size_t kept = 0, inside = 0;
        for (const auto &it : after.items) {
            if (it.module.rfind("layer2.", 0) == 0 || it.module == "layer2") {
                ++inside;
                QVERIFY(it.y >= box->y - 1e-6); // below the box's top
                continue;
            }
            auto o = old.find(it.label);
            QVERIFY2(o != old.end(), it.label.c_str());
            ++kept;
            const auto &was = *o->second;
            if (was.y + was.h <= box->y) // above the module: exactly where it was
                QVERIFY2(it.x == was.x && it.y == was.y, it.label.c_str());
            else if (was.y >= box->y + box->h) // below: moved straight down
                QVERIFY2(it.x == was.x && it.y >= was.y, it.label.c_str());
            else // beside: moved aside
                QVERIFY2(it.y == was.y, it.label.c_str());
        }
        QCOMPARE(kept, before.items.size() - 1);
        QVERIFY(inside > 1);
        for (size_t a = 0; a < after.items.size(); ++a)
            for (size_t b = a + 1; b < after.items.size(); ++b)
                QVERIFY(!overlap(after.items[a], after.items[b]));
        QCOMPARE(layout::measureLayout(after).edgesThroughItems, size_t(0));
        auto again = layout::buildView(*g, {});
        QVERIFY(layout::placeInPlace(again, after));
        for (const auto &it : again.items)
            if (it.label == "layer2")
                QCOMPARE(it.y, box->y);
        // A view of another graph is not "the same picture with a module opened".
        auto other = example("tangle4_fx.json");
        auto unrelated = layout::buildView(*other, {});
        QVERIFY(!layout::placeInPlace(unrelated, before));
    }

    /// BERT opened one module at a time down to layer 0's self-attention: each opens in place, and
    /// the frames it opens stay clear of the row above (framesTrue: no item in a title band).
    void expandInPlaceFramesTrue()
    {
        auto g = example("bert_base_dynamo.json.gz");
        QVERIFY(g);
        std::set<std::string> expanded;
        auto v = layout::buildView(*g, expanded);
        layout::layeredLayout(v);
        for (const char *m : {"model", "model.encoder", "model.encoder.layer.0", "model.encoder.layer.0.attention",
                              "model.encoder.layer.0.attention.self"}) {
            expanded.insert(m);
            auto next = layout::buildView(*g, expanded);
            QVERIFY2(layout::placeInPlace(next, v), m);
            std::string why;
            QVERIFY2(layout::framesTrue(next, &why), (std::string(m) + ": " + why).c_str());
            v = std::move(next);
        }
    }

    /// No edge is drawn through an item, in the default and the expanded view of every example of
    /// up to 2,000 items; each route leaves its source at the bottom and enters its target at the top.
    void noEdgeThroughItems()
    {
        const QDir dir(QStringLiteral(FXLENS_EXAMPLES));
        auto files = dir.entryList({QStringLiteral("*.json"), QStringLiteral("*.json.gz")}, QDir::Files, QDir::Name);
        files.removeIf([](const QString &f) { return f.contains(QStringLiteral(".fxprof.")); });
        size_t views = 0;
        for (const QString &f : files) {
            auto g = example(f.toStdString().c_str());
            QVERIFY(g);
            for (const bool expand : {false, true}) {
                auto v = layout::buildView(*g, expand ? layout::allModules(*g) : std::set<std::string>{});
                if (v.items.size() > 2000)
                    continue;
                layout::layeredLayout(v);
                const auto q = layout::measureLayout(v, 0);
                QVERIFY2(q.edgesThroughItems == 0,
                         qPrintable(QStringLiteral("%1: %2 edges through items").arg(f).arg(q.edgesThroughItems)));
                for (const auto &e : v.edges) {
                    const auto &a = v.items[e.from], &b = v.items[e.to];
                    QVERIFY(e.route.size() >= 2);
                    QCOMPARE(e.route.front().y, a.y + a.h);
                    QCOMPARE(e.route.back().y, b.y);
                    QVERIFY(e.route.back().x >= b.x && e.route.back().x <= b.x + b.w);
                }
                ++views;
            }
        }
        QVERIFY(views >= 20);
    }

    /// A module run more than once gets a box per call (its calls are not one box whose edges
    /// look like a cycle): ResNet-50's shared ReLU in each bottleneck.
    void sharedModuleCallsSeparate()
    {
        auto g = example("resnet50_fx.json.gz");
        QVERIFY(g);
        auto v = layout::buildView(*g, {"layer1", "layer1.0"});
        layout::layeredLayout(v);
        int calls = 0;
        for (const auto &it : v.items)
            if (it.module == "layer1.0.relu" || (it.node && it.node->target() == "layer1.0.relu"))
                ++calls;
        QCOMPARE(calls, 3);
        for (const auto &e : v.edges)
            QVERIFY(!e.back);
    }

    /// Op categories: what colours and the legend say.
    void opCategories()
    {
        auto g = example("transformer_aten.json");
        QVERIFY(g);
        std::map<layout::OpCategory, int> seen;
        for (const ir::Node *n = g->first(); n; n = n->next())
            ++seen[layout::opCategory(n)];
        for (auto c : {layout::OpCategory::Input, layout::OpCategory::Output, layout::OpCategory::Constant, layout::OpCategory::MatMulConv,
                       layout::OpCategory::Normalization, layout::OpCategory::ViewReshape, layout::OpCategory::Reduction})
            QVERIFY2(seen[c] > 0, layout::opCategoryName(c));
        QVERIFY(seen[layout::OpCategory::Other] * 10 < int(g->size())); // nearly every op has a category
    }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_Layout.moc"
