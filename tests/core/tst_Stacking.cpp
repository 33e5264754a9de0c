// SPDX-License-Identifier: MIT
// Stacks of repeated sibling modules (core/layout/Stacking): the structural fingerprint decides
// which siblings are identical; a stacked view draws them as one box with its lanes; a rewrite
// that batches many blocks' ops names their range as the new node's module (ir/ModuleRange).
#include "io/GraphJson.h"
#include "ir/ModuleRange.h"
#include "layout/Layered.h"
#include "layout/Stacking.h"

#include <QtTest>

using namespace fxlens;

namespace {

std::unique_ptr<ir::Graph> example(const char *name)
{
    auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES "/") + name);
    return r ? std::move(r.value()) : nullptr;
}

ir::Node *firstIn(ir::Graph &g, const std::string &module, const std::string &target)
{
    for (ir::Node *n = g.first(); n; n = n->next())
        if (n->meta().modulePath() == module && (target.empty() || n->target() == target))
            return n;
    return nullptr;
}

} // namespace

class TestStacking : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// tangle50's 50 blocks fingerprint alike (their nodes' names differ) and stack as one group;
    /// a block with one op changed (tanh -> sigmoid) gets another fingerprint and leaves the stack.
    void identicalSiblingsStackAndADifferentOneDoesNot()
    {
        auto g = example("tangle50_torch.json");
        QVERIFY(g);
        auto prints = layout::moduleFingerprints(*g);
        QCOMPARE(prints.at("blocks.0"), prints.at("blocks.49"));
        auto stacks = layout::findStacks(*g);
        QCOMPARE(stacks.size(), size_t(1));
        QCOMPARE(stacks[0].parent, std::string("blocks"));
        QCOMPARE(stacks[0].members.size(), size_t(50));
        QCOMPARE(stacks[0].members.front(), std::string("blocks.0"));
        QCOMPARE(stacks[0].members.back(), std::string("blocks.49"));
        QCOMPARE(ir::rangeLabel(stacks[0].parent, stacks[0].members), std::string("blocks.0\u201349"));

        ir::Node *tanh = firstIn(*g, "blocks.7", "torch.tanh");
        QVERIFY(tanh);
        g->setTarget(tanh, "torch.sigmoid");
        prints = layout::moduleFingerprints(*g);
        QVERIFY(prints.at("blocks.7") != prints.at("blocks.6"));
        QCOMPARE(prints.at("blocks.6"), prints.at("blocks.8"));
        stacks = layout::findStacks(*g);
        QCOMPARE(stacks.size(), size_t(1));
        QCOMPARE(stacks[0].members.size(), size_t(49));
        QVERIFY(std::find(stacks[0].members.begin(), stacks[0].members.end(), "blocks.7") == stacks[0].members.end());
        QCOMPARE(ir::rangeLabel(stacks[0].parent, stacks[0].members), std::string("blocks.0\u20136,8\u201349"));
        // Fewer siblings than the minimum: no stack.
        QVERIFY(layout::findStacks(*g, 51).empty());
    }

    /// The stacked view of tangle50: input, split, one lane of 50 getitems, one box for the 50
    /// blocks, the cat and the output; edges into and out of the stack stand for 50 each.
    void stackedViewIsOneColumn()
    {
        auto g = example("tangle50_torch.json");
        QVERIFY(g);
        layout::ViewOptions o;
        o.stacks = layout::findStacks(*g);
        auto v = layout::buildView(*g, {}, o);
        QCOMPARE(v.items.size(), size_t(6));
        const layout::ViewItem *box = nullptr, *lane = nullptr;
        for (const auto &it : v.items) {
            if (it.kind == layout::ViewItem::Kind::Module)
                box = &it;
            else if (it.stacked)
                lane = &it;
        }
        QVERIFY(box && lane);
        QCOMPARE(box->label, std::string("blocks.0\u201349 \u00d750"));
        QCOMPARE(box->stacked, size_t(50));
        QCOMPARE(lane->stacked, size_t(50));
        QCOMPARE(lane->label, std::string("getitem"));
        for (const ir::Node *n = g->first(); n; n = n->next())
            QVERIFY(v.itemOfNode[n->id()] >= 0);
        size_t fifty = 0;
        for (const auto &e : v.edges)
            fifty += e.count == 50;
        QCOMPARE(fifty, size_t(3)); // split -> getitems, getitems -> blocks, blocks -> cat
        // An expanded member shows on its own; the rest stay stacked.
        auto one = layout::buildView(*g, {"blocks.0"}, o);
        bool rest = false;
        for (const auto &it : one.items)
            rest = rest || it.label == "blocks.1\u201349 \u00d749";
        QVERIFY(rest);
    }

    /// A stack's boxes are runs of its members in program order: with blocks.7 open, or unlike the
    /// others, "blocks.0–6 ×7" comes before it and "blocks.8–49 ×42" after it (no range across it,
    /// no "(call 2)"). A step that regroups the stack leaves no ghost of the old box: its nodes are
    /// all still drawn.
    void stackBoxesAreRunsInProgramOrder()
    {
        auto g = example("tangle50_torch.json");
        QVERIFY(g);
        layout::ViewOptions o;
        o.stacks = layout::findStacks(*g);
        const auto boxes = [](const layout::ViewGraph &v) {
            std::vector<std::string> out;
            for (const auto &it : v.items)
                if (it.kind == layout::ViewItem::Kind::Module && ir::moduleParent(it.module) == "blocks") // not blocks.7's own
                    out.push_back(it.label);
            return out;
        };
        const std::vector<std::string> runs = {"blocks.0\u20136 \u00d77", "blocks.8\u201349 \u00d742"};
        const auto open = layout::buildView(*g, {"blocks.7"}, o);
        QCOMPARE(boxes(open), runs);
        auto before = layout::buildView(*g, {}, o);
        layout::layeredLayout(before);

        ir::Node *tanh = firstIn(*g, "blocks.7", "torch.tanh");
        QVERIFY(tanh);
        g->setTarget(tanh, "torch.sigmoid");
        o.stacks = layout::findStacks(*g);
        auto after = layout::buildView(*g, {}, o);
        QCOMPARE(boxes(after), (std::vector<std::string>{runs[0], "blocks.7", runs[1]}));
        const auto r = layout::placeStable(after, before, 1.0, {}, 100.0);
        QVERIFY(r.added.size() >= 3); // the runs, blocks.7 (and the getitem that feeds it alone)
        QVERIFY(r.removed.empty());   // "blocks.0–49 ×50" was regrouped, not removed
    }

    /// A node that stands in for the same op of many blocks is put in their range, below the frames
    /// they share; nodes of one module, or of modules that are not siblings, give nothing.
    void rangeModuleStackNamesTheBlocks()
    {
        auto g = example("tangle50_torch.json");
        QVERIFY(g);
        std::vector<const ir::Node *> linears;
        for (int b = 0; b < 50; ++b)
            linears.push_back(firstIn(*g, "blocks." + std::to_string(b) + ".linear", "torch.nn.functional.linear"));
        QVERIFY(linears.back());
        auto range = ir::rangeModuleStack(linears);
        QVERIFY(range);
        QCOMPARE(range->size(), size_t(2)); // each linear ran in its block's `linear`
        QCOMPARE(range->front().path, std::string("blocks.0\u201349"));
        QCOMPARE(range->front().type, std::string("fxlens.models.TangleBlock"));
        QCOMPARE(range->back().path, std::string("blocks.0\u201349.linear"));
        QVERIFY(!ir::rangeModuleStack({linears[0], linears[0]}));
        QVERIFY(!ir::rangeModuleStack({linears[0], g->find("split")}));
        // Different modules of one block (its linear and its norm): the block they share.
        const ir::Node *norm = firstIn(*g, "blocks.0.norm", "");
        QVERIFY(norm);
        auto parent = ir::rangeModuleStack({linears[0], norm});
        QVERIFY(parent);
        QCOMPARE(parent->size(), size_t(1));
        QCOMPARE(parent->back().path, std::string("blocks.0"));
    }
};

QTEST_GUILESS_MAIN(TestStacking)
#include "tst_Stacking.moc"
