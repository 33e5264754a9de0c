// SPDX-License-Identifier: MIT
// The tuner (rewrite/Tune.h) with injected cost models: it finds the known best choice (a pattern,
// a match group or a family order that a model makes cheaper), does not take differences inside the
// noise band, is never slower than the original or the greedy version, measures repeated blocks once
// and stops at its budget.
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "ir/GraphInfo.h"
#include "rewrite/Session.h"
#include "rewrite/Tune.h"

#include <QtTest>

#include <algorithm>
#include <map>

using namespace fxlens;
using namespace fxlens::rewrite;

namespace {

std::unique_ptr<ir::Graph> example(const char *name)
{
    auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES) + "/" + name);
    if (!r.ok())
        qFatal("%s", r.error().toString().c_str());
    return std::move(r.value());
}

/// Seconds from the graph's structure (a launch per call, so fewer nodes are faster), with fixed
/// times for chosen versions (by fingerprint): the known best choice of a test.
class ModelCost : public CostModel {
public:
    std::map<uint64_t, double> fixed;
    double jitter = 0; ///< relative, alternating sign per call: measurements of one version differ
    size_t versions = 0, calls = 0;

    std::vector<Result<Measurement>> measure(const std::vector<const ir::Graph *> &vs) override
    {
        ++calls;
        std::vector<Result<Measurement>> out;
        for (const ir::Graph *g : vs) {
            ++versions;
            auto it = fixed.find(ir::fingerprint(*g));
            double s = it != fixed.end() ? it->second : 1.0 + 0.01 * double(g->size());
            s *= 1 + jitter * ((versions % 2) ? 1 : -1);
            out.emplace_back(Measurement{s, 0, 5, "model"});
        }
        return out;
    }
};

std::unique_ptr<ir::Graph> parse(const std::string &text)
{
    auto r = io::parseGraphJson(text, "test");
    if (!r.ok())
        qFatal("%s", r.error().toString().c_str());
    return std::move(r.value());
}

/// Replaces a call to `from` by a call to `to` with the same arguments.
class Retarget : public Pattern {
public:
    Retarget(std::string n, std::string label, int b, std::string to) : m_to(std::move(to))
    {
        name = std::move(n);
        labels = {std::move(label)};
        benefit = b;
        anchors = {{ir::OpKind::CallFunction, "torch.relu"}};
    }
    bool match(Node *anchor, Match &m, MatchFailure &) const override
    {
        m.anchor = anchor;
        m.nodes = {anchor};
        m.removes = {anchor};
        m.summary = "relu -> " + m_to;
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Node *n =
            rw.create(ir::OpKind::CallFunction, m_to, m.anchor->args(), m.anchor->kwargs(), m.anchor->name() + "_r", m.anchor, m.anchor);
        rw.replaceAllUsesWith(m.anchor, n);
        rw.erase(m.anchor);
    }

private:
    std::string m_to;
};

uint64_t versionOf(const ir::Graph &g, const std::vector<const Pattern *> &ps, const TunePlan &plan)
{
    return ir::fingerprint(*replayPlan(g, ps, plan).graph);
}

} // namespace

class TestTune : public QObject {
    Q_OBJECT

    PatternRegistry m_reg;
    std::vector<const Pattern *> m_all;

private Q_SLOTS:
    void initTestCase()
    {
        QCOMPARE(QString::fromStdString(patterns::registerBuiltinPatterns(m_reg, FXLENS_PATTERN_SOURCE_DIR)), QString());
        std::string err;
        m_all = m_reg.preset("all", err);
        QVERIFY2(err.empty(), err.c_str());
    }

    void replayOfTheDefaultPlanIsTheGreedyResult()
    {
        auto g = example("tangle4_fx.json");
        auto greedy = g->clone();
        Session s(*greedy, m_all);
        s.run();
        Replay r = replayPlan(*g, m_all, TunePlan{});
        QCOMPARE(ir::fingerprint(*r.graph), ir::fingerprint(*greedy));
        QCOMPARE(r.steps.size(), s.history().size());
        for (const auto &st : r.steps)
            QVERIFY2(st.group.rfind(st.pattern + "#", 0) == 0, st.group.c_str());
    }

