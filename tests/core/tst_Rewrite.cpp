// SPDX-License-Identifier: MIT
// Tests of the rewrite engine (session, stepping, undo/redo, breakpoints, checked mode) and of the
// built-in vertical patterns: golden before/after, near misses with their failure reason.
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"
#include "rewrite/OpUtil.h"
#include "rewrite/PatternGraph.h"
#include "rewrite/Session.h"

#include <QtTest>

#include <set>

using namespace fxlens;
using namespace fxlens::rewrite;
using ir::OpKind;

namespace {

std::string wrap(const std::string &nodes) { return R"({"format":"fxlens-graph","version":1,"ir":"torch","nodes":[)" + nodes + "]}"; }

std::string tensor(std::vector<int> shape)
{
    std::string s = R"({"tensor":{"shape":[)";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? "," : "") + std::to_string(shape[i]);
    return s + R"(],"dtype":"float32"}})";
}

std::string seq(std::vector<std::vector<int>> shapes)
{
    std::string s = R"({"seq":[)";
    for (size_t i = 0; i < shapes.size(); ++i)
        s += (i ? "," : "") + tensor(shapes[i]);
    return s + "]}";
}

std::string node(const std::string &name, const std::string &op, const std::string &target, const std::string &args,
                 const std::string &kwargs, const std::string &val)
{
    return R"({"name":")" + name + R"(","op":")" + op + R"(","target":")" + target + R"(","args":)" + args + R"(,"kwargs":)" + kwargs +
        R"(,"meta":{"val":)" + val + "}}";
}

std::string ph(const std::string &name, std::vector<int> shape) { return node(name, "placeholder", name, "[]", "{}", tensor(shape)); }
std::string gi(const std::string &name, const std::string &src, int i, std::vector<int> shape)
{
    return node(name, "call_function", "operator.getitem", R"([{"node":")" + src + R"("},)" + std::to_string(i) + "]", "{}", tensor(shape));
}
std::string out(const std::string &src)
{
    return R"({"name":"output","op":"output","target":"output","args":[{"node":")" + src + R"("}],"kwargs":{},"meta":{}})";
}

std::unique_ptr<ir::Graph> parse(const std::string &text)
{
    auto r = io::parseGraphJson(text, "test");
    if (!r.ok())
        qFatal("%s", r.error().toString().c_str());
    return std::move(r.value());
}

PatternRegistry &registry()
{
    static PatternRegistry r;
    static bool init = [] { return patterns::registerBuiltinPatterns(r, FXLENS_PATTERN_SOURCE_DIR).empty(); }();
    Q_ASSERT(init);
    return r;
}

std::vector<const Pattern *> only(const char *name) { return {registry().find(name)}; }

std::string printed(const ir::Graph &g)
{
    ir::PrintOptions o;
    o.showMeta = false;
    return ir::printGraph(g, o);
}

/// x[8,12] -> split(x, 4, dim=-1) -> cat(all pieces, -1) -> relu
std::string splitCatGraph(const std::string &catDim = "-1", bool reorder = false)
{
    return wrap(ph("x", {8, 12}) + "," +
                node("split", "call_method", "split", R"([{"node":"x"},4,-1])", "{}", seq({{8, 4}, {8, 4}, {8, 4}})) + "," +
                gi("a", "split", 0, {8, 4}) + "," + gi("b", "split", 1, {8, 4}) + "," + gi("c", "split", 2, {8, 4}) + "," +
                node("cat", "call_function", "torch.cat",
                     reorder ? R"([[{"node":"b"},{"node":"a"},{"node":"c"}],)" + catDim + "]"
                             : R"([[{"node":"a"},{"node":"b"},{"node":"c"}],)" + catDim + "]",
                     "{}", tensor({8, 12})) +
                "," + node("relu", "call_function", "torch.relu", R"([{"node":"cat"}])", "{}", tensor({8, 12})) + "," + out("relu"));
}

