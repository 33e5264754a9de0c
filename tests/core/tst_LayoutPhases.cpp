// SPDX-License-Identifier: MIT
// The layered layout's phases one at a time (core/layout/LayeredPhases.h, Mincross.h), on small
// views built by hand: layers, dummies and clusters, crossing counts and minimisation, coordinates.
#include "layout/LayeredPhases.h"
#include "layout/Mincross.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <initializer_list>

using namespace fxlens;
using namespace fxlens::layout;
using layered::LayeredState;
using layered::Layers;

namespace {

/// `n` items of 60 x 32 and the given edges.
ViewGraph view(size_t n, std::initializer_list<std::pair<uint32_t, uint32_t>> edges)
{
    ViewGraph v;
    for (size_t i = 0; i < n; ++i) {
        ViewItem it;
        it.label = "n" + std::to_string(i);
        it.w = 60;
        it.h = 32;
        v.items.push_back(std::move(it));
    }
    for (const auto &[from, to] : edges) {
        ViewEdge e;
        e.from = from;
        e.to = to;
        v.edges.push_back(e);
    }
    return v;
}

/// The phases up to the order within layers.
void slotsOf(LayeredState &s, Layering layering = Layering::LongestPath)
{
    layered::rankItems(s, layering);
    layered::addSlots(s);
    layered::findClusters(s);
}

int layer(const ViewGraph &v, uint32_t i) { return v.items[i].layer; }

} // namespace