    /// A pattern whose steps cost time (the model makes the version without it the cheapest) is
    /// left out, with its measured difference; the other patterns stay.
    void aPatternThatCostsTimeIsLeftOut()
    {
        auto g = example("tangle4_fx.json");
        ModelCost cost;
        TunePlan without;
        without.droppedPatterns = {"split_cat"};
        QVERIFY(versionOf(*g, m_all, without) != versionOf(*g, m_all, TunePlan{})); // other patterns do not make up for it
        cost.fixed[versionOf(*g, m_all, without)] = 0.5;
        TuneResult r = tune(*g, m_all, cost);
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.best.droppedPatterns, std::set<std::string>{"split_cat"});
        QCOMPARE(r.tuned.seconds, 0.5);
        QVERIFY(r.tuned.seconds <= r.greedy.seconds && r.tuned.seconds <= r.original.seconds);
        QCOMPARE(r.leftOut.size(), size_t(1));
        QCOMPARE(QString::fromStdString(r.leftOut[0].pattern), QStringLiteral("split_cat"));
        QVERIFY(r.leftOut[0].deltaSeconds > 0.1);
        for (const auto &st : r.steps)
            QVERIFY(st.pattern != "split_cat");
        QVERIFY(r.steps.size() > 10); // the rest of the greedy work is kept
        QCOMPARE(ir::fingerprint(*r.graph), versionOf(*g, m_all, without));
    }

    /// One group of a pattern's matches (one structure) left out, the pattern's other groups kept.
    void aMatchGroupThatCostsTimeIsLeftOut()
    {
        auto g = example("tangle4_fx.json");
        Replay greedy = replayPlan(*g, m_all, TunePlan{});
        std::map<std::string, std::set<std::string>> groups;
        for (const auto &s : greedy.steps)
            groups[s.pattern].insert(s.group);
        // A group of a pattern that matches two structures, whose version differs from the greedy one.
        std::string group;
        TunePlan without;
        for (const auto &[p, gs] : groups)
            for (const auto &x : gs)
                if (gs.size() > 1 && group.empty()) {
                    without.droppedGroups = {x};
                    if (versionOf(*g, m_all, without) != versionOf(*g, m_all, TunePlan{}))
                        group = x;
                }
        QVERIFY2(!group.empty(), "tangle4 has a pattern that matches two structures");
        without.droppedGroups = {group};
        ModelCost cost;
        cost.fixed[versionOf(*g, m_all, without)] = 0.4;
        TuneResult r = tune(*g, m_all, cost);
        QVERIFY(r.best.droppedPatterns.empty());
        QCOMPARE(r.best.droppedGroups, std::set<std::string>{group});
        QCOMPARE(r.tuned.seconds, 0.4);
    }

    /// A family order that gives the cheapest version is found: two patterns of different
    /// families rewrite the same call two ways; the greedy driver takes the higher benefit, the order
    /// "user first" gives the other version, which the model makes cheapest.
    void aFamilyOrderIsChosenByCost()
    {
        auto g = parse(R"({"format":"fxlens-graph","version":1,"ir":"torch","nodes":[
            {"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{}},
            {"name":"relu","op":"call_function","target":"torch.relu","args":[{"node":"x"}],"kwargs":{}},
            {"name":"output","op":"output","target":"output","args":[{"node":"relu"}],"kwargs":{}}]})");
        Retarget toFunctional("relu_to_functional", "vertical", 10, "torch.nn.functional.relu");
        Retarget toClamp("relu_to_clamp", "user", 1, "torch.clamp");
        std::vector<const Pattern *> ps{&toFunctional, &toClamp};
        TunePlan order;
        order.order = {"user", "vertical"};
        QCOMPARE(QString::fromStdString(replayPlan(*g, ps, TunePlan{}).graph->find("output")->inputNodes()[0]->target()),
                 QStringLiteral("torch.nn.functional.relu"));
        QCOMPARE(QString::fromStdString(replayPlan(*g, ps, order).graph->find("output")->inputNodes()[0]->target()),
                 QStringLiteral("torch.clamp"));
        ModelCost cost;
        cost.fixed[versionOf(*g, ps, order)] = 0.3;
        TuneResult r = tune(*g, ps, cost);
        QCOMPARE(r.best.order, order.order);
        bool accepted = false;
        for (const auto &t : r.trials)
            accepted = accepted || (t.kind == "order" && t.accepted);
        QVERIFY(accepted);
        QCOMPARE(r.tuned.seconds, 0.3);
        QCOMPARE(QString::fromStdString(r.graph->find("output")->inputNodes()[0]->target()), QStringLiteral("torch.clamp"));
    }

    /// Differences inside the noise band are not taken: the greedy result stays.
    void differencesInsideTheNoiseBandAreNotTaken()
    {
        auto g = example("tangle4_fx.json");
        ModelCost cost;
        cost.jitter = 0.02; // repeated measurements differ by 4%
        TunePlan without;
        without.droppedPatterns = {"fold_view"};
        double greedySeconds = 1.0 + 0.01 * double(replayPlan(*g, m_all, TunePlan{}).graph->size());
        cost.fixed[versionOf(*g, m_all, without)] = greedySeconds * 0.985; // 1.5% faster: noise
        TuneResult r = tune(*g, m_all, cost);
        QVERIFY2(r.band >= 0.03 * greedySeconds, std::to_string(r.band).c_str());
        QVERIFY(r.best.droppedPatterns.empty() && r.best.droppedGroups.empty());
        QVERIFY(r.leftOut.empty());
    }

    /// When every rewrite costs time, the tuned version is the original.
    void neverSlowerThanTheOriginal()
    {
        auto g = example("tangle4_fx.json");
        struct Inverse : ModelCost {
            std::vector<Result<Measurement>> measure(const std::vector<const ir::Graph *> &vs) override
            {
                std::vector<Result<Measurement>> out;
                for (const ir::Graph *x : vs)
                    out.emplace_back(Measurement{10.0 - 0.01 * double(x->size()), 0, 5, ""});
                return out;
            }
        } cost;
        TuneResult r = tune(*g, m_all, cost);
        QVERIFY(r.tuned.seconds <= r.original.seconds);
        QVERIFY(r.tuned.seconds <= r.greedy.seconds);
        QCOMPARE(r.graph->size(), g->size());
    }

    /// Repeated blocks are measured once: tangle with 200 blocks needs no more measurements than
    /// tangle with 50 (matches of identical blocks share a fingerprint, so a group).
    void repeatedBlocksAreMeasuredOnce()
    {
        ModelCost small, large;
        auto g50 = example("tangle50_torch.json");
        auto g200 = example("tangle200_torch.json.gz");
        TuneResult r50 = tune(*g50, m_all, small);
        TuneResult r200 = tune(*g200, m_all, large);
        QVERIFY2(r200.greedySteps > 3 * r50.greedySteps, std::to_string(r200.greedySteps).c_str());
        QVERIFY2(large.versions <= small.versions + 2, (std::to_string(small.versions) + " vs " + std::to_string(large.versions)).c_str());
    }

    void theBudgetStopsTheSearch()
    {
        auto g = example("tangle4_fx.json");
        ModelCost cost;
        TuneConfig cfg;
        cfg.budgetSeconds = 0;
        std::vector<std::string> kinds;
        cfg.onTrial = [&](const TuneTrial &t) { kinds.push_back(t.kind); };
        TuneResult r = tune(*g, m_all, cost, cfg);
        QVERIFY(r.budgetReached);
        QVERIFY(r.error.empty());
        QCOMPARE(kinds, (std::vector<std::string>{"original", "greedy"}));
        QVERIFY(r.tuned.seconds <= r.original.seconds);
    }

    void aVersionThatCannotBeMeasuredIsReported()
    {
        auto g = example("tangle4_fx.json");
        struct Failing : CostModel {
            std::vector<Result<Measurement>> measure(const std::vector<const ir::Graph *> &vs) override
            {
                std::vector<Result<Measurement>> out;
                for (size_t i = 0; i < vs.size(); ++i)
                    out.emplace_back(Diagnostic{Diagnostic::Severity::Error, "", 0, 0, "cat_3", "no kernel"});
                return out;
            }
        } cost;
        TuneResult r = tune(*g, m_all, cost);
        QVERIFY2(r.error.find("cat_3") != std::string::npos, r.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTune)
#include "tst_Tune.moc"
