// SPDX-License-Identifier: MIT
// One definition of a match: every list of matches gives the same ones as rewrite::findMatches. The
// engine's candidates (a fresh Session: stableCandidates, and candidates() for the current phase),
// `explain` at every anchor, the pattern editor's list (every pattern file), the Patterns panel's list
// and the document's match counter, on the pattern corpus (tests/data/patterns), the examples, and
// copies of the corpus graphs with an in-place op on a graph input (the mutation rule refuses what
// reads that storage); with FXLENS_MATCH_GRAPHS, on the zoo's exported graphs instead.
#include "GraphDocument.h"
#include "PatternEditor.h"
#include "PatternsPanel.h"
#include "SlowWait.h"
#include "io/GraphJson.h"
#include "rewrite/Session.h"

#include <QDir>
#include <QDirIterator>
#include <QListWidget>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <map>

using namespace fxlens;
using rewrite::Match;
using rewrite::Pattern;

namespace {

/// What every consumer must agree on: the pattern, the anchor, the matched nodes and the summary.
std::string keyOf(const Match &m)
{
    std::string k = m.pattern + " @ " + m.anchor->name() + " [";
    for (const auto *n : m.nodes)
        k += n->name() + ",";
    return k + "] " + m.summary;
}

std::vector<std::string> keys(const std::vector<Match> &ms)
{
    std::vector<std::string> out;
    for (const auto &m : ms)
        out.push_back(keyOf(m));
    return out;
}

/// The text the panel and the editor list a match as.
QString rowOf(const Match &m)
{
    return QStringLiteral("%1: %2").arg(QString::fromStdString(m.anchor->name()), QString::fromStdString(m.summary));
}

std::vector<Match> only(const std::vector<Match> &ms, const std::function<bool(const Match &)> &keep)
{
    std::vector<Match> out;
    for (const auto &m : ms)
        if (keep(m))
            out.push_back(m);
    return out;
}

QStringList listed(const QListWidget *l)
{
    QStringList out;
    for (int i = 0; i < l->count(); ++i)
        out << l->item(i)->text();
    return out;
}

/// A copy of `g` whose first tensor input is written in place before the output (`x.relu_()`, or
/// `aten.relu_` in an aten graph): matches that read it, or a view of it, are refused.
std::unique_ptr<ir::Graph> withInPlace(const ir::Graph &g)
{
    auto c = g.clone();
    for (ir::Node *n = c->first(); n; n = n->next()) {
        if (n->op() != ir::OpKind::Placeholder || n->meta().val.kind != ir::ValueMeta::Kind::Tensor)
            continue;
        const bool aten = c->irLevel == "aten";
        ir::Node *w = c->create(aten ? ir::OpKind::CallFunction : ir::OpKind::CallMethod, aten ? "aten.relu_.default" : "relu_",
                                {ir::Argument::node(n)}, {}, "relu_", c->outputNode());
        w->meta().val = n->meta().val;
        return c;
    }
    return nullptr;
}

} // namespace

class TestMatchConsumers : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    size_t m_refused = 0; ///< matches the mutation rule refused in the in-place copies

