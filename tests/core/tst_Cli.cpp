// SPDX-License-Identifier: MIT
// Tests of fxlens-cli as a user runs it: output, exit codes and messages on stderr.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QSet>
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
                      QStringLiteral("-o"), json})
                     .code,
                 0);
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
        Run r = cli({QStringLiteral("optimize"), example("tangle50_torch.json"), QStringLiteral("--preset"), QStringLiteral("vertical"),
                     QStringLiteral("-o"), out, QStringLiteral("--trace"), trace});
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
        // The event log: every attempt bracketed by begin/end, a match or a failure (with its
        // structured reason) in between, an applied end per step, and the node edits.
        QMap<QString, int> kinds;
        int applied = 0;
        for (const auto &e : trace_[QStringLiteral("events")].toArray()) {
            const auto o = e.toObject();
            ++kinds[o[QStringLiteral("kind")].toString()];
            applied += o[QStringLiteral("kind")].toString() == QStringLiteral("pattern_end") && o[QStringLiteral("applied")].toBool();
            if (o[QStringLiteral("kind")].toString() == QStringLiteral("match_failed"))
                QVERIFY(!o[QStringLiteral("failure")].toObject()[QStringLiteral("expected")].toString().isEmpty());
        }
        QCOMPARE(kinds[QStringLiteral("match_found")], steps_);
        QVERIFY(kinds[QStringLiteral("match_failed")] > 0);
        QCOMPARE(kinds[QStringLiteral("pattern_begin")], kinds[QStringLiteral("match_found")] + kinds[QStringLiteral("match_failed")]);
        QCOMPARE(kinds[QStringLiteral("pattern_end")], kinds[QStringLiteral("pattern_begin")]);
        QCOMPARE(applied, steps_);
        QVERIFY(kinds[QStringLiteral("node_modified")] > 0);
        // Per-step records (pattern, anchor, edits, seconds) for this run.
        const auto records = trace_[QStringLiteral("run")].toObject()[QStringLiteral("records")].toArray();
        QCOMPARE(records.size(), steps_);
        QVERIFY(records[0].toObject()[QStringLiteral("edits")].toInt() > 0);
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
        QCOMPARE(all.out.count(QLatin1Char('\n')), 78); // 62 in C++, 16 pattern files
        // One data pattern in full: its pattern graph, anchored on the cat.
        Run one = cli({QStringLiteral("patterns"), QStringLiteral("merge_select_cat_aten")});
        QCOMPARE(one.code, 0);
        QVERIFY2(one.out.contains(QStringLiteral("%aten.select.int = aten.select.int(%x, ?d, ?*i)")), qPrintable(one.out));
        QVERIFY2(one.out.contains(QStringLiteral("where assert n == x.shape[d]")), qPrintable(one.out));
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
        // An option of another command is refused, naming the command's own options.
        Run other = cli({QStringLiteral("info"), example("tangle4_fx.json"), QStringLiteral("--freeze")});
        QCOMPARE(other.code, 2);
        QVERIFY2(other.err.contains(QStringLiteral("option --freeze does not apply to 'info' (its options: -o)")), qPrintable(other.err));
        Run conv = cli({QStringLiteral("convert"), example("tangle4_fx.json"), QStringLiteral("--to"), QStringLiteral("text"),
                        QStringLiteral("--repeat"), QStringLiteral("3")});
        QCOMPARE(conv.code, 2);
        QVERIFY(conv.err.contains(QStringLiteral("option --repeat does not apply to 'convert'")));
        Run missing = cli({QStringLiteral("info"), QStringLiteral("/nonexistent/g.json")});
        QCOMPARE(missing.code, 3);
        QVERIFY(missing.err.contains(QStringLiteral("/nonexistent/g.json: error: cannot open file")));
    }

    /// Profiling on a machine without CUDA (CI): a clear note, then a CPU profile; the saved profile
    /// and the trace reopen without running anything.
    void profileCpu()
    {
#ifndef FXLENS_CLI_HAS_TORCH
        QSKIP("built without LibTorch");
#else
        QTemporaryDir tmp;
        const QString saved = tmp.filePath(QStringLiteral("a.prof.json")), savedB = tmp.filePath(QStringLiteral("b.prof.json")),
                      trace = tmp.filePath(QStringLiteral("t.json"));
        Run r = cli({QStringLiteral("profile"), example("tangle50_torch.json"), QStringLiteral("--optimize"), QStringLiteral("--iters"),
                     QStringLiteral("2"), QStringLiteral("--warmup"), QStringLiteral("1"), QStringLiteral("-o"), saved,
                     QStringLiteral("--compare-output"), savedB, QStringLiteral("--trace"), trace});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        if (!r.out.contains(QStringLiteral("device cuda")))
            QVERIFY2(r.err.contains(QStringLiteral("CUDA is not available on this machine")), qPrintable(r.err));
        QVERIFY(r.out.contains(QStringLiteral("2 timed iterations after 1 warm-up")));
        // The optimized tangle runs a constant number of ops: 19 in Torch IR.
        QRegularExpression ops(QStringLiteral("(?:ATen ops|kernels) per iteration +(\\d+)"));
        auto m = ops.globalMatch(r.out);
        QVector<int> counts;
        while (m.hasNext())
            counts.push_back(m.next().captured(1).toInt());
        QCOMPARE(counts.size(), 2);
        QVERIFY2(counts[0] >= 20 * counts[1], qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("fewer")));
        // Reopen the saved profiles: same tables, no execution.
        Run again = cli({QStringLiteral("profile"), saved, QStringLiteral("--compare"), savedB});
        QCOMPARE(again.code, 0);
        QVERIFY(again.err.isEmpty());
        QVERIFY(again.out.contains(QStringLiteral("B/A")));
        QVERIFY(again.out.contains(QString::number(counts[1])));
        QFile t(trace);
        QVERIFY(t.open(QIODevice::ReadOnly));
        QJsonObject doc = QJsonDocument::fromJson(t.readAll()).object();
        QVERIFY(doc.value(QStringLiteral("traceEvents")).toArray().size() > 100);
        // --freeze folds the weight stacks of the batched linears: fewer ops, same graph.
        Run frozen =
            cli({QStringLiteral("profile"), example("tangle50_torch.json"), QStringLiteral("--optimize"), QStringLiteral("--freeze"),
                 QStringLiteral("--iters"), QStringLiteral("1"), QStringLiteral("--device"), QStringLiteral("cpu")});
        QCOMPARE(frozen.code, 0);
        QVERIFY(frozen.err.isEmpty()); // --device cpu: no note
        QVERIFY(frozen.out.contains(QStringLiteral("weights frozen (")));
        m = ops.globalMatch(frozen.out);
        QVector<int> fc;
        while (m.hasNext())
            fc.push_back(m.next().captured(1).toInt());
        QCOMPARE(fc.size(), 2);
        QVERIFY(fc[1] < counts[1]);
