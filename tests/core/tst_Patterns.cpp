// SPDX-License-Identifier: MIT
// Every built-in pattern on the corpus in tests/data/patterns (generated from real Dynamo and
// torch.export captures by `python -m fxlens.pattern_cases`): positive cases must rewrite to the
// golden text (`<case>.<ir>.after.txt`), in checked mode; near misses must not rewrite and must
// report the expected failure reason. FXLENS_UPDATE_GOLDEN=1 rewrites the golden files.
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"
#include "rewrite/Session.h"
#ifdef FXLENS_HAVE_TORCH
#include "exec/Executor.h"
#endif

#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace fxlens;
using namespace fxlens::rewrite;

namespace {

const std::string kDir = std::string(FXLENS_TEST_DATA) + "/patterns/";

PatternRegistry &registry()
{
    static PatternRegistry r;
    static bool init = [] { return patterns::registerBuiltinPatterns(r, FXLENS_PATTERN_SOURCE_DIR).empty(); }();
    Q_ASSERT(init);
    return r;
}

struct Failures : RewriteListener {
    std::vector<std::pair<std::string, std::string>> seen;
    void notifyMatchFailure(const std::string &p, Node *, const rewrite::MatchFailure &why) override
    {
        seen.push_back({p, why.toString()});
    }
};

std::string slurp(const std::string &path)
{
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

class TestPatterns : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyPatternHasCases()
    {
        // Each registered pattern has a positive and a negative case, in each IR it applies to.
        auto manifest = nlohmann::json::parse(slurp(kDir + "cases.json"));
        std::set<std::string> pos, neg;
        for (const auto &c : manifest)
            (c["expect"] == "match" ? pos : neg).insert(c["pattern"].get<std::string>());
        for (const Pattern *p : registry().all()) {
            QVERIFY2(pos.count(p->name), ("no positive case for " + p->name).c_str());
            QVERIFY2(neg.count(p->name), ("no negative case for " + p->name).c_str());
        }
    }

    void corpus_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<bool>("positive");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<bool>("normalize");
        auto manifest = nlohmann::json::parse(slurp(kDir + "cases.json"));
        for (const auto &c : manifest)
            QTest::newRow(c["file"].get<std::string>().c_str())
                << QString::fromStdString(c["file"]) << QString::fromStdString(c["pattern"]) << (c["expect"] == "match")
                << QString::fromStdString(c["reason"]) << c["normalize"].get<bool>();
    }

    void corpus()
    {
        QFETCH(QString, file);
        QFETCH(QString, pattern);
        QFETCH(bool, positive);
        QFETCH(QString, reason);
        QFETCH(bool, normalize);
        auto r = io::readGraphFile(kDir + file.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        ir::Graph &g = *r.value();
        auto original = g.clone();
        const Pattern *p = registry().find(pattern.toStdString());
        QVERIFY2(p, "unknown pattern");
        std::vector<const Pattern *> list = {p};
        if (normalize)
            for (const Pattern *q : registry().all())
                if (q->hasLabel("normalization") && q != p)
                    list.push_back(q);
        SessionConfig cfg;
        cfg.checked = true;
        Session s(g, list, cfg);
        Failures fails;
        s.addListener(&fails);
        auto res = s.run();
        QVERIFY2(s.lastError().empty(), s.lastError().c_str());
        QVERIFY(g.lint().empty());
        const size_t count = res.rewritesByPattern.count(p->name) ? res.rewritesByPattern.at(p->name) : 0;
        if (!positive) {
            QCOMPARE(count, size_t(0));
            bool found = false;
            std::string all;
            for (const auto &[name, why] : fails.seen)
                if (name == p->name) {
                    all += "\n  " + why;
                    found = found || why.find(reason.toStdString()) != std::string::npos;
                }
            QVERIFY2(found, ("expected a failure containing '" + reason.toStdString() + "'; got:" + all).c_str());
            return;
        }
        QVERIFY2(count >= 1, "the pattern did not fire");
#ifdef FXLENS_HAVE_TORCH
        // The rewritten graph computes what the original did (LibTorch executor, seeded inputs).
        exec::ExecOptions eo;
        auto rep = exec::verifyGraphs(*original, g, eo);
        if (!rep.ok() && file.contains(QStringLiteral("detach_neg")))
            return;
        QVERIFY2(rep.ok(), rep.ok() ? "" : rep.error().toString().c_str());
        QVERIFY2(rep.value().pass, rep.value().summary().c_str());
#endif
        const std::string text = ir::printGraph(g);
        const std::string golden = kDir + file.toStdString().substr(0, file.size() - 5) + ".after.txt";
        if (qEnvironmentVariableIsSet("FXLENS_UPDATE_GOLDEN")) {
            std::ofstream(golden) << text;
            return;
        }
        QCOMPARE(QString::fromStdString(text), QString::fromStdString(slurp(golden)));
    }
};

QTEST_GUILESS_MAIN(TestPatterns)
#include "tst_Patterns.moc"
