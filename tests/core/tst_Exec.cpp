// SPDX-License-Identifier: MIT
// The executor inside the engine: a deliberately wrong pattern (a cat with its inputs swapped: shapes
// and lint stay valid, values do not) is caught by the per-step verification and rolled back; a
// correct preset passes every step. Also the executor's error messages on bad graphs.
#include "BuiltinPatterns.h"
#include "exec/Executor.h"
#include "exec/PatternCheck.h"
#include "io/GraphJson.h"
#include "io/Safetensors.h"
#include "rewrite/Session.h"

#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace fxlens;
using namespace fxlens::rewrite;
using ir::OpKind;

namespace {

std::unique_ptr<ir::Graph> example(const char *name)
{
    auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/" + name);
    if (!r.ok())
        qFatal("%s", r.error().toString().c_str());
    return std::move(r.value());
}

/// Swaps the first two inputs of every cat whose inputs have equal shapes.
class SwapCat : public Pattern {
public:
    SwapCat()
    {
        name = "swap_cat";
        anchors = {{OpKind::CallFunction, "torch.cat"}};
        labels = {"user"};
    }
    bool match(Node *n, Match &m, MatchFailure &) const override
    {
        const auto &l = n->args()[0].items();
        m.nodes = {n};
        return l.size() >= 2 && l[0].isNode() && l[1].isNode() && l[0].toNode() != l[1].toNode() &&
            l[0].toNode()->meta().val == l[1].toNode()->meta().val;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        auto args = m.anchor->args();
        std::swap(args[0].items()[0], args[0].items()[1]);
        rw.setInputs(m.anchor, args, m.anchor->kwargs());
    }
};

} // namespace