private Q_SLOTS:
    void consumersAgree_data()
    {
        QTest::addColumn<QString>("file");
        QVERIFY(m_tmp.isValid());
        // FXLENS_MATCH_GRAPHS: a folder of exported graphs instead (the zoo that bench/models.py
        // writes; ctest -L models): every `<model>_<exporter>[_i].json` under it.
        if (const QString zoo = qEnvironmentVariable("FXLENS_MATCH_GRAPHS"); !zoo.isEmpty()) {
            const QRegularExpression name(QStringLiteral("^[A-Za-z0-9_]+_(fx|dynamo|export|post_grad)(_[0-9]+)?\\.json$"));
            QDirIterator it(zoo, {QStringLiteral("*.json")}, QDir::Files, QDirIterator::Subdirectories);
            QStringList found;
            while (it.hasNext())
                if (const QString f = it.next(); name.match(QFileInfo(f).fileName()).hasMatch())
                    found << f;
            found.sort();
            QVERIFY2(!found.isEmpty(), qPrintable(QStringLiteral("no exported graphs under ") + zoo));
            for (const QString &f : found)
                QTest::newRow(qPrintable(QDir(zoo).relativeFilePath(f))) << f;
            return;
        }
        const QDir corpus(QStringLiteral(FXLENS_TEST_DATA "/patterns"));
        const auto files = corpus.entryList({QStringLiteral("*.torch.json"), QStringLiteral("*.aten.json")}, QDir::Files, QDir::Name);
        for (const QString &f : files)
            QTest::newRow(qPrintable(f)) << corpus.filePath(f);
        for (const char *f : {"tangle4_fx.json", "tangle50_torch.json", "tangle50_aten.json", "ctr_dynamo.json", "ctr_aten.json",
                              "transformer_fx.json", "transformer_aten.json"})
            QTest::newRow(f) << QStringLiteral(FXLENS_EXAMPLES "/%1").arg(QLatin1String(f));
        // The positive cases with an in-place op on their first input.
        for (const QString &f : files) {
            if (!f.contains(QStringLiteral("_pos.")))
                continue;
            auto r = io::readGraphFile(corpus.filePath(f).toStdString());
            QVERIFY(r.ok());
            auto g = withInPlace(*r.value());
            if (!g)
                continue;
            const QString path = m_tmp.filePath(QStringLiteral("inplace_") + f);
            QVERIFY(io::writeGraphFile(*g, path.toStdString()).ok());
            QTest::newRow(qPrintable(QStringLiteral("inplace_") + f)) << path;
        }
    }

    void consumersAgree()
    {
        QFETCH(QString, file);
        views::Services services;
        services.patternDir = FXLENS_PATTERN_SOURCE_DIR;
        views::GraphDocument doc(services);
        QVERIFY2(doc.registryError().isEmpty(), qPrintable(doc.registryError()));
        QSignalSpy counted(&doc, &views::GraphDocument::matchesCounted);
        views::PatternsPanel panel(doc);
        QString why;
        QVERIFY2(doc.open(file, &why), qPrintable(why));
        // Patterns keep per-graph caches: nothing else matches while the counter's worker does.
        QTRY_VERIFY_WITH_TIMEOUT(!counted.isEmpty(), kSlowWait);
        const ir::Graph &g = *doc.graph();
        const std::vector<const Pattern *> all = doc.registry().all();
        const std::vector<Match> ref = rewrite::findMatches(g, all);

        checkEngine(g, all, ref);
        checkExplain(g, all, ref);
        checkCounter(g, ref, counted.last().at(0).value<views::MatchCounts>());
        checkPanel(panel, all, ref);
        checkEditor(doc, ref);
        countRefused(g, all);
    }

    /// The in-place copies exercise the mutation rule: some matches are refused there.
    void inPlaceCopiesRefuseMatches()
    {
        if (qEnvironmentVariableIsEmpty("FXLENS_MATCH_GRAPHS"))
            QVERIFY2(m_refused > 0, "no match was refused for an in-place write");
    }

