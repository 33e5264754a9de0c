// SPDX-License-Identifier: MIT
// Tests of the graph IR: edits keep users current, lint, ordering, printer, diff, clone.
#include "ir/Graph.h"
#include "ir/GraphDiff.h"
#include "ir/GraphInfo.h"
#include "ir/Printer.h"

#include <QtTest>

#include <limits>

using namespace fxlens::ir;

namespace {
Argument N(Node *n) { return Argument::node(n); }

TensorMeta tmeta(std::vector<int64_t> shape)
{
    TensorMeta t;
    for (auto s : shape)
        t.shape.push_back({s, {}});
    t.dtype = "float32";
    return t;
}

/// x -> split(x, 4, 1) -> getitem 0, 1 -> cat([g0, g1], 1) -> output
struct SplitCat {
    Graph g;
    Node *x, *split, *g0, *g1, *cat, *out;
    SplitCat()
    {
        x = g.create(OpKind::Placeholder, "x", {}, {}, "x");
        x->meta().val = ValueMeta::ofTensor(tmeta({8, 8}));
        split = g.create(OpKind::CallFunction, "torch.split", {N(x), Argument::integer(4)}, {{"dim", Argument::integer(1)}}, "split");
        g0 = g.create(OpKind::CallFunction, "operator.getitem", {N(split), Argument::integer(0)}, {}, "getitem");
        g1 = g.create(OpKind::CallFunction, "operator.getitem", {N(split), Argument::integer(1)}, {}, "getitem");
        cat = g.create(OpKind::CallFunction, "torch.cat", {Argument::list({N(g0), N(g1)})}, {{"dim", Argument::integer(1)}}, "cat");
        out = g.create(OpKind::Output, "output", {Argument::tuple({N(cat)})}, {}, "output");
    }
};
} // namespace