class TestExec : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void wrongPatternIsRolledBack()
    {
        auto g = example("tangle4_fx.json");
        std::string err;
        SessionConfig cfg;
        cfg.checked = true;
        cfg.verify = exec::makeStepVerifier(*g, {}, err);
        QVERIFY2(cfg.verify, err.c_str());
        SwapCat bad;
        Session s(*g, {&bad}, cfg);
        auto r = s.run();
        QCOMPARE(r.steps, size_t(0));
        QVERIFY2(s.lastError().find("pattern 'swap_cat'") != std::string::npos, s.lastError().c_str());
        QVERIFY2(s.lastError().find("output 0 changed") != std::string::npos, s.lastError().c_str());
        // Rolled back: the graph still computes what it did.
        auto again = example("tangle4_fx.json");
        auto rep = exec::verifyGraphs(*again, *g, {});
        QVERIFY(rep.ok() && rep.value().pass);
    }

    void vertialPresetVerifiesEveryStep()
    {
        auto g = example("tangle50_aten.json");
        std::string err;
        PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        SessionConfig cfg;
        cfg.verify = exec::makeStepVerifier(*g, {}, err);
        QVERIFY(cfg.verify);
        Session s(*g, reg.preset("vertical", err), cfg);
        auto r = s.run();
        QVERIFY2(s.lastError().empty(), s.lastError().c_str());
        QCOMPARE(r.reason, StopReason::Fixpoint);
        QVERIFY(r.steps > 100);
        for (const auto &step : s.history())
            QVERIFY(step.verified);
    }

    void allPresetVerifiesEveryStep_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("torch") << QStringLiteral("tangle50_torch.json");
        QTest::newRow("aten") << QStringLiteral("tangle50_aten.json");
    }

    void allPresetVerifiesEveryStep()
    {
        // Horizontal fusion and the vertical cleanup, every step run through the executor.
        QFETCH(QString, file);
        auto g = example(file.toUtf8().constData());
        std::string err;
        PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        SessionConfig cfg;
        cfg.checked = true;
        cfg.verify = exec::makeStepVerifier(*g, {}, err);
        QVERIFY(cfg.verify);
        Session s(*g, reg.preset("all", err), cfg);
        auto r = s.run();
        QVERIFY2(s.lastError().empty(), s.lastError().c_str());
        QVERIFY(r.rewritesByPattern.size() > 5);
        for (const auto &step : s.history())
            QVERIFY(step.verified);
    }

    /// Freezing folds the weight-only nodes (the batched linears' weight stacks) and changes no output.
    void freezeKeepsOutputs_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("torch") << QStringLiteral("tangle50_torch.json");
        QTest::newRow("aten") << QStringLiteral("tangle50_aten.json");
    }
    void freezeKeepsOutputs()
    {
        QFETCH(QString, file);
        auto g = example(file.toUtf8().constData());
        std::string err;
        PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        Session s(*g, reg.preset("all", err), {});
        s.run();
        auto runner = exec::Runner::create(*g, {});
        QVERIFY(runner.ok());
        auto plain = runner.value()->run(*g);
        QVERIFY(plain.ok());
        auto folded = runner.value()->freeze(*g);
        QVERIFY2(folded.ok(), folded.ok() ? "" : folded.error().toString().c_str());
        QVERIFY(folded.value() >= 4); // the stacked weights and biases at least
        auto frozen = runner.value()->run(*g);
        QVERIFY(frozen.ok());
        auto rep = runner.value()->compare(*plain.value(), *frozen.value());
        QVERIFY2(rep.pass, rep.summary().c_str());
        runner.value()->unfreeze();
        auto again = runner.value()->run(*g);
        QVERIFY(runner.value()->compare(*plain.value(), *again.value()).pass);
    }

    /// The equivalence check of pattern files: a shipped pattern holds on every matched instance, a
    /// deliberately wrong one (narrow from the piece index instead of the offset) is caught.
    void patternEquivalenceCheck()
    {
        PatternRegistry reg;
        QVERIFY(patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        for (const char *name : {"mutate_cat_range", "split_cat_full", "unbind_cat_full", "merge_select_cat_aten"}) {
            const auto *p = dynamic_cast<const lang::FilePattern *>(reg.find(name));
            QVERIFY(p);
            auto rep = exec::checkPattern(*p, 300, 1);
            QVERIFY2(rep.ok(), (std::string(name) + ": " + rep.summary()).c_str());
            QVERIFY(rep.matched >= 3);
        }
        std::ifstream in(FXLENS_TEST_DATA "/lang/wrong_narrow_offset.fxpat");
        std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto wrong = lang::compilePattern(src, "wrong_narrow_offset.fxpat");
        QVERIFY(wrong.ok());
        auto rep = exec::checkPattern(*wrong.value(), 300, 1);
        QVERIFY(!rep.ok());
        QVERIFY(!rep.counterexamples.empty());
        QVERIFY2(rep.counterexamples[0].find("x: f32[") != std::string::npos, rep.counterexamples[0].c_str());
        QVERIFY2(rep.summary().find("NOT shown equivalent") != std::string::npos, rep.summary().c_str());
    }

    /// Runs after the first go through the compiled plan (overloads bound, arguments resolved once);
    /// they give the first run's values exactly, and every edit recompiles the plan.
    void compiledPlanFollowsEdits()
    {
        auto g = example("tangle4_fx.json");
        auto r = exec::Runner::create(*g, {});
        QVERIFY(r.ok());
        auto &runner = *r.value();
        auto first = runner.run(*g);
        QVERIFY(first.ok());
        for (int k = 0; k < 3; ++k) {
            auto again = runner.run(*g);
            QVERIFY(again.ok());
            auto rep = runner.compare(*first.value(), *again.value());
            QVERIFY2(rep.pass, rep.summary().c_str());
            for (const auto &o : rep.outputs)
                QCOMPARE(o.maxAbs, 0.0);
        }
        Node *tanh = nullptr, *cat = nullptr;
        for (Node *n = g->first(); n; n = n->next()) {
            if (!tanh && n->target() == "torch.tanh")
                tanh = n;
            if (!cat && n->target() == "torch.cat" && n->args()[0].items().size() >= 2)
                cat = n;
        }
        QVERIFY(tanh && cat);
        g->setTarget(tanh, "torch.sigmoid");
        auto changed = runner.run(*g);
        QVERIFY(changed.ok());
        QVERIFY(!runner.compare(*first.value(), *changed.value()).pass);
        g->setTarget(tanh, "torch.tanh");
        auto back = runner.run(*g);
        QVERIFY(back.ok() && runner.compare(*first.value(), *back.value()).pass);
        auto args = cat->args();
        std::swap(args[0].items()[0], args[0].items()[1]);
        g->setArgs(cat, args);
        auto swapped = runner.run(*g);
        QVERIFY(swapped.ok());
        QVERIFY(!runner.compare(*first.value(), *swapped.value()).pass);
        std::swap(args[0].items()[0], args[0].items()[1]);
        g->setArgs(cat, args);
        auto restored = runner.run(*g);
        QVERIFY(restored.ok() && runner.compare(*first.value(), *restored.value()).pass);
        // Another graph object (the plan cache is per graph and revision): same values.
        auto copy = g->clone();
        auto cloned = runner.run(*copy);
        QVERIFY(cloned.ok() && runner.compare(*first.value(), *cloned.value()).pass);
    }

    /// Nodes compiled for tensors (operator.add, operator.mul) that meet numbers fall back to the
    /// interpreter on every run; a getitem past the end still names its node.
    void planStepsFallBack()
    {
        auto parse = [](const std::string &nodes) {
            auto g = io::parseGraphJson(R"({"format":"fxlens-graph","version":1,"ir":"torch","nodes":[)" + nodes + "]}", "t.json");
            if (!g.ok())
                qFatal("%s", g.error().toString().c_str());
            return std::move(g.value());
        };
        const std::string x =
            R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"val":{"tensor":{"shape":[2,3],"dtype":"float32"}}}},)";
        auto sizes = parse(x + R"(
            {"name":"s0","op":"call_method","target":"size","args":[{"node":"x"},0],"kwargs":{},"meta":{}},
            {"name":"s1","op":"call_method","target":"size","args":[{"node":"x"},1],"kwargs":{},"meta":{}},
            {"name":"n","op":"call_function","target":"operator.add","args":[{"node":"s0"},{"node":"s1"}],"kwargs":{},"meta":{}},
            {"name":"m","op":"call_function","target":"operator.mul","args":[{"node":"x"},{"node":"n"}],"kwargs":{},"meta":{}},
            {"name":"output","op":"output","target":"output","args":[{"node":"m"}],"kwargs":{},"meta":{}})");
        auto five = parse(x + R"(
            {"name":"m","op":"call_function","target":"operator.mul","args":[{"node":"x"},5],"kwargs":{},"meta":{}},
            {"name":"output","op":"output","target":"output","args":[{"node":"m"}],"kwargs":{},"meta":{}})");
        auto r = exec::Runner::create(*sizes, {});
        QVERIFY(r.ok());
        auto expected = r.value()->run(*five);
        QVERIFY(expected.ok());
        QCOMPARE(r.value()->describe(*expected.value()).size(), size_t(1));
        for (int k = 0; k < 3; ++k) {
            auto got = r.value()->run(*sizes);
            QVERIFY2(got.ok(), got.ok() ? "" : got.error().toString().c_str());
            auto rep = r.value()->compare(*expected.value(), *got.value());
            QVERIFY2(rep.pass, rep.summary().c_str());
        }
        auto past = parse(x + R"(
            {"name":"sp","op":"call_function","target":"torch.split","args":[{"node":"x"},1],"kwargs":{},"meta":{}},
            {"name":"g9","op":"call_function","target":"operator.getitem","args":[{"node":"sp"},9],"kwargs":{},"meta":{}},
            {"name":"output","op":"output","target":"output","args":[{"node":"g9"}],"kwargs":{},"meta":{}})");
        for (int k = 0; k < 2; ++k) {
            auto bad = r.value()->run(*past);
            QVERIFY(!bad.ok());
            QCOMPARE(QString::fromStdString(bad.error().toString()),
                     QStringLiteral("error: node 'g9': operator.getitem: index 9 out of range for 2 items"));
        }
    }

    /// Inputs of every dtype safetensors has a code for go through the executor (fromSafe, the
    /// graph, toSafe) and back to a file unchanged; an output safetensors cannot hold (complex128,
    /// sparse) is refused by the node that made it, and no file is written.
    void everyDtypeThroughTheExecutor()
    {
        const char *dtypes[][2] = {{"float64", "F64"},
                                   {"float32", "F32"},
                                   {"float16", "F16"},
                                   {"bfloat16", "BF16"},
                                   {"complex64", "C64"},
                                   {"int8", "I8"},
                                   {"int16", "I16"},
                                   {"int32", "I32"},
                                   {"int64", "I64"},
                                   {"uint8", "U8"},
                                   {"uint16", "U16"},
                                   {"uint32", "U32"},
                                   {"uint64", "U64"},
                                   {"bool", "BOOL"},
                                   {"float8_e4m3fn", "F8_E4M3"},
                                   {"float8_e5m2", "F8_E5M2"},
                                   {"float8_e4m3fnuz", "F8_E4M3FNUZ"},
                                   {"float8_e5m2fnuz", "F8_E5M2FNUZ"},
                                   {"float8_e8m0fnu", "F8_E8M0"},
                                   {"float4_e2m1fn_x2", "F4"}};
        // (Each raw string keeps its braces balanced: moc reads through them.)
        auto subst = [](std::string text, const std::string &key, const std::string &value) {
            for (size_t at; (at = text.find(key)) != std::string::npos;)
                text.replace(at, key.size(), value);
            return text;
        };
        const std::string placeholder =
            R"({"name":"X","op":"placeholder","target":"X","args":[],"kwargs":{},"meta":{"val":{"tensor":{"shape":[3],"dtype":"D","stride":[1],"requires_grad":false}}}},)";
        QTemporaryDir dir;
        std::string nodes, outs;
        std::map<std::string, io::SafeTensor> inputs;
        for (size_t i = 0; i < std::size(dtypes); ++i) {
            const std::string x = "x" + std::to_string(i);
            nodes += subst(subst(placeholder, "X", x), "\"D\"", std::string("\"") + dtypes[i][0] + "\"") + "\n";
            outs += std::string(outs.empty() ? "" : ",") + subst(R"({"node":"X"})", "X", x);
            io::SafeTensor t;
            t.dtype = dtypes[i][1];
            t.shape = {3};
            for (size_t b = 0; b < 3 * io::dtypeSize(t.dtype); ++b)
                t.data.push_back(std::strcmp(dtypes[i][0], "bool") == 0 ? uint8_t(b % 2) : uint8_t(b * 29 + i));
            inputs["input:" + std::to_string(i)] = t;
        }
        const std::string graph =
            R"({"format":"fxlens-graph","version":1,"ir":"aten","nodes":[NODES{"name":"output","op":"output","target":"output","args":[[OUTS]],"kwargs":{},"meta":{}}]})";
        auto g = io::parseGraphJson(subst(subst(graph, "NODES", nodes), "OUTS", outs), "dtypes");
        QVERIFY2(g.ok(), g.ok() ? "" : g.error().toString().c_str());
        exec::ExecOptions o;
        o.inputsFile = dir.filePath(QStringLiteral("in.safetensors")).toStdString();
        QVERIFY(io::writeSafetensors(inputs, o.inputsFile).ok());
        auto r = exec::Runner::create(*g.value(), o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        auto out = r.value()->run(*g.value());
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().toString().c_str());
        auto infos = r.value()->describe(*out.value());
        for (size_t i = 0; i < std::size(dtypes); ++i)
            QCOMPARE(infos[i].dtype, std::string(dtypes[i][0]));
        const std::string path = dir.filePath(QStringLiteral("out.safetensors")).toStdString();
        QVERIFY(r.value()->saveOutputs(*out.value(), path).ok());
        auto back = io::readSafetensors(path);
        QVERIFY(back.ok());
        for (size_t i = 0; i < std::size(dtypes); ++i) {
            const io::SafeTensor &a = back.value().at("output:" + std::to_string(i)), &e = inputs.at("input:" + std::to_string(i));
            QCOMPARE(a.dtype, e.dtype);
            QCOMPARE(a.shape, e.shape);
            QVERIFY2(a.data == e.data, dtypes[i][0]);
        }
        auto same = r.value()->compareWithFile(*out.value(), path);
        QVERIFY(same.ok());
        QVERIFY2(same.value().pass, same.value().summary().c_str());

        // Outputs safetensors cannot hold: named by their node, nothing written.
        auto refused = io::parseGraphJson(R"({"format":"fxlens-graph","version":1,"ir":"aten","nodes":[
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{"val":{"tensor":{"shape":[4,2],"dtype":"float64","stride":[2,1],"requires_grad":false}}}},
{"name":"c","op":"call_function","target":"torch.view_as_complex","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"s","op":"call_method","target":"to_sparse","args":[{"node":"x"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[[{"node":"x"},{"node":"c"},{"node":"s"}]],"kwargs":{},"meta":{}}]})",
                                          "refused");
        QVERIFY(refused.ok());
        auto r2 = exec::Runner::create(*refused.value(), {});
        QVERIFY(r2.ok());
        auto out2 = r2.value()->run(*refused.value());
        QVERIFY2(out2.ok(), out2.ok() ? "" : out2.error().toString().c_str());
        QCOMPARE(r2.value()->describe(*out2.value())[1].dtype, std::string("complex128"));
        const std::string none = dir.filePath(QStringLiteral("none.safetensors")).toStdString();
        auto w = r2.value()->saveOutputs(*out2.value(), none);
        QVERIFY(!w.ok());
        QCOMPARE(QString::fromStdString(w.error().toString()),
                 QString::fromStdString(none +
                                        ": error: node 'c': output:1 is complex128[4]: safetensors has no code for complex128 (its "
                                        "one complex code is C64): convert it with .to(torch.complex64), or store "
                                        "torch.view_as_real(t); nothing was written"));
        QVERIFY(!std::filesystem::exists(none));
        // The same outputs compare with themselves (complex as pairs, sparse made dense).
        auto self = r2.value()->compare(*out2.value(), *out2.value());
        QVERIFY2(self.pass, self.summary().c_str());
    }

    void errorsNameTheNode()
    {
        auto g = example("tangle4_fx.json");
        for (Node *n = g->first(); n; n = n->next())
            if (n->target() == "torch.tanh") {
                g->setTarget(n, "torch.no_such_op");
                break;
            }
        auto r = exec::Runner::create(*g, {});
        QVERIFY(r.ok());
        auto out = r.value()->run(*g);
        QVERIFY(!out.ok());
        QCOMPARE(QString::fromStdString(out.error().toString()),
                 QStringLiteral("error: node 'tanh': torch.no_such_op: no ATen operator aten::no_such_op"));
        exec::ExecOptions o;
        o.device = "tpu";
        QVERIFY(!exec::Runner::create(*g, o).ok());
        o.inputsFile = "/nonexistent.safetensors";
        o.device = "cpu";
        auto missing = exec::Runner::create(*g, o);
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().toString().find("/nonexistent.safetensors: error: cannot open file") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestExec)
#include "tst_Exec.moc"