private:
    /// A fresh session on a copy lists the same matches: all of them in the stable order, the
    /// current phase's in candidates(), and each pattern's alone.
    void checkEngine(const ir::Graph &g, const std::vector<const Pattern *> &all, const std::vector<Match> &ref)
    {
        auto copy = g.clone();
        rewrite::Session s(*copy, all);
        QCOMPARE(keys(s.stableCandidates()), keys(ref));
        QCOMPARE(keys(s.candidates()), keys(only(ref, [&](const Match &m) { return patternOf(all, m)->phase == 0; })));
        for (const Pattern *p : all) {
            rewrite::Session one(*copy, {p});
            const auto mine = only(ref, [&](const Match &m) { return m.pattern == p->name; });
            QCOMPARE(keys(one.stableCandidates()), keys(mine));
        }
    }

    /// `explain` matches at exactly the anchors in the list, with the same match.
    void checkExplain(const ir::Graph &g, const std::vector<const Pattern *> &all, const std::vector<Match> &ref)
    {
        std::map<std::pair<std::string, const ir::Node *>, const Match *> byAnchor;
        for (const auto &m : ref)
            byAnchor[{m.pattern, m.anchor}] = &m;
        for (const Pattern *p : all)
            for (ir::Node *n = g.first(); n; n = n->next()) {
                if (!p->anchoredAt(*n))
                    continue;
                const auto e = rewrite::explain(*p, g, n);
                const auto it = byAnchor.find({p->name, n});
                QVERIFY2(e.matched == (it != byAnchor.end()), (p->name + " at " + n->name() + ": " + e.toString()).c_str());
                if (e.matched)
                    QCOMPARE(keyOf(e.match), keyOf(*it->second));
            }
    }

    /// The document's counter: per pattern, and every anchor in the list's order.
    void checkCounter(const ir::Graph &g, const std::vector<Match> &ref, const views::MatchCounts &c)
    {
        std::map<std::string, int> perPattern;
        for (const auto &m : ref)
            ++perPattern[m.pattern];
        QCOMPARE(c.perPattern, perPattern);
        std::map<const ir::Node *, size_t> pos;
        for (const ir::Node *n = g.first(); n; n = n->next())
            pos.emplace(n, pos.size());
        std::vector<size_t> anchors;
        for (const auto &m : ref)
            anchors.push_back(pos.at(m.anchor));
        QCOMPARE(c.anchorPositions, anchors);
    }

    /// The Patterns panel lists each pattern's matches as the query gives them.
    void checkPanel(views::PatternsPanel &panel, const std::vector<const Pattern *> &all, const std::vector<Match> &ref)
    {
        auto *list = panel.findChild<QListWidget *>(QStringLiteral("matchList"));
        QVERIFY(list);
        for (const Pattern *p : all) {
            QStringList expected;
            for (const auto &m : ref)
                if (m.pattern == p->name)
                    expected << rowOf(m);
            QCOMPARE(panel.showMatches(QString::fromStdString(p->name)), int(expected.size()));
            QCOMPARE(listed(list), expected);
        }
    }

    /// The pattern editor, on every pattern file: its list is the query's for that pattern, and its
    /// "why" panel says match at each listed anchor.
    void checkEditor(views::GraphDocument &doc, const std::vector<Match> &ref)
    {
        views::PatternEditor editor(doc.userPatterns());
        editor.setGraph(doc.graph());
        const QDir dir(QStringLiteral(FXLENS_PATTERN_SOURCE_DIR));
        for (const QString &f : dir.entryList({QStringLiteral("*.fxpat")}, QDir::Files, QDir::Name)) {
            QFile in(dir.filePath(f));
            QVERIFY(in.open(QIODevice::ReadOnly));
            editor.setSource(QString::fromUtf8(in.readAll()), f);
            QVERIFY2(editor.compiled(), qPrintable(editor.diagnostics()));
            const std::string name = f.chopped(int(sizeof(".fxpat") - 1)).toStdString();
            QVERIFY2(doc.registry().find(name), name.c_str());
            const auto mine = only(ref, [&](const Match &m) { return m.pattern == name; });
            QCOMPARE(editor.matchCount(), int(mine.size()));
            QStringList expected;
            for (const auto &m : mine)
                expected << rowOf(m);
            QCOMPARE(listed(editor.matchList()), expected.mid(0, editor.matchList()->count()));
            for (const auto &m : mine)
                QVERIFY(editor.explainAt(QString::fromStdString(m.anchor->name())).contains(QStringLiteral(": match: ")));
        }
    }

    /// Counts matches the pattern finds but the mutation rule refuses.
    void countRefused(const ir::Graph &g, const std::vector<const Pattern *> &all)
    {
        rewrite::GraphMatchContext ctx(g);
        for (const Pattern *p : all) {
            if (!rewrite::runsOn(*p, g))
                continue;
            for (ir::Node *n = g.first(); n; n = n->next()) {
                Match m;
                rewrite::MatchFailure why;
                if (p->anchoredAt(*n) && rewrite::matchAt(*p, n, ctx, rewrite::aliasOnce(g), m, why) == rewrite::Verdict::Unsafe)
                    ++m_refused;
            }
        }
    }

    static const Pattern *patternOf(const std::vector<const Pattern *> &all, const Match &m)
    {
        for (const Pattern *p : all)
            if (p->name == m.pattern)
                return p;
        return nullptr;
    }
};

QTEST_MAIN(TestMatchConsumers)
#include "tst_MatchConsumers.moc"
