// SPDX-License-Identifier: MIT
// fxlens-cli tune as a user runs it: end to end on the CPU (the tuned graph, the trace, the report),
// measuring worker processes, bad input; and the report opened in a real headless browser
// (Chromium): it loads without console messages and every drawing has a size.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

namespace {
struct Run {
    int code = -1;
    QString out, err;
};

Run cli(const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral(FXLENS_CLI), args);
    p.waitForFinished(240000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}
} // namespace

class TestTuneCli : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_report;

private Q_SLOTS:
    void endToEndOnTheCpu()
    {
#ifndef FXLENS_CLI_HAS_TORCH
        Run noExec = cli({QStringLiteral("tune"), example("tangle4_fx.json")});
        QCOMPARE(noExec.code, 1);
        QVERIFY2(noExec.err.contains(QStringLiteral("no LibTorch")), qPrintable(noExec.err));
        QSKIP("this build has no executor: tune says so (checked above)");
#endif
        const QString out = m_dir.filePath(QStringLiteral("tuned.json")), trace = m_dir.filePath(QStringLiteral("trace.json"));
        m_report = m_dir.filePath(QStringLiteral("report.html"));
        Run r = cli({QStringLiteral("tune"), example("tangle4_fx.json"), QStringLiteral("--device"), QStringLiteral("cpu"),
                     QStringLiteral("-o"), out, QStringLiteral("--trace"), trace, QStringLiteral("--report"), m_report,
                     QStringLiteral("--iters"), QStringLiteral("5"), QStringLiteral("--budget"), QStringLiteral("60")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        for (const char *row : {"original", "greedy", "tuned", "noise band"})
            QVERIFY2(r.out.contains(QLatin1String(row)), qPrintable(r.out));
        QVERIFY2(r.err.contains(QStringLiteral("[0] original")), qPrintable(r.err)); // progress, one line per measurement

        QJsonObject t = readJson(trace);
        QCOMPARE(t[QStringLiteral("format")].toString(), QStringLiteral("fxlens-tune-trace"));
        QJsonArray trials = t[QStringLiteral("trials")].toArray();
        QVERIFY(trials.size() >= 5);
        QSet<QString> kinds;
        for (const auto &x : trials) {
            kinds << x.toObject()[QStringLiteral("kind")].toString();
            QVERIFY(x.toObject()[QStringLiteral("seconds")].toDouble() > 0);
        }
        QVERIFY(kinds.contains(QStringLiteral("original")) && kinds.contains(QStringLiteral("greedy")) &&
                kinds.contains(QStringLiteral("pattern")));
        const double tuned = t[QStringLiteral("tuned_s")].toDouble();
        QVERIFY(tuned > 0 && tuned <= t[QStringLiteral("greedy_s")].toDouble() && tuned <= t[QStringLiteral("original_s")].toDouble());

        // The tuned graph is a graph file like any other, with fewer nodes than the input.
        Run info = cli({QStringLiteral("info"), out});
        QVERIFY2(info.code == 0, qPrintable(info.err));
        QRegularExpressionMatch m = QRegularExpression(QStringLiteral("nodes: (\\d+)")).match(info.out);
        QVERIFY2(m.hasMatch(), qPrintable(info.out));
        QVERIFY(m.captured(1).toInt() < 108);
        Run run = cli({QStringLiteral("verify"), example("tangle4_fx.json"), out});
        QVERIFY2(run.code == 0, qPrintable(run.out + run.err));
    }

    void reportOpensInHeadlessChromium()
    {
        if (m_report.isEmpty() || !QFile::exists(m_report))
            QSKIP("no report (this build has no executor)");
        const QString chromium = QStandardPaths::findExecutable(QStringLiteral("chromium"));
        if (chromium.isEmpty())
            QSKIP("chromium is not installed (scripts/setup.sh installs it)");
        QProcess p;
        p.start(chromium,
                {QStringLiteral("--headless"), QStringLiteral("--no-sandbox"), QStringLiteral("--disable-gpu"),
                 QStringLiteral("--enable-logging=stderr"), QStringLiteral("--v=0"), QStringLiteral("--virtual-time-budget=5000"),
                 QStringLiteral("--dump-dom"), QStringLiteral("file://") + m_report});
        QVERIFY(p.waitForFinished(120000));
        const QString dom = QString::fromUtf8(p.readAllStandardOutput()), log = QString::fromUtf8(p.readAllStandardError());
        QRegularExpressionMatch body =
            QRegularExpression(QStringLiteral("<body data-rendered=\"(\\d+)\" data-drawings=\"(\\d+)\">")).match(dom);
        QVERIFY2(body.hasMatch(), qPrintable(dom.left(400) + log.right(800))); // the page's own check ran
        QVERIFY(body.captured(2).toInt() >= 3);                                // before, after, the chart
        QCOMPARE(body.captured(1), body.captured(2));                          // every drawing has a size
        for (const QString &line : log.split(QLatin1Char('\n')))
            QVERIFY2(!line.contains(QStringLiteral(":CONSOLE")), qPrintable(line));
    }

    void measuringWorkersOnePerDevice()
    {
#ifndef FXLENS_CLI_HAS_TORCH
        QSKIP("this build has no executor");
#endif
        const QString trace = m_dir.filePath(QStringLiteral("workers.json"));
        Run r = cli({QStringLiteral("tune"), example("tangle4_fx.json"), QStringLiteral("--devices"), QStringLiteral("cpu,cpu"),
                     QStringLiteral("--trace"), trace, QStringLiteral("--iters"), QStringLiteral("3")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QJsonObject t = readJson(trace);
        QVERIFY2(t[QStringLiteral("measured")].toString().startsWith(QStringLiteral("2 worker process(es) on cpu, cpu")),
                 qPrintable(t[QStringLiteral("measured")].toString()));
        for (const auto &x : t[QStringLiteral("trials")].toArray())
            QVERIFY2(!x.toObject().contains(QStringLiteral("error")), qPrintable(x.toObject()[QStringLiteral("error")].toString()));
    }

    void badInput()
    {
        Run r = cli({QStringLiteral("tune"), QStringLiteral(FXLENS_TEST_DATA "/malformed/does_not_exist.json")});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.contains(QStringLiteral("does_not_exist.json")), qPrintable(r.err));
        r = cli({QStringLiteral("tune"), example("tangle4_fx.json"), QStringLiteral("--budget"), QStringLiteral("soon")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--budget needs a number")), qPrintable(r.err));
#ifdef FXLENS_CLI_HAS_TORCH
        r = cli({QStringLiteral("tune"), example("tangle4_fx.json"), QStringLiteral("--device"), QStringLiteral("cuda:7")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QStringLiteral("tangle4_fx.json")), qPrintable(r.err));
#endif
    }
};

QTEST_GUILESS_MAIN(TestTuneCli)
#include "tst_TuneCli.moc"