#endif
    }

    /// "Why did this not match": the first failing element, node, expected and found.
    void explainNearMisses()
    {
        const QString data = QStringLiteral(FXLENS_TEST_DATA "/patterns/");
        Run dims = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("merge_select_cat_aten"),
                        QStringLiteral("--node"), QStringLiteral("cat"), data + QStringLiteral("merge_select_cat_aten_neg.aten.json")});
        QCOMPARE(dims.code, 1);
        QVERIFY2(dims.out.contains(QStringLiteral("no match: argument 'dim' of y at 'cat': expected ?d = 1 (bound before), found 0")),
                 qPrintable(dims.out));
        Run shapes = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("decompose_mm"), QStringLiteral("--node"),
                          QStringLiteral("mm"), data + QStringLiteral("decompose_mm_neg.aten.json")});
        QCOMPARE(shapes.code, 1);
        QVERIFY2(shapes.out.contains(QStringLiteral("  found:    false with a = xs_0 f32[64, 16], b = xs_1 f32[16, 8]")),
                 qPrintable(shapes.out));
        Run order = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("split_cat_full"), QStringLiteral("--node"),
                         QStringLiteral("cat"), data + QStringLiteral("split_cat_full_neg.torch.json")});
        QCOMPARE(order.code, 1);
        QVERIFY2(order.out.contains(QStringLiteral("expected: consecutive indices")) &&
                     order.out.contains(QStringLiteral("found:    [0, 2, 1]")),
                 qPrintable(order.out));
        // A built-in C++ pattern explains itself the same way.
        Run builtin = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("split_cat"), QStringLiteral("--node"),
                           QStringLiteral("cat"), data + QStringLiteral("split_cat_neg.torch.json")});
        QCOMPARE(builtin.code, 1);
        QVERIFY(builtin.out.contains(QStringLiteral("  element:  cat inputs")));
        Run match = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("decompose_mm"), QStringLiteral("--node"),
                         QStringLiteral("mm"), data + QStringLiteral("decompose_mm_pos.aten.json")});
        QCOMPARE(match.code, 0);
        QVERIFY(match.out.contains(QStringLiteral("match: decompose_mm at mm")));
        Run notAnchor = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("decompose_mm"),
                             QStringLiteral("--node"), QStringLiteral("add"), data + QStringLiteral("decompose_mm_pos.aten.json")});
        QCOMPARE(notAnchor.code, 1);
        QVERIFY(notAnchor.out.contains(
            QStringLiteral("no match: add is not an anchor of decompose_mm (anchors: call_function[aten.mm.default])")));
        Run typo = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("decompose_mn"), QStringLiteral("--node"),
                        QStringLiteral("mm"), data + QStringLiteral("decompose_mm_pos.aten.json")});
        QCOMPARE(typo.code, 2);
        QVERIFY(typo.err.contains(QStringLiteral("unknown pattern 'decompose_mn'; did you mean 'decompose_mm'?")));
        Run noNode = cli({QStringLiteral("explain"), QStringLiteral("--pattern"), QStringLiteral("decompose_mm"), QStringLiteral("--node"),
                          QStringLiteral("nope"), data + QStringLiteral("decompose_mm_pos.aten.json")});
        QCOMPARE(noNode.code, 3);
        QVERIFY(noNode.err.contains(QStringLiteral("decompose_mm_pos.aten.json: error: no node named 'nope'")));
    }

    /// Pattern files: lint with carets, a broken file in --pattern-dir is reported and skipped, a
    /// file pattern is used by optimize, exported as Python and checked for equivalence.
    void patternFiles()
    {
        Run bad = cli({QStringLiteral("lint-patterns"), QStringLiteral(FXLENS_TEST_DATA "/lang/bad")});
        QCOMPARE(bad.code, 3);
        QVERIFY(bad.err.contains(QStringLiteral("unknown_op.fxpat:2:9: error: unknown op 'torch.splt'; did you mean 'torch.split'?\n"
                                                "        s = torch.splt(x, sizes, d)\n"
                                                "            ^\n")));
        QCOMPARE(bad.err.count(QStringLiteral(": error: ")), 25);
        Run good = cli({QStringLiteral("lint-patterns"), QStringLiteral(FXLENS_EXAMPLES "/../../patterns")});
        QCOMPARE(good.code, 0);
        QVERIFY(good.out.contains(QStringLiteral("decompose_mm.fxpat: ok (decompose_mm)")));

        QTemporaryDir tmp;
        QFile ok(tmp.filePath(QStringLiteral("tanh_to_relu.fxpat"))), broken(tmp.filePath(QStringLiteral("broken.fxpat")));
        QVERIFY(ok.open(QIODevice::WriteOnly) && broken.open(QIODevice::WriteOnly));
        ok.write("def pattern(x: Tensor):\n    y = torch.tanh(x)\n    return y\n\ndef replacement(x):\n    return torch.relu(x)\n");
        broken.write("def pattern(x: Tensor):\n    y = torch.tahn(x)\n    return y\n\ndef replacement(x):\n    return x\n");
        ok.close();
        broken.close();
        const QString out = tmp.filePath(QStringLiteral("out.json"));
        Run opt = cli({QStringLiteral("optimize"), example("tangle4_fx.json"), QStringLiteral("--pattern-dir"), tmp.path(),
                       QStringLiteral("--patterns"), QStringLiteral("tanh_to_relu"), QStringLiteral("-o"), out});
        QVERIFY2(opt.code == 0, qPrintable(opt.err));
        QVERIFY2(opt.err.contains(QStringLiteral("broken.fxpat:2:9: error: unknown op 'torch.tahn'; did you mean 'torch.tanh'?")),
                 qPrintable(opt.err));
        QVERIFY2(opt.out.contains(QStringLiteral("tanh_to_relu")), qPrintable(opt.out));
        Run text = cli({QStringLiteral("convert"), out, QStringLiteral("--to"), QStringLiteral("text")});
        QVERIFY(!text.out.contains(QStringLiteral("torch.tanh")));
        QVERIFY(text.out.contains(QStringLiteral("torch.relu")));

        const QString py = tmp.filePath(QStringLiteral("p.py"));
        Run exp = cli({QStringLiteral("export-pattern"), QStringLiteral("decompose_mm"), QStringLiteral("-o"), py});
        QCOMPARE(exp.code, 0);
        QFile pf(py);
        QVERIFY(pf.open(QIODevice::ReadOnly));
        const QByteArray body = pf.readAll();
        QVERIFY(body.contains("def pattern(a, b):\n    mm = torch.ops.aten.mm.default(a, b)\n    return mm\n"));
        Run cxx = cli({QStringLiteral("export-pattern"), QStringLiteral("split_cat")});
        QCOMPARE(cxx.code, 2);
        QVERIFY(cxx.err.contains(QStringLiteral("'split_cat' is written in C++")));
#ifdef FXLENS_CLI_HAS_TORCH
        Run wrong = cli({QStringLiteral("check-pattern"), QStringLiteral(FXLENS_TEST_DATA "/lang/wrong_narrow_offset.fxpat"),
                         QStringLiteral("--trials"), QStringLiteral("300")});
        QCOMPARE(wrong.code, 1);
        QVERIFY2(wrong.out.contains(QStringLiteral("counterexample: x: f32[")), qPrintable(wrong.out));
        QVERIFY(wrong.out.contains(QStringLiteral("NOT shown equivalent")));
        Run right =
            cli({QStringLiteral("check-pattern"), QStringLiteral("unbind_stack_range"), QStringLiteral("--trials"), QStringLiteral("300")});
        QCOMPARE(right.code, 0);
        QVERIFY(right.out.contains(QStringLiteral("equivalent on every matched instance")));
#endif
    }

    void profileErrors()
    {
        QTemporaryDir tmp;
        const QString bad = tmp.filePath(QStringLiteral("bad.prof.json"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"fxlens-profile\", \"format_version\": 1}");
        f.close();
        Run r = cli({QStringLiteral("profile"), bad});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.contains(bad + QStringLiteral(": error: malformed profile")), qPrintable(r.err));
        Run missing = cli({QStringLiteral("profile"), QStringLiteral("/nonexistent/g.json")});
        QCOMPARE(missing.code, 3);
        QVERIFY(missing.err.contains(QStringLiteral("/nonexistent/g.json: error: cannot open file")));
        Run iters = cli({QStringLiteral("profile"), example("tangle4_fx.json"), QStringLiteral("--iters"), QStringLiteral("0")});
        QCOMPARE(iters.code, 2);
        QVERIFY(iters.err.contains(QStringLiteral("--iters needs a positive integer, got '0'")));
    }

    /// NVTX: with an injected tool (a stand-in for Nsight Systems), every iteration and every node
    /// opens one range in domain "fxlens"; a node's payload carries graph version and node index.
    void profileNvtxRanges()
    {
#ifndef FXLENS_NVTX_COUNTER
        QSKIP("built without NVTX headers or LibTorch");
#else
        QTemporaryDir tmp;
        const QString log = tmp.filePath(QStringLiteral("nvtx.log"));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("NVTX_INJECTION64_PATH"), QStringLiteral(FXLENS_NVTX_COUNTER));
        env.insert(QStringLiteral("FXLENS_NVTX_LOG"), log);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(FXLENS_CLI),
                {QStringLiteral("profile"), example("tangle4_fx.json"), QStringLiteral("--device"), QStringLiteral("cpu"),
                 QStringLiteral("--iters"), QStringLiteral("2"), QStringLiteral("--warmup"), QStringLiteral("1")});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        QFile f(log);
        QVERIFY2(f.open(QIODevice::ReadOnly), "the injected NVTX tool wrote no log");
        const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        // Ranges only around nodes that compute: calls other than getitem (not inputs, weights,
        // getitem or the output). Counted from the file itself.
        QFile gf(example("tangle4_fx.json"));
        QVERIFY(gf.open(QIODevice::ReadOnly));
        const QJsonArray all = QJsonDocument::fromJson(gf.readAll()).object().value(QStringLiteral("nodes")).toArray();
        QVERIFY(all.size() == 108);
        QSet<qulonglong> computing;
        for (int i = 0; i < all.size(); ++i) {
            const QJsonObject n = all[i].toObject();
            const QString op = n.value(QStringLiteral("op")).toString(), target = n.value(QStringLiteral("target")).toString();
            if (op.startsWith(QLatin1String("call_")) && !target.endsWith(QLatin1String("operator.getitem")))
                computing.insert(qulonglong(i));
        }
        const int nodes = int(computing.size());
        QCOMPARE(nodes, 46);
        int pushes = 0, pops = 0, iterations = 0, depth = 0, maxDepth = 0;
        QSet<qulonglong> nodeIndexes;
        for (const QString &l : lines) {
            const QStringList w = l.split(QLatin1Char(' '));
            QCOMPARE(w.value(1), QStringLiteral("fxlens"));
            if (w[0] == QLatin1String("pop")) {
                ++pops;
                --depth;
                continue;
            }
            ++pushes;
            maxDepth = std::max(maxDepth, ++depth);
            const qulonglong payload = w.value(3).toULongLong();
            if (w.value(4) == QLatin1String("iteration") || w.value(4) == QLatin1String("warm-up")) {
                ++iterations;
                QCOMPARE(depth, 1);
            } else {
                QCOMPARE(depth, 2);                     // nodes nest in their iteration
                QCOMPARE(payload >> 32, qulonglong(0)); // graph version 0
                nodeIndexes.insert(payload & 0xffffffffULL);
            }
        }
        QCOMPARE(iterations, 3);
        QCOMPARE(pushes, 3 * (nodes + 1));
        QCOMPARE(pops, pushes);
        QCOMPARE(maxDepth, 2);
        QCOMPARE(nodeIndexes, computing);
        // Messages are the node names (registered strings); the category is the iteration + 1.
        QCOMPARE(lines.value(0), QStringLiteral("push fxlens 0 0 warm-up 0"));
        QCOMPARE(lines.value(1), QStringLiteral("push fxlens 1 1 split"));
        QCOMPARE(lines.value(3), QStringLiteral("push fxlens 1 3 split_1"));
#endif
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_Cli.moc"