/// A pattern that breaks the graph (drops meta on a new node): checked mode must roll it back.
class BrokenPattern : public Pattern {
public:
    BrokenPattern()
    {
        name = "broken_relu";
        anchors = {{OpKind::CallFunction, "torch.relu"}};
        labels = {"user"};
    }
    bool match(Node *n, Match &m, MatchFailure &) const override
    {
        m.nodes = {n};
        return n->args()[0].isNode() && n->args()[0].toNode()->target() != "torch.abs";
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        // New node without shape meta: violates the checked-mode contract.
        Node *a = rw.create(OpKind::CallFunction, "torch.abs", {m.anchor->args()[0]}, {}, "abs", m.anchor, m.anchor);
        rw.setInputs(m.anchor, {Argument::node(a)}, {});
    }
};

/// relu -> torch.abs, as a pattern that is not mutation-aware: refused while relu's value is
/// written in place.
class ReluToAbs : public Pattern {
public:
    ReluToAbs()
    {
        name = "relu_to_abs";
        anchors = {{OpKind::CallFunction, "torch.relu"}};
        labels = {"user"};
    }
    bool match(Node *n, Match &m, MatchFailure &) const override
    {
        m.nodes = {n};
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Node *a = rw.create(OpKind::CallFunction, "torch.abs", m.anchor->args(), {}, "abs", m.anchor, m.anchor);
        a->meta().val = m.anchor->meta().val;
        rw.replaceAllUsesWith(m.anchor, a);
        rw.erase(m.anchor);
    }
};

/// Anchored on torch.neg (earlier in program order than the in-place call, so visited after it in
/// the first sweep): replaces every `add_` method call by an out-of-place `add`.
class DropInplaceAdd : public Pattern {
public:
    DropInplaceAdd()
    {
        name = "drop_inplace_add";
        anchors = {{OpKind::CallFunction, "torch.neg"}};
        labels = {"user"};
        mutationAware = true;
    }
    bool match(Node *n, Match &m, MatchFailure &) const override
    {
        m.nodes = {n};
        for (Node *x = n->graph()->first(); x; x = x->next())
            if (x->op() == OpKind::CallMethod && x->target() == "add_")
                m.nodes.push_back(x);
        return m.nodes.size() > 1;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        for (size_t i = 1; i < m.nodes.size(); ++i) {
            Node *old = m.nodes[i];
            Node *add = rw.create(OpKind::CallMethod, "add", old->args(), {}, "add", old, old);
            add->meta().val = old->meta().val;
            rw.replaceAllUsesWith(old, add);
            rw.erase(old);
        }
    }
};

} // namespace