class TestLayoutPhases : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// The topological order takes the smallest ready item first and breaks a cycle at the
    /// earliest item left.
    void topologicalOrder()
    {
        // 0 -> 2, 1 -> 2, 2 -> 3; 4 alone.
        layered::Adjacency out{{2}, {2}, {3}, {}, {}}, in{{}, {}, {0, 1}, {2}, {}};
        QCOMPARE(layered::topologicalOrder(out, in), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
        // A cycle 0 -> 1 -> 2 -> 0 and 3 -> 0: 3 is ready first, then the cycle breaks at 0.
        layered::Adjacency cout{{1}, {2}, {0}, {0}}, cin{{2, 3}, {0}, {1}, {}};
        QCOMPARE(layered::topologicalOrder(cout, cin), (std::vector<uint32_t>{3, 0, 1, 2}));
    }

    /// Every forward edge goes down at least one layer; the edge closing a cycle is a back edge.
    void ranksFollowDataFlow()
    {
        auto v = view(4, {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {0, 3}});
        LayeredState s(v);
        layered::rankItems(s, Layering::LongestPath);
        size_t back = 0;
        for (const auto &e : v.edges) {
            back += e.back;
            if (!e.back)
                QVERIFY(layer(v, e.from) < layer(v, e.to));
        }
        QCOMPARE(back, size_t(1));
        QVERIFY(v.edges[3].back); // 3 -> 1 comes after 1 in the order
        QCOMPARE(s.layers, 4);
        QCOMPARE(s.order, (std::vector<uint32_t>{0, 1, 2, 3}));
    }

    /// Longest path places a source (a weight read) just above its first reader, not in layer 0.
    void longestPathPlacesSourcesLate()
    {
        // 0 -> 1 -> 2 -> 3, and 4 (read only by 3).
        auto v = view(5, {{0, 1}, {1, 2}, {2, 3}, {4, 3}});
        LayeredState s(v);
        layered::rankItems(s, Layering::LongestPath);
        QCOMPARE(layer(v, 3), 3);
        QCOMPARE(layer(v, 4), 2);
    }

    /// Network simplex: no longer in total than longest path, every edge still down.
    void simplexShortensEdges()
    {
        auto total = [](const ViewGraph &v) {
            int sum = 0;
            for (const auto &e : v.edges)
                sum += v.items[e.to].layer - v.items[e.from].layer;
            return sum;
        };
        // A diamond with a long side: 0 -> 1 -> 2 -> 3 -> 4, 0 -> 5 -> 4, 6 -> 5.
        const std::initializer_list<std::pair<uint32_t, uint32_t>> edges{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 5}, {5, 4}, {6, 5}};
        auto lp = view(7, edges), ns = view(7, edges);
        LayeredState a(lp), b(ns);
        layered::rankItems(a, Layering::LongestPath);
        layered::rankItems(b, Layering::NetworkSimplex);
        for (const auto &e : ns.edges)
            QVERIFY(ns.items[e.from].layer < ns.items[e.to].layer);
        QVERIFY(total(ns) <= total(lp));
    }

    /// A long edge gets one dummy per layer it passes; long edges from one item share one bundle.
    void longEdgesShareADummyChain()
    {
        // 0 -> 1 -> 2 -> 3 -> 4, and the long edges 0 -> 3 and 0 -> 4.
        auto v = view(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 3}, {0, 4}});
        LayeredState s(v);
        slotsOf(s);
        QCOMPARE(s.trunks.size(), size_t(1)); // one bundle, from 0
        QCOMPARE(s.trunks[0].second, 3);      // through layers 1, 2, 3
        QCOMPARE(s.slots(), size_t(5 + 3));
        QCOMPARE(s.chains.size(), size_t(2));
        for (const auto &c : s.chains) {
            const auto &e = v.edges[c.edge];
            QCOMPARE(c.count, layer(v, e.to) - layer(v, e.from) - 1);
            QCOMPARE(c.first, s.trunks[0].first);
        }
        // Every ordering neighbour is one layer away.
        for (uint32_t i = 0; i < s.slots(); ++i)
            for (uint32_t d : s.down[i])
                QCOMPARE(s.layerOf[d], s.layerOf[i] + 1);
        QCOMPARE(s.up[4], (std::vector<uint32_t>{3, 7})); // from 3, and the bundle's last dummy
    }

    /// Clusters: each item's expanded module, with the modules around it, outermost first.
    void clustersNest()
    {
        auto v = view(4, {{0, 1}, {1, 2}, {2, 3}});
        v.items[1].cluster = "a.b";
        v.items[2].cluster = "a.c";
        v.items[3].cluster = "a";
        LayeredState s(v);
        slotsOf(s);
        QVERIFY(s.framed);
        QCOMPARE(s.clusterId[0], 0u);
        const auto &b = s.chainOf[s.clusterId[1]], &c = s.chainOf[s.clusterId[2]], &a = s.chainOf[s.clusterId[3]];
        QCOMPARE(b.size(), size_t(2));
        QCOMPARE(c.size(), size_t(2));
        QCOMPARE(a.size(), size_t(1));
        QCOMPARE(b[0], a[0]);
        QCOMPARE(c[0], a[0]);
        QVERIFY(b[1] != c[1]);
    }

    /// Crossings are the inversions of the edges between adjacent layers.
    void crossingsCount()
    {
        // Layer 0: 0, 1; layer 1: 2, 3; the edges 0 -> 3 and 1 -> 2 cross once.
        auto v = view(4, {{0, 3}, {1, 2}});
        LayeredState s(v);
        slotsOf(s);
        layered::Mincross mc(s);
        QCOMPARE(mc.crossingsOf(Layers{{0, 1}, {2, 3}}), size_t(1));
        QCOMPARE(mc.crossingsOf(Layers{{0, 1}, {3, 2}}), size_t(0));
        // The complete bipartite K(3,3) in any order: 3 choose 2 pairs above times 3 choose 2 below.
        auto k = view(6, {{0, 3}, {0, 4}, {0, 5}, {1, 3}, {1, 4}, {1, 5}, {2, 3}, {2, 4}, {2, 5}});
        LayeredState ks(k);
        slotsOf(ks);
        layered::Mincross kmc(ks);
        QCOMPARE(kmc.crossingsOf(Layers{{0, 1, 2}, {3, 4, 5}}), size_t(9));
        QCOMPARE(kmc.crossingsOf(Layers{{2, 1, 0}, {3, 4, 5}}), size_t(9));
    }

    /// Transposition alone removes a crossing two neighbours make; mincross finds a plane order.
    void mincrossUntangles()
    {
        // Two chains 0 -> 2 -> 4 and 1 -> 3 -> 5, placed crossed in the middle layer.
        auto v = view(6, {{0, 2}, {2, 4}, {1, 3}, {3, 5}});
        LayeredState s(v);
        slotsOf(s);
        layered::Mincross mc(s);
        Layers crossed{{0, 1}, {3, 2}, {4, 5}};
        QCOMPARE(mc.crossingsOf(crossed), size_t(2));
        mc.transpose(crossed, false);
        QCOMPARE(mc.crossingsOf(crossed), size_t(0));
        Layers again{{0, 1}, {3, 2}, {4, 5}};
        QCOMPARE(mc.run(again, false, 24), size_t(0));
        QCOMPARE(mc.crossingsOf(again), size_t(0));
    }

    /// A median sweep puts each slot under its neighbours above.
    void sweepFollowsMedians()
    {
        auto v = view(6, {{0, 5}, {1, 4}, {2, 3}});
        LayeredState s(v);
        slotsOf(s);
        layered::Mincross mc(s);
        Layers bl{{0, 1, 2}, {3, 4, 5}};
        mc.renumber(bl);
        mc.sweep(bl, true, false);
        QCOMPARE(bl[1], (std::vector<uint32_t>{5, 4, 3}));
    }

    /// In the grouped order a module's nodes stay together in each layer, outermost module first.
    void groupingKeepsModulesTogether()
    {
        // Layer 0: a source; layer 1: five nodes, modules alternating a, b, a, b, a.
        auto v = view(6, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}});
        for (uint32_t i : {1u, 3u, 5u})
            v.items[i].cluster = "a";
        for (uint32_t i : {2u, 4u})
            v.items[i].cluster = "b";
        LayeredState s(v);
        slotsOf(s);
        layered::Mincross mc(s);
        Layers bl{{0}, {2, 1, 4, 3, 5}};
        mc.renumber(bl);
        mc.group(bl[1]);
        QCOMPARE(bl[1], (std::vector<uint32_t>{2, 4, 1, 3, 5})); // b (mean index 1) before a (mean 8/3)
        layered::orderLayers(s, {});
        const auto &layer = s.byLayer[1];
        auto runs = 1;
        for (size_t k = 1; k < layer.size(); ++k)
            runs += s.clusterId[layer[k]] != s.clusterId[layer[k - 1]];
        QCOMPARE(runs, 2);
    }

    /// Whole modules trade places when that removes crossings.
    void blocksSwap()
    {
        // Layer 0: 0 then 1; layer 1: module a (2, 3) read from 1, module b (4, 5) read from 0.
        auto v = view(6, {{1, 2}, {1, 3}, {0, 4}, {0, 5}});
        v.items[2].cluster = v.items[3].cluster = "a";
        v.items[4].cluster = v.items[5].cluster = "b";
        LayeredState s(v);
        slotsOf(s);
        layered::Mincross mc(s);
        Layers bl{{0, 1}, {2, 3, 4, 5}};
        QCOMPARE(mc.crossingsOf(bl), size_t(4));
        QVERIFY(mc.swapBlocks(bl[1]));
        QCOMPARE(bl[1], (std::vector<uint32_t>{4, 5, 2, 3}));
        QCOMPARE(mc.crossingsOf(bl), size_t(0));
    }

    /// Coordinates: layers top to bottom, no overlap in a layer, rows centred; a wrapped layer
    /// keeps within the wrap width; long edges get a via point per dummy.
    void coordinatesDoNotOverlap()
    {
        // A source read by 12 items, each read by the sink; and one long edge 0 -> 14.
        auto v = view(15, {});
        for (uint32_t i = 1; i <= 12; ++i) {
            v.edges.push_back({0, i});
            v.edges.push_back({i, 13});
        }
        v.edges.push_back({13, 14});
        v.edges.push_back({0, 14});
        for (const bool wrap : {false, true}) {
            ViewGraph w = v;
            LayoutOptions o;
            if (wrap) {
                o.minWrapWidth = 300;
                o.wrapItems = 0;
            }
            LayeredState s(w);
            slotsOf(s);
            layered::orderLayers(s, o);
            layered::placeSlots(s, o);
            for (size_t a = 0; a < w.items.size(); ++a) {
                const auto &p = w.items[a];
                QVERIFY(p.x >= 0 && p.x + p.w <= w.width + 1e-9 && p.y + p.h <= w.height);
                for (size_t b = a + 1; b < w.items.size(); ++b) {
                    const auto &q = w.items[b];
                    QVERIFY(!(p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h));
                }
            }
            for (const auto &e : w.edges)
                QVERIFY(w.items[e.from].y + w.items[e.from].h <= w.items[e.to].y);
            double area = 0;
            for (const auto &it : w.items)
                area += (it.w + o.itemGap) * (it.h + o.layerGap);
            const double unwrapped = 12 * (60 + o.itemGap) + 6 + o.itemGap; // layer 1: 12 items and a dummy
            if (wrap)
                QVERIFY(w.width <= std::max(300.0, 2 * std::sqrt(area)) + o.itemGap && w.width < unwrapped);
            else
                QCOMPARE(w.width, unwrapped);
            const auto &longEdge = w.edges.back();
            QCOMPARE(longEdge.via.size(), size_t(2)); // through layers 1 and 2
            QVERIFY(longEdge.via[0].y < longEdge.via[1].y);
        }
    }
};

QTEST_GUILESS_MAIN(TestLayoutPhases)
#include "tst_LayoutPhases.moc"