class TestGraph : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void usersFollowEdits()
    {
        SplitCat s;
        QCOMPARE(s.g1->name(), std::string("getitem_1")); // unique names, torch.fx style
        QCOMPARE(s.x->users().size(), size_t(1));
        QCOMPARE(s.split->users().size(), size_t(2));
        QCOMPARE(s.cat->users(), std::vector<Node *>{s.out});
        // replace-all-uses: the output now reads x directly, cat loses its user.
        auto touched = s.g.replaceAllUsesWith(s.cat, s.x);
        QCOMPARE(touched, std::vector<Node *>{s.out});
        QVERIFY(s.cat->users().empty());
        QCOMPARE(s.x->users().size(), size_t(2));
        QCOMPARE(s.out->args()[0].items()[0].toNode(), s.x);
        // erase refuses nodes with users, then works bottom-up.
        QVERIFY(!s.g.erase(s.split));
        QVERIFY(s.g.erase(s.cat));
        QVERIFY(s.g.erase(s.g0));
        QVERIFY(s.g.erase(s.g1));
        QVERIFY(s.g.erase(s.split));
        QCOMPARE(s.g.size(), size_t(2));
        QCOMPARE(s.x->users(), std::vector<Node *>{s.out});
        QVERIFY(s.g.lint().empty());
        QVERIFY(s.g.find("split") == nullptr);
    }

    void restoreBringsNodesBack()
    {
        SplitCat s;
        s.g.replaceAllUsesWith(s.cat, s.x);
        QVERIFY(s.g.erase(s.cat));
        s.g.restore(s.cat, s.out);
        s.g.replaceUse(s.out, s.x, s.cat);
        // output reads cat again; x is back to one user (split).
        QCOMPARE(s.x->users(), std::vector<Node *>{s.split});
        QCOMPARE(s.out->args()[0].items()[0].toNode(), s.cat);
        QCOMPARE(s.g.find("cat"), s.cat);
        QVERIFY2(s.g.lint().empty(), s.g.lint().empty() ? "" : s.g.lint()[0].toString().c_str());
    }

    void setArgsUpdatesUsers()
    {
        SplitCat s;
        s.g.setArgs(s.cat, {Argument::list({N(s.g0), N(s.g0)})});
        QVERIFY(s.g1->users().empty());
        QCOMPARE(s.g0->users(), std::vector<Node *>{s.cat}); // listed once though used twice
        s.g.setKwargs(s.cat, {{"dim", Argument::integer(0)}, {"out", N(s.g1)}});
        QCOMPARE(s.g1->users(), std::vector<Node *>{s.cat});
        QCOMPARE(s.cat->kwarg("dim")->toInt(), int64_t(0));
    }

    void lintNamesTheNode()
    {
        SplitCat s;
        // Move cat before its inputs: lint must name cat and the input it reads too early.
        s.g.moveBefore(s.cat, s.split);
        auto errors = s.g.lint();
        QVERIFY(!errors.empty());
        QCOMPARE(errors[0].node, std::string("cat"));
        QVERIFY(errors[0].message.find("before it is defined") != std::string::npos);
        // The local lint (checked mode's, after each step) finds it from the moved node alone, and
        // nothing around a node the move did not touch.
        auto local = s.g.lintNodes({s.cat});
        QCOMPARE(local.size(), size_t(2));
        QCOMPARE(local[0].node, std::string("cat"));
        QVERIFY(local[0].message.find("before it is defined") != std::string::npos);
        QVERIFY(s.g.lintNodes({s.g.find("x")}).empty());
        // The stable topological sort repairs it and keeps the rest in place.
        QVERIFY(s.g.topologicalSort());
        QVERIFY(s.g.lint().empty());
        std::vector<std::string> order;
        for (Node *n : s.g.nodes())
            order.push_back(n->name());
        QCOMPARE(order, (std::vector<std::string>{"x", "split", "getitem", "getitem_1", "cat", "output"}));
    }

    void lintOutputRules()
    {
        Graph g;
        Node *x = g.create(OpKind::Placeholder, "x", {}, {}, "x");
        QCOMPARE(g.lint().size(), size_t(1));
        QCOMPARE(g.lint()[0].message, std::string("graph has no output node"));
        Node *o = g.create(OpKind::Output, "output", {N(x)}, {}, "output");
        g.create(OpKind::CallFunction, "torch.relu", {N(x)}, {}, "relu");
        auto errors = g.lint();
        QCOMPARE(errors.size(), size_t(1));
        QCOMPARE(errors[0].node, o->name());
        QCOMPARE(errors[0].message, std::string("output node is not the last node"));
        g.create(OpKind::Output, "output", {N(x)}, {}, "output");
        errors = g.lint();
        QVERIFY(std::any_of(errors.begin(), errors.end(), [](auto &e) { return e.message.find("2 output nodes") != std::string::npos; }));
    }

    void lintForeignReference()
    {
        Graph a, b;
        Node *x = a.create(OpKind::Placeholder, "x", {}, {}, "x");
        Node *y = b.create(OpKind::Placeholder, "y", {}, {}, "y");
        b.create(OpKind::Output, "output", {N(x), N(y)}, {}, "output");
        auto errors = b.lint();
        QCOMPARE(errors.size(), size_t(1));
        QCOMPARE(errors[0].node, std::string("output"));
        QVERIFY(errors[0].message.find("another graph") != std::string::npos);
    }

    void topologicalSortDetectsCycle()
    {
        Graph g;
        Node *x = g.create(OpKind::Placeholder, "x", {}, {}, "x");
        Node *a = g.create(OpKind::CallFunction, "torch.relu", {N(x)}, {}, "a");
        Node *b = g.create(OpKind::CallFunction, "torch.relu", {N(a)}, {}, "b");
        g.setArgs(a, {N(b)});
        QVERIFY(!g.topologicalSort());
    }

    void printerGolden()
    {
        SplitCat s;
        s.split->meta().val.kind = ValueMeta::Kind::Sequence;
        s.split->meta().val.items = {ValueMeta::ofTensor(tmeta({8, 4})), ValueMeta::ofTensor(tmeta({8, 4}))};
        s.cat->meta().val = ValueMeta::ofTensor(tmeta({8, 8}));
        const char *expected =
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]  # f32[8, 8]\n"
            "    %split : [num_users=2] = call_function[target=torch.split](args = (%x, 4), kwargs = {dim: 1})  # (f32[8, 4], f32[8, 4])\n"
            "    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%split, 0), kwargs = {})\n"
            "    %getitem_1 : [num_users=1] = call_function[target=operator.getitem](args = (%split, 1), kwargs = {})\n"
            "    %cat : [num_users=1] = call_function[target=torch.cat](args = ([%getitem, %getitem_1],), kwargs = {dim: 1})  # f32[8, 8]\n"
            "    return (%cat,)\n";
        QCOMPARE(QString::fromStdString(printGraph(s.g)), QString::fromLatin1(expected));
    }

    void argumentPrinting()
    {
        QCOMPARE(Argument::real(0.5).toString(), std::string("0.5"));
        QCOMPARE(Argument::real(1.0).toString(), std::string("1.0"));
        QCOMPARE(Argument::real(1e-5).toString(), std::string("1e-05"));
        QCOMPARE(Argument::tuple({Argument::integer(1)}).toString(), std::string("(1,)"));
        QCOMPARE(Argument::slice(Argument::none(), Argument::integer(4), Argument::none()).toString(), std::string("slice(None, 4, None)"));
        QCOMPARE(Argument::tagged(Argument::Kind::Dtype, "float16").toString(), std::string("torch.float16"));
        QCOMPARE(Argument::dict({{"a", Argument::boolean(true)}}).toString(), std::string("{'a': True}"));
        QCOMPARE(Argument::string("it's").toString(), std::string("'it\\'s'"));
        // The Python spelling (runnable export): names without %, real devices, inf, Ellipsis.
        QCOMPARE(Argument::real(-std::numeric_limits<double>::infinity()).toPython(), std::string("float('-inf')"));
        QCOMPARE(Argument::tagged(Argument::Kind::Device, "cuda:0").toPython(), std::string("torch.device('cuda:0')"));
        QCOMPARE(Argument::tagged(Argument::Kind::Opaque, "Ellipsis").toPython(), std::string("..."));
        QCOMPARE(Argument::tuple({Argument::tagged(Argument::Kind::Opaque, "Ellipsis"), Argument::integer(0)}).toPython(),
                 std::string("(..., 0)"));
        QCOMPARE(Argument::tagged(Argument::Kind::Device, "cuda:0").toString(), std::string("device('cuda:0')"));
    }

    void diffReportsChanges()
    {
        SplitCat a;
        auto b = a.g.clone();
        QVERIFY(diffGraphs(a.g, *b).empty());
        Node *bx = b->find("x"), *bcat = b->find("cat");
        b->replaceAllUsesWith(bcat, bx);
        b->erase(bcat);
        b->erase(b->find("getitem"));
        b->erase(b->find("getitem_1"));
        b->erase(b->find("split"));
        b->create(OpKind::CallFunction, "torch.relu", {N(bx)}, {}, "relu", b->outputNode());
        auto d = diffGraphs(a.g, *b);
        QCOMPARE(d.removed(), (std::vector<std::string>{"split", "getitem", "getitem_1", "cat"}));
        QCOMPARE(d.added(), (std::vector<std::string>{"relu"}));
        QCOMPARE(d.changed().size(), size_t(2)); // x (user count) and output (reads x)
        QCOMPARE(d.changed()[0].name, std::string("x"));
        QCOMPARE(d.changed()[1].name, std::string("output"));
        const std::string text = d.toString();
        QVERIFY2(text.find("- %cat : ") != std::string::npos, text.c_str());
        QVERIFY2(text.find("+ %relu : ") != std::string::npos, text.c_str());
        QVERIFY2(text.find("~ %output : ") != std::string::npos, text.c_str());
    }

    void cloneIsDeep()
    {
        SplitCat a;
        a.g.modules.push_back({"", "M"});
        auto b = a.g.clone();
        QCOMPARE(printGraph(a.g), printGraph(*b));
        QVERIFY(b->find("cat") != a.cat);
        QCOMPARE(b->find("cat")->args()[0].items()[0].toNode(), b->find("getitem"));
        QCOMPARE(b->modules, a.g.modules);
        QVERIFY(b->lint().empty());
    }

    void infoCounts()
    {
        SplitCat s;
        auto info = computeGraphInfo(s.g);
        QCOMPARE(info.nodes, size_t(6));
        QCOMPARE(info.edges, size_t(6));
        QCOMPARE(info.depth, size_t(5));
        QCOMPARE(info.byOp["call_function"], size_t(4));
        QCOMPARE(info.byTarget["call_function operator.getitem"], size_t(2));
    }

    void uniqueNamesStripSuffix()
    {
        Graph g;
        g.create(OpKind::Placeholder, "x", {}, {}, "add");
        g.create(OpKind::Placeholder, "x", {}, {}, "add_1");
        Node *c = g.create(OpKind::Placeholder, "x", {}, {}, "add_1");
        QCOMPARE(c->name(), std::string("add_2"));
        QVERIFY(!g.rename(c, "add"));
        QVERIFY(g.rename(c, "other"));
        QCOMPARE(g.find("other"), c);
    }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "tst_Graph.moc"
