// SPDX-License-Identifier: MIT
// Tests of fxlens-cli as a user runs it: output, exit codes and messages on stderr.
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace {
struct Run {
    int code = -1;
    QString out, err;
};

Run cli(const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral(FXLENS_CLI), args);
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }
} // namespace

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void help()
    {
        Run r = cli({QStringLiteral("--help")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains(QStringLiteral("usage: fxlens-cli")));
        Run none = cli({});
        QCOMPARE(none.code, 2);
    }

    void info()
    {
        Run r = cli({QStringLiteral("info"), example("tangle50_torch.json")});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains(QStringLiteral("nodes: 1304\n")));
        QVERIFY(r.out.contains(QStringLiteral("      101  call_function torch.cat\n")));
        QVERIFY(r.out.contains(QStringLiteral("source: dynamo")));
        QVERIFY(r.out.contains(QStringLiteral("0 (fxlens.models.TangleBlock) 25 nodes")));
    }

    void lint()
    {
        Run ok = cli({QStringLiteral("lint"), example("resnet50_aten.json.gz")});
        QCOMPARE(ok.code, 0);
        QVERIFY(ok.out.contains(QStringLiteral("ok (552 nodes)")));
        Run bad = cli({QStringLiteral("lint"), QStringLiteral(FXLENS_TEST_DATA "/malformed/dangling_ref.json")});
        QCOMPARE(bad.code, 3);
        QVERIFY(bad.err.contains(QStringLiteral("dangling_ref.json: error: node 'y': references unknown node 'ghost'")));
        QVERIFY(bad.out.isEmpty());
    }

    void convert()
    {
        QTemporaryDir tmp;
        Run text = cli({QStringLiteral("convert"), example("transformer_fx.json"), QStringLiteral("--to"), QStringLiteral("text")});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.startsWith(QStringLiteral("graph():\n    %x : [num_users=")));
        QVERIFY(text.out.contains(QStringLiteral("call_module[target=qkv](args = (%x,), kwargs = {})  # f32[2, 16, 192]")));
        QString svg = tmp.filePath(QStringLiteral("g.svg"));
        Run s = cli({QStringLiteral("convert"), example("transformer_fx.json"), QStringLiteral("--to"), QStringLiteral("svg"),
                     QStringLiteral("-o"), svg});
        QCOMPARE(s.code, 0);
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray data = f.readAll();
        QVERIFY(data.contains("<svg"));
        QVERIFY(data.contains("softmax"));
        QString json = tmp.filePath(QStringLiteral("g.json"));
        QCOMPARE(cli({QStringLiteral("convert"), example("transformer_fx.json"), QStringLiteral("--to"), QStringLiteral("json"),
                      QStringLiteral("-o"), json}).code, 0);
        Run again = cli({QStringLiteral("convert"), json, QStringLiteral("--to"), QStringLiteral("text")});
        QCOMPARE(again.out, text.out);
        Run bad = cli({QStringLiteral("convert"), example("transformer_fx.json"), QStringLiteral("--to"), QStringLiteral("onnx")});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains(QStringLiteral("unknown format 'onnx'")));
    }

    void optimize()
    {
        QTemporaryDir tmp;
        QString out = tmp.filePath(QStringLiteral("opt.json")), trace = tmp.filePath(QStringLiteral("trace.json"));
        Run r = cli({QStringLiteral("optimize"), example("tangle50_torch.json"), QStringLiteral("--preset"),
                     QStringLiteral("vertical"), QStringLiteral("-o"), out, QStringLiteral("--trace"), trace});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("nodes: 1304 -> 504\n")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("  unbind_cat_to_view           50\n")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("  split_stack_to_cats          50\n")));
        QVERIFY(r.out.contains(QStringLiteral("stop reason: fixpoint")));
        Run info = cli({QStringLiteral("info"), out});
        QVERIFY(info.out.contains(QStringLiteral("nodes: 504\n")));
        QVERIFY(!info.out.contains(QStringLiteral("torch.stack")));
        QFile t(trace);
        QVERIFY(t.open(QIODevice::ReadOnly));
        auto trace_ = QJsonDocument::fromJson(t.readAll()).object();
        QCOMPARE(trace_[QStringLiteral("format")].toString(), QStringLiteral("fxlens-trace"));
        const int steps_ = trace_[QStringLiteral("run")].toObject()[QStringLiteral("steps")].toInt();
        QCOMPARE(trace_[QStringLiteral("steps")].toArray().size(), steps_);
        // The event log: one begin/found/end per step, failures with reasons, and the node edits.
        QMap<QString, int> kinds;
        for (const auto &e : trace_[QStringLiteral("events")].toArray())
            ++kinds[e.toObject()[QStringLiteral("kind")].toString()];
        QCOMPARE(kinds[QStringLiteral("pattern_begin")], steps_);
        QCOMPARE(kinds[QStringLiteral("match_found")], steps_);
        QVERIFY(kinds[QStringLiteral("match_failed")] > 0);
        QVERIFY(kinds[QStringLiteral("node_erased")] > 0);
        QVERIFY(kinds[QStringLiteral("node_inserted")] > 0);
        Run steps = cli({QStringLiteral("optimize"), example("tangle50_torch.json"), QStringLiteral("--steps"), QStringLiteral("5")});
        QVERIFY(steps.out.contains(QStringLiteral("nodes: 1304 -> ")));
        QVERIFY(steps.out.contains(QStringLiteral("stop reason: step limit")));
        Run bad = cli({QStringLiteral("optimize"), example("tangle50_torch.json"), QStringLiteral("--patterns"), QStringLiteral("nope")});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains(QStringLiteral("unknown pattern 'nope'")));
    }

    void patterns()
    {
        Run all = cli({QStringLiteral("patterns")});
        QCOMPARE(all.code, 0);
        QVERIFY(all.out.contains(QStringLiteral("merge_select_cat_aten")));
        QCOMPARE(all.out.count(QLatin1Char('\n')), 58);
        // One data pattern in full: its pattern graph, anchored on the cat.
        Run one = cli({QStringLiteral("patterns"), QStringLiteral("merge_select_cat_aten")});
        QCOMPARE(one.code, 0);
        QVERIFY2(one.out.contains(QStringLiteral("%*select = aten.select.int(%x, ?sd, ?*i)")), qPrintable(one.out));
        QVERIFY(one.out.contains(QStringLiteral("# anchor")));
        Run bad = cli({QStringLiteral("patterns"), QStringLiteral("nope")});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains(QStringLiteral("unknown pattern 'nope'")));
    }

    void usageErrors()
    {
        Run r = cli({QStringLiteral("frobnicate")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains(QStringLiteral("unknown command 'frobnicate'")));
        Run o = cli({QStringLiteral("info"), QStringLiteral("--bogus")});
        QCOMPARE(o.code, 2);
        QVERIFY(o.err.contains(QStringLiteral("unknown option '--bogus'")));
        Run missing = cli({QStringLiteral("info"), QStringLiteral("/nonexistent/g.json")});
        QCOMPARE(missing.code, 3);
        QVERIFY(missing.err.contains(QStringLiteral("/nonexistent/g.json: error: cannot open file")));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_Cli.moc"