class TestRewrite : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void registryRefusesDuplicates()
    {
        PatternRegistry r;
        QCOMPARE(QString::fromStdString(patterns::registerBuiltinPatterns(r, FXLENS_PATTERN_SOURCE_DIR)), QString());
        QCOMPARE(QString::fromStdString(patterns::registerBuiltinPatterns(r, FXLENS_PATTERN_SOURCE_DIR)),
                 QStringLiteral("duplicate pattern name 'normalize_split'"));
        std::string err;
        QVERIFY(r.byNames("merge_splits,nope", err).empty());
        QCOMPARE(QString::fromStdString(err), QStringLiteral("unknown pattern 'nope'"));
    }

    void normalizeSplitGolden()
    {
        auto g = parse(splitCatGraph());
        Session s(*g, only("normalize_split"), {SIZE_MAX, 1e9, true});
        auto r = s.run();
        QCOMPARE(r.rewritesByPattern["normalize_split"], size_t(1));
        QVERIFY(printed(*g).find("call_function[target=torch.split](args = (%x, [4, 4, 4]), kwargs = {dim: 1})") != std::string::npos);
        // Idempotent: a second run finds nothing to do (no endless loop on canonical forms).
        QCOMPARE(Session(*g, only("normalize_split")).run().steps, size_t(0));
    }

    void splitCatGolden()
    {
        auto g = parse(splitCatGraph());
        Session s(*g, only("split_cat"), {SIZE_MAX, 1e9, true});
        auto r = s.run();
        QCOMPARE(r.steps, size_t(1));
        QCOMPARE(QString::fromStdString(printed(*g)),
                 QStringLiteral("graph():\n"
                                "    %x : [num_users=1] = placeholder[target=x]\n"
                                "    %relu : [num_users=1] = call_function[target=torch.relu](args = (%x,), kwargs = {})\n"
                                "    return %relu\n"));
        // Provenance is recorded on nothing here (no new nodes), but the history has the step.
        QCOMPARE(s.history().size(), size_t(1));
        QCOMPARE(s.history()[0].pattern, std::string("split_cat"));
    }

    void splitCatNearMisses()
    {
        // Pieces out of order: not the input.
        auto g = parse(splitCatGraph("-1", true));
        auto *cat = g->find("cat");
        Match m;
        MatchFailure why;
        // b, a, c: no two consecutive pieces in order.
        QVERIFY(!registry().find("split_cat")->match(cat, m, why));
        QCOMPARE(why.element, std::string("cat inputs"));
        QCOMPARE(why.node, std::string("cat"));
        // Cat along another dim than the split.
        auto g2 = parse(splitCatGraph("0"));
        QVERIFY(!registry().find("split_cat")->match(g2->find("cat"), m, why));
        QCOMPARE(QString::fromStdString(why.found), QStringLiteral("0 run(s) of split pieces")); // split dim 1 != cat dim 0
    }

    void partialRunResections()
    {
        // cat([s[1], s[2]]) of a 4-piece split: one piece of a re-sectioned split.
        auto g =
            parse(wrap(ph("x", {4, 16}) + "," +
                       node("split", "call_function", "torch.split", R"([{"node":"x"},[4,4,4,4]])", R"({"dim":1})",
                            seq({{4, 4}, {4, 4}, {4, 4}, {4, 4}})) +
                       "," + gi("a", "split", 0, {4, 4}) + "," + gi("b", "split", 1, {4, 4}) + "," + gi("c", "split", 2, {4, 4}) + "," +
                       gi("d", "split", 3, {4, 4}) + "," +
                       node("cat", "call_function", "torch.cat", R"([[{"node":"b"},{"node":"c"}]])", R"({"dim":1})", tensor({4, 8})) + "," +
                       node("res", "call_function", "builtins.tuple", R"([[{"node":"a"},{"node":"cat"},{"node":"d"}]])", "{}", "null") +
                       "," + out("res")));
        Session s(*g, only("merge_getitem_cat"), {SIZE_MAX, 1e9, true});
        auto r = s.run();
        QCOMPARE(r.steps, size_t(1));
        std::string p = printed(*g);
        QVERIFY2(p.find("torch.split](args = (%x, [4, 8, 4]), kwargs = {dim: 1})") != std::string::npos, p.c_str());
        QVERIFY(p.find("torch.cat") == std::string::npos); // cat of one tensor removed too
        QVERIFY(g->lint().empty());
        // New nodes carry provenance and shapes.
        for (auto *n = g->first(); n; n = n->next())
            if (n->target() == "torch.split") {
                QVERIFY(n->meta().provenance.has_value());
                QCOMPARE(n->meta().provenance->pattern, std::string("merge_getitem_cat"));
                QCOMPARE(n->meta().val.items[1].tensor.toString(), std::string("f32[4, 8]"));
            }
    }

    void unbindStackPartialUse()
    {
        // Only u[1] is used (pytorch #121228): it becomes t1, with negative dims normalized. t1 is a
        // graph input, so the output gets its own copy (an output never starts aliasing an input).
        auto g = parse(
            wrap(ph("t0", {2, 3}) + "," + ph("t1", {2, 3}) + "," +
                 node("st", "call_function", "torch.stack", R"([[{"node":"t0"},{"node":"t1"}]])", R"({"dim":-1})", tensor({2, 3, 2})) +
                 "," + node("u", "call_function", "torch.unbind", R"([{"node":"st"}])", R"({"dim":2})", seq({{2, 3}, {2, 3}})) + "," +
                 gi("g1", "u", 1, {2, 3}) + "," + out("g1")));
        Session s(*g, only("stack_unbind"), {SIZE_MAX, 1e9, true});
        QCOMPARE(s.run().steps, size_t(1));
        const Node *res = g->outputNode()->args()[0].toNode();
        QCOMPARE(res->target(), std::string("torch.clone"));
        QCOMPARE(res->args()[0].toNode()->name(), std::string("t1"));
        QCOMPARE(g->size(), size_t(4));
        // Near miss: different dims.
        auto g2 =
            parse(wrap(ph("t0", {2, 3}) + "," +
                       node("st", "call_function", "torch.stack", R"([[{"node":"t0"},{"node":"t0"}]])", R"({"dim":0})", tensor({2, 2, 3})) +
                       "," + node("u", "call_function", "torch.unbind", R"([{"node":"st"}])", R"({"dim":1})", seq({{2, 3}, {2, 3}})) + "," +
                       gi("g1", "u", 1, {2, 3}) + "," + out("g1")));
        Match m;
        MatchFailure why;
        QVERIFY(!registry().find("stack_unbind")->match(g2->find("u"), m, why));
        QCOMPARE(QString::fromStdString(why.toString()), QStringLiteral("unbind dim at 'u': expected the stack dim 0, found 1"));
    }

    void patternGraphMatcher()
    {
        // cat([.., getitem(%s, *i), ..], ?d) with a partial variadic list: per-element bindings are
        // collected in list order, shared ones (%s, ?d) must agree, and a failure names the element.
        auto g = parse(wrap(
            ph("x", {4, 16}) + "," + ph("z", {4, 4}) + "," +
            node("split", "call_function", "torch.split", R"([{"node":"x"},[4,4,4,4]])", R"({"dim":1})",
                 seq({{4, 4}, {4, 4}, {4, 4}, {4, 4}})) +
            "," + gi("a", "split", 0, {4, 4}) + "," + gi("b", "split", 1, {4, 4}) + "," + gi("c", "split", 2, {4, 4}) + "," +
            node("cat", "call_function", "torch.cat", R"([[{"node":"z"},{"node":"b"},{"node":"c"}]])", R"({"dim":1})", tensor({4, 12})) +
            "," + node("r", "call_function", "builtins.tuple", R"([[{"node":"a"},{"node":"cat"}]])", "{}", "null") + "," + out("r")));
        PatternBuilder b;
        int s = b.input("s");
        int item = b.call("*item", {"operator.getitem"}, {PArg::ref(s), PArg::capture("*i")});
        int cat = b.call("cat", {"torch.cat", "aten.cat.default"}, {PArg::listOf(PArg::ref(item), "pos", true), PArg::capture("d")});
        PatternGraph pg = b.build(cat);
        Bindings bb;
        MatchFailure why;
        QVERIFY(matchPatternGraph(pg, g->find("cat"), bb, why));
        QCOMPARE(bb.node("s")->name(), std::string("split"));
        QCOMPARE(bb.integer("d"), int64_t(1)); // read by schema from the keyword
        QCOMPARE(bb.list("*i").size(), size_t(2));
        QCOMPARE(bb.list("*i")[1].toInt(), int64_t(2));
        QCOMPARE(bb.list("pos")[0].toInt(), int64_t(1)); // z at position 0 was skipped
        QCOMPARE(bb.nodeList("*item")[0]->name(), std::string("b"));
        QVERIFY(pg.toString().find("%cat = torch.cat|aten.cat.default([.., %*item, ...], ?d)  # anchor") != std::string::npos);
        // Not partial: z is not a getitem, and the failure says so.
        PatternBuilder b2;
        int s2 = b2.input("s");
        int item2 = b2.call("*item", {"operator.getitem"}, {PArg::ref(s2), PArg::capture("*i")});
        int cat2 = b2.call("cat", {"torch.cat"}, {PArg::listOf(PArg::ref(item2)), PArg::lit(Argument::integer(1))});
        PatternGraph strict = b2.build(cat2);
        Bindings b3;
        QVERIFY(!matchPatternGraph(strict, g->find("cat"), b3, why));
        QCOMPARE(QString::fromStdString(why.toString()), QStringLiteral("*item at 'z': expected operator.getitem, found placeholder z"));
        // A literal that differs.
        PatternBuilder b4;
        int c4 = b4.call("cat", {"torch.cat"}, {PArg::any(), PArg::lit(Argument::integer(0))});
        PatternGraph lit = b4.build(c4);
        Bindings b5;
        QVERIFY(!matchPatternGraph(lit, g->find("cat"), b5, why));
        QCOMPARE(QString::fromStdString(why.toString()), QStringLiteral("argument 'dim' of cat at 'cat': expected 0, found 1"));
    }

    void mergeSplitsGolden()
    {
        auto g = parse(wrap(ph("x", {4, 8}) + "," +
                            node("s", "call_function", "torch.split", R"([{"node":"x"},[2,6]])", R"({"dim":1})", seq({{4, 2}, {4, 6}})) +
                            "," + gi("s0", "s", 0, {4, 2}) + "," + gi("s1", "s", 1, {4, 6}) + "," +
                            node("t", "call_function", "torch.split", R"([{"node":"s1"},[3,3]])", R"({"dim":1})", seq({{4, 3}, {4, 3}})) +
                            "," + gi("t0", "t", 0, {4, 3}) + "," + gi("t1", "t", 1, {4, 3}) + "," +
                            node("r", "call_function", "builtins.tuple", R"([[{"node":"t1"},{"node":"s0"},{"node":"t0"}]])", "{}", "null") +
                            "," + out("r")));
        Session s(*g, only("merge_splits"), {SIZE_MAX, 1e9, true});
        QCOMPARE(s.run().steps, size_t(1));
        std::string p = printed(*g);
        QVERIFY2(p.find("torch.split](args = (%x, [2, 3, 3]), kwargs = {dim: 1})") != std::string::npos, p.c_str());
        QVERIFY2(p.find("builtins.tuple](args = ([%getitem_2, %getitem, %getitem_1],)") != std::string::npos, p.c_str());
        QCOMPARE(g->size(), size_t(7));
    }

    void tangleIsStraightened_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("blocks");
        QTest::newRow("fx") << QStringLiteral("tangle4_fx.json") << 4;
        QTest::newRow("dynamo") << QStringLiteral("tangle50_torch.json") << 50;
        QTest::newRow("dynamo-200") << QStringLiteral("tangle200_torch.json.gz") << 200;
        QTest::newRow("aten") << QStringLiteral("tangle50_aten.json") << 50;
        QTest::newRow("aten-200") << QStringLiteral("tangle200_aten.json.gz") << 200;
    }

    void tangleIsStraightened()
    {
        QFETCH(QString, file);
        QFETCH(int, blocks);
        auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/" + file.toStdString());
        QVERIFY(r.ok());
        ir::Graph &g = *r.value();
        std::string err;
        Session s(g, registry().preset("vertical", err), {SIZE_MAX, 1e9, true});
        auto run = s.run();
        QCOMPARE(run.reason, StopReason::Fixpoint);
        QVERIFY2(s.lastError().empty(), s.lastError().c_str());
        size_t splits = 0, cats = 0, stacks = 0, unbinds = 0;
        for (auto *n = g.first(); n; n = n->next()) {
            splits += asSplit(n).has_value();
            cats += asCat(n).has_value();
            stacks += n->target() == "torch.stack";
            unbinds += n->target() == "torch.unbind" || asUnbindPiece(n).has_value();
        }
        // Every split->cat and stack->unbind detour is gone: one split of x, one cat of the outputs.
        QCOMPARE(splits, size_t(1));
        QCOMPARE(cats, size_t(1));
        QCOMPARE(stacks, size_t(0));
        QCOMPARE(unbinds, size_t(0));
        QVERIFY(g.lint().empty());
        QCOMPARE(run.rewritesByPattern.size() > 0, true);
        // Everything left per block: the block's own compute (no views of views, no detours).
        size_t views = 0;
        for (auto *n = g.first(); n; n = n->next())
            views += n->target() == "aten.view.default" || n->target() == "torch.reshape" || n->target() == "aten.squeeze.dims";
        QCOMPARE(views, size_t(0));
        // And every version in the history is reachable: back to the original and forward again.
        std::string optimized = printed(g);
        QVERIFY(s.checkout(0));
        auto again = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/" + file.toStdString());
        QCOMPARE(printed(g), printed(*again.value()));
        QVERIFY(g.lint().empty());
        QVERIFY(s.checkout(s.history().size()));
        QCOMPARE(printed(g), optimized);
        Q_UNUSED(blocks);
    }

    void allPresetOpsDoNotGrowWithN_data()
    {
        QTest::addColumn<QString>("small");
        QTest::addColumn<QString>("large");
        QTest::newRow("torch") << QStringLiteral("tangle50_torch.json") << QStringLiteral("tangle200_torch.json.gz");
        QTest::newRow("aten") << QStringLiteral("tangle50_aten.json") << QStringLiteral("tangle200_aten.json.gz");
        QTest::newRow("torch-800") << QStringLiteral("tangle50_torch.json") << QStringLiteral("tangle800_torch.json.gz");
        QTest::newRow("aten-800") << QStringLiteral("tangle50_aten.json") << QStringLiteral("tangle800_aten.json.gz");
    }

    void allPresetOpsDoNotGrowWithN()
    {
        // Horizontal fusion + the vertical cleanup: the same ops for N = 50 and N = 200 blocks.
        QFETCH(QString, small);
        QFETCH(QString, large);
        std::map<std::string, int> ops[2];
        int i = 0;
        for (const QString &f : {small, large}) {
            auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/" + f.toStdString());
            QVERIFY(r.ok());
            std::string err;
            Session s(*r.value(), registry().preset("all", err));
            auto run = s.run();
            QCOMPARE(run.reason, StopReason::Fixpoint);
            QVERIFY(r.value()->lint().empty());
            for (auto *n = r.value()->first(); n; n = n->next())
                if (n->op() == OpKind::CallFunction || n->op() == OpKind::CallMethod || n->op() == OpKind::CallModule)
                    ++ops[i][n->target()];
            ++i;
        }
        QCOMPARE(ops[0], ops[1]);
        int total = 0;
        for (const auto &[t, c] : ops[0])
            total += c;
        QVERIFY2(total <= 22, std::to_string(total).c_str());
        QCOMPARE(ops[0]["torch.baddbmm"] + ops[0]["aten.baddbmm.default"], 1);
    }

    void steppingApplySkipUndoRedo()
    {
        auto g = parse(splitCatGraph());
        std::string original = printed(*g);
        std::string err;
        Session s(*g, registry().preset("vertical", err));
        auto c = s.candidates();
        QVERIFY(c.size() >= 2);
        // The first sweep runs consumers first (the cat before the split); at one anchor, the highest
        // benefit first.
        QCOMPARE(c[0].pattern, std::string("normalize_cat"));
        QCOMPARE(c[0].anchor->name(), std::string("cat"));
        QCOMPARE(c[1].pattern, std::string("split_cat"));
        QCOMPARE(c.back().pattern, std::string("normalize_split"));
        // Skip the normalizations: they are not proposed again, the cat still is.
        for (const auto &m : c)
            if (registry().find(m.pattern)->hasLabel("normalization"))
                s.skip(m);
        c = s.candidates();
        QCOMPARE(c.size(), size_t(1));
        QCOMPARE(c[0].pattern, std::string("split_cat"));
        QVERIFY(!c[0].summary.empty());
        QVERIFY(s.apply(c[0]));
        QCOMPARE(s.version(), size_t(1));
        QVERIFY(s.candidates().empty());
        std::string after = printed(*g);
        QVERIFY(s.undo());
        QCOMPARE(printed(*g), original);
        QVERIFY(!s.undo());
        QVERIFY(s.redo());
        QCOMPARE(printed(*g), after);
        QVERIFY(!s.redo());
        // A stale match (the cat is gone) is refused with a reason.
        QVERIFY(!s.apply(c[0]));
    }

    void breakpoints()
    {
        auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json");
        ir::Graph &g = *r.value();
        std::string err;
        Session s(g, registry().preset("vertical", err));
        s.addBreakpoint({Breakpoint::Kind::Module, "blocks.2"});
        auto first = s.run();
        QCOMPARE(first.reason, StopReason::Breakpoint);
        QVERIFY(first.message.find("breakpoint before") != std::string::npos);
        auto next = s.candidates(1);
        QCOMPARE(next.size(), size_t(1));
        QCOMPARE(next[0].anchor->meta().modulePath().rfind("blocks.2", 0), size_t(0));
        s.clearBreakpoints();
        s.addBreakpoint({Breakpoint::Kind::Pattern, "no_such_pattern"});
        auto rest = s.run();
        QCOMPARE(rest.reason, StopReason::Fixpoint);
        QCOMPARE(g.size(), size_t(28));
    }

    /// A step applied after going back keeps the replaced steps as a branch; switching to it gives
    /// back the very graph of its last version, and the line it replaces becomes a branch in turn.
    void branchingHistory()
    {
        auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json");
        ir::Graph &g = *r.value();
        std::string err;
        Session s(g, registry().preset("vertical", err));
        s.run();
        const size_t n = s.history().size();
        QVERIFY(n >= 4);
        const std::string optimized = printed(g);
        const std::string lastPattern = s.history().back().pattern;
        QVERIFY(s.checkout(2));
        const std::string atTwo = printed(g);
        // A different step at version 2: skip the candidate the first line took.
        auto c = s.candidates();
        QVERIFY(c.size() >= 2);
        s.skip(c[0]);
        QVERIFY(s.apply(c[1]));
        QCOMPARE(s.version(), size_t(3));
        QCOMPARE(s.history().size(), size_t(3));
        QCOMPARE(s.branches().size(), size_t(1));
        QCOMPARE(s.branches()[0].fork, size_t(2));
        QCOMPARE(s.branches()[0].steps.size(), n - 2);
        QCOMPARE(s.branches()[0].steps.back().pattern, lastPattern);
        const std::string other = printed(g);
        QVERIFY(other != optimized);
        // Back to the first line: its last version exactly, and the new line is kept.
        QVERIFY(s.switchBranch(0));
        QCOMPARE(s.version(), n);
        QCOMPARE(s.history().size(), n);
        QCOMPARE(printed(g), optimized);
        QVERIFY(g.lint().empty());
        QCOMPARE(s.branches().size(), size_t(1));
        QCOMPARE(s.branches()[0].fork, size_t(2));
        QCOMPARE(s.branches()[0].steps.size(), size_t(1));
        QVERIFY(s.checkout(2));
        QCOMPARE(printed(g), atTwo);
        QVERIFY(s.switchBranch(0));
        QCOMPARE(printed(g), other);
        QVERIFY(!s.switchBranch(5));
    }

    /// Skips are listed and can be taken back: the candidate comes back, and the driver applies it.
    void skipsAreVisibleAndUndoable()
    {
        auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json");
        ir::Graph &g = *r.value();
        std::string err;
        Session s(g, registry().preset("vertical", err));
        auto c = s.candidates();
        QVERIFY(!c.empty());
        const std::string pattern = c[0].pattern, anchor = c[0].anchor->name();
        s.skip(c[0]);
        QCOMPARE(s.skipped().size(), size_t(1));
        QCOMPARE(s.skipped()[0].first, pattern);
        QCOMPARE(s.skipped()[0].second, anchor);
        auto has = [&](const std::vector<Match> &ms) {
            return std::any_of(ms.begin(), ms.end(), [&](const Match &m) { return m.pattern == pattern && m.anchor->name() == anchor; });
        };
        QVERIFY(!has(s.candidates()));
        QVERIFY(!s.unskip("no_such_pattern", anchor));
        QVERIFY(s.unskip(pattern, anchor));
        QVERIFY(!s.unskip(pattern, anchor));
        QVERIFY(s.skipped().empty());
        QVERIFY(has(s.candidates()));
        // Skipped again, run to the fixpoint (the driver leaves it), then unskipped: run applies it.
        s.skip(c[0]);
        s.run();
        const size_t steps = s.history().size();
        if (g.find(anchor) && s.unskip(pattern, anchor)) {
            s.run();
            QVERIFY(s.history().size() >= steps);
        }
        QVERIFY(g.lint().empty());
    }

    void undoAfterRunReproposes()
    {
        // Undo restores erased nodes; the driver must see them again and redo the same rewrite.
        auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json");
        ir::Graph &g = *r.value();
        std::string err;
        Session s(g, registry().preset("vertical", err));
        s.run();
        QVERIFY(s.candidates().empty());
        std::string lastPattern = s.history().back().pattern;
        size_t optimized = g.size();
        QVERIFY(s.undo());
        QVERIFY(s.undo());
        auto c = s.candidates();
        QVERIFY(!c.empty());
        auto again = s.run();
        QCOMPARE(again.steps, size_t(2));
        QCOMPARE(g.size(), optimized);
        QCOMPARE(s.history().back().pattern, lastPattern);
        QVERIFY(g.lint().empty());

        // Back at version 0 the session proposes exactly what a fresh session on the original does,
        // including anchors that were erased (and dropped from the worklist) during the run.
        QVERIFY(s.checkout(0));
        auto fresh = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/tangle4_fx.json");
        Session s2(*fresh.value(), registry().preset("vertical", err));
        auto key = [](const std::vector<Match> &ms) {
            std::set<std::string> out;
            for (const auto &m : ms)
                out.insert(m.pattern + "@" + m.anchor->name());
            return out;
        };
        QCOMPARE(key(s.candidates()), key(s2.candidates()));
        // The stable list is the same, element by element, in the same order.
        auto names = [](const std::vector<Match> &ms) {
            std::vector<std::string> out;
            for (const auto &m : ms)
                out.push_back(m.pattern + "@" + m.anchor->name());
            return out;
        };
        QCOMPARE(names(s.stableCandidates()), names(s2.stableCandidates()));
        // ... which is what a fresh session's driver would do next, in its order.
        QCOMPARE(names(s2.stableCandidates()), names(s2.candidates()));
    }

    void irLevelFiltersPatterns()
    {
        // normalize_split is a Torch-IR pattern: on an ATen graph the session never runs it.
        auto g = parse(splitCatGraph());
        g->irLevel = "aten";
        Session s(*g, only("normalize_split"));
        QVERIFY(s.candidates().empty());
        QCOMPARE(s.run().steps, size_t(0));
    }

    void stepLimit()
    {
        auto g = parse(splitCatGraph());
        std::string err;
        Session s(*g, registry().preset("vertical", err), {1, 1e9, false});
        auto r = s.run();
        QCOMPARE(r.reason, StopReason::StepLimit);
        QCOMPARE(r.steps, size_t(1));
    }

    void refusedForMutationIsRevisited()
    {
        // relu's value is written in place by add_ (through three views): relu_to_abs is refused
        // when the first sweep visits relu. drop_inplace_add (at neg, on another input, visited
        // next) removes the write. No edit of that step is near relu (the driver re-visits the
        // neighbourhood of every edit), so only the mutation rule's re-queue proposes it again.
        auto view = [](const char *name, const char *src) {
            return node(name, "call_method", "view", std::string("[{\"node\":\"") + src + "\"},4]", "{}", tensor({4}));
        };
        auto g = parse(wrap(ph("x", {4}) + "," + ph("y", {4}) + "," +
                            node("neg", "call_function", "torch.neg", R"([{"node":"y"}])", "{}", tensor({4})) + "," +
                            node("relu", "call_function", "torch.relu", R"([{"node":"x"}])", "{}", tensor({4})) + "," + view("v1", "relu") +
                            "," + view("v2", "v1") + "," + view("v3", "v2") + "," +
                            node("inc", "call_method", "add_", R"([{"node":"v3"},1])", "{}", tensor({4})) + "," + out("inc")));
        ReluToAbs reluToAbs;
        DropInplaceAdd dropInplace;
        Session s(*g, {&reluToAbs, &dropInplace}, {SIZE_MAX, 1e9, true});
        auto r = s.run();
        QCOMPARE(r.rewritesByPattern["drop_inplace_add"], size_t(1));
        QCOMPARE(r.rewritesByPattern["relu_to_abs"], size_t(1));
        const std::string text = printed(*g);
        QVERIFY2(text.find("torch.abs") != std::string::npos, text.c_str());
        QVERIFY2(text.find("torch.relu") == std::string::npos, text.c_str());
        QVERIFY2(text.find("add_") == std::string::npos, text.c_str());
    }

    void checkedModeRollsBack()
    {
        auto g = parse(splitCatGraph());
        std::string before = printed(*g);
        BrokenPattern broken;
        Session s(*g, {&broken}, {SIZE_MAX, 1e9, true});
        auto r = s.run();
        QCOMPARE(r.steps, size_t(0));
        QCOMPARE(printed(*g), before);
        QCOMPARE(QString::fromStdString(s.lastError()),
                 QStringLiteral("pattern 'broken_relu' at 'relu' rolled back: new node 'abs_1' has no shape/dtype"));
        QVERIFY(g->lint().empty());
    }
};

QTEST_GUILESS_MAIN(TestRewrite)
#include "tst_Rewrite.moc"
