// SPDX-License-Identifier: MIT
// The canvas' layered layout (core/layout/Layered): views with collapsed and expanded modules, the
// layer of every edge, no overlap within a layer, wrapping of wide layers.
#include "io/GraphJson.h"
#include "layout/Layered.h"

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
        layout::layeredLayout(v, narrow);
        auto wide = layout::buildView(*g, layout::allModules(*g));
        layout::LayoutOptions noWrap;
        noWrap.minWrapWidth = 1e9;
        layout::layeredLayout(wide, noWrap);
        QVERIFY2(v.width < wide.width, qPrintable(QStringLiteral("%1 vs %2").arg(v.width).arg(wide.width)));
        QVERIFY(v.height > wide.height);
    }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_Layout.moc"
