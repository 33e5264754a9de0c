// SPDX-License-Identifier: MIT
// fxlens: the desktop app.
#include "AppServices.h"
#include "Autosave.h"
#include "GraphCanvas.h"
#include "MainWindow.h"
#include "PatternDir.h"
#include "RewriteDebugger.h"
#include "Version.h"
#include "io/GraphJson.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QStatusBar>
#include <QTimer>

#include <functional>

#include <cstdio>

namespace {

struct Options {
    QCommandLineOption screenshot{QStringLiteral("screenshot"), QStringLiteral("Save a PNG of the window after loading and quit."),
                                  QStringLiteral("file.png")};
    QCommandLineOption applySteps{QStringLiteral("apply-steps"),
                                  QStringLiteral("After loading, apply the first N rewrite steps Run (F5) takes with the preset."),
                                  QStringLiteral("N")};
    QCommandLineOption exportTo{
        QStringLiteral("export"),
        QStringLiteral("Write the graph as the canvas lays it out (modules collapsed, constants hidden) to an .svg or "
                       ".png file and quit; needs no display."),
        QStringLiteral("out.svg|out.png")};
    QCommandLineOption scale{QStringLiteral("scale"), QStringLiteral("With --export to PNG: image pixels per scene pixel (default 1)."),
                             QStringLiteral("S")};
    QCommandLineOption expandAll{QStringLiteral("expand-all"), QStringLiteral("Every module expanded (in the window and with --export).")};
    QCommandLineOption constants{QStringLiteral("show-constants"), QStringLiteral("With --export: parameters and constants as nodes.")};
    QCommandLineOption expand{QStringLiteral("expand"),
                              QStringLiteral("Expand this module and the modules around it, and show it (repeatable: the last is shown)."),
                              QStringLiteral("module")};
    QCommandLineOption select{QStringLiteral("select"), QStringLiteral("Select this node and bring it into view."), QStringLiteral("node")};

    void describe(QCommandLineParser &parser)
    {
        parser.setApplicationDescription(QStringLiteral("See and straighten PyTorch FX graphs."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("graph"), QStringLiteral("FX graph file (.json, .json.gz) to open"));
        for (auto *o : {&screenshot, &applySteps, &exportTo, &scale, &expandAll, &constants, &expand, &select})
            parser.addOption(*o);
    }
};

/// --apply-steps N: Run's first N steps from where the document stands (version 0, or the end of a
/// recovered history); says so when fewer were taken, and why.
void applySteps(fxlens::views::MainWindow &w, const QString &value)
{
    bool number = false;
    const int n = value.toInt(&number);
    if (!number || n < 0) {
        std::fprintf(stderr, "fxlens: --apply-steps %s: not a number of steps\n", qPrintable(value));
        return;
    }
    auto *d = w.debugger();
    const int from = d->version();
    const QString why = d->run(n);
    const int taken = d->version() - from;
    if (taken >= n)
        return;
    const QString text = QStringLiteral("--apply-steps %1: %2 applied from version %3 (stopped: %4)").arg(n).arg(taken).arg(from).arg(why);
    std::fprintf(stderr, "fxlens: %s\n", qPrintable(text));
    const QString before = w.statusBar()->currentMessage();
    w.statusBar()->showMessage(before.isEmpty() ? text : before + QStringLiteral(" — ") + text);
}

/// fxlens GRAPH --export out.svg|out.png [--scale S]: the canvas' picture of the graph, headless.
int exportGraph(const QCommandLineParser &parser, const Options &o)
{
    const QStringList files = parser.positionalArguments();
    const QString out = parser.value(o.exportTo);
    if (files.size() != 1) {
        std::fprintf(stderr, "fxlens: --export needs one graph file\n");
        return 2;
    }
    const bool svg = out.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive);
    if (!svg && !out.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive)) {
        std::fprintf(stderr, "fxlens: --export %s: the file name must end in .svg or .png\n", qPrintable(out));
        return 2;
    }
    bool ok = true;
    const double scale = parser.isSet(o.scale) ? parser.value(o.scale).toDouble(&ok) : 1.0;
    if (!ok || scale <= 0 || scale > 16) {
        std::fprintf(stderr, "fxlens: --scale %s: expected a number above 0 and at most 16\n", qPrintable(parser.value(o.scale)));
        return 2;
    }
    auto g = fxlens::io::readGraphFile(files.first().toStdString());
    if (!g) {
        std::fprintf(stderr, "%s\n", g.error().toString().c_str());
        return 3;
    }
    fxlens::views::GraphCanvas canvas;
    canvas.resize(1600, 1000);
    canvas.setGraph(g.value().get());
    if (parser.isSet(o.constants))
        canvas.setShowConstants(true);
    if (parser.isSet(o.expandAll))
        canvas.expandAll();
    double used = scale;
    if (svg ? !canvas.exportSvg(out) : !canvas.exportScenePng(out, scale, &used)) {
        std::fprintf(stderr, "fxlens: cannot write %s\n", qPrintable(out));
        return 4;
    }
    std::printf("wrote %s: %zu items, %zu edges%s\n", qPrintable(out), canvas.view().items.size(), canvas.view().edges.size(),
                !svg && used < scale ? qPrintable(QStringLiteral(" (scale lowered to %1 to stay within 16384 pixels a side)").arg(used))
                                     : "");
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    // --help and --version need no display: they are answered before the GUI starts (so that
    // `fxlens --help` works over ssh and man pages can be generated on a build machine); --export
    // runs on the offscreen platform unless one was chosen.
    bool exporting = false;
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version") {
            QCoreApplication core(argc, argv);
            QCoreApplication::setApplicationName(QStringLiteral("fxlens"));
            QCoreApplication::setApplicationVersion(QStringLiteral(FXLENS_VERSION));
            QCommandLineParser parser;
            o.describe(parser);
            parser.process(core); // prints and exits
            return 0;
        }
        exporting = exporting || a == "--export" || a.startsWith("--export=");
    }
    if (exporting && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("fxlens"));
    QApplication::setApplicationName(QStringLiteral("fxlens"));
    QApplication::setApplicationVersion(QStringLiteral(FXLENS_VERSION));
    QCommandLineParser parser;
    o.describe(parser);
    parser.process(app);
    if (parser.isSet(o.exportTo))
        return exportGraph(parser, o);

    fxlens::views::MainWindow w(fxlens::app::appServices(fxlens::app::defaultPatternDir()));
    if (parser.isSet(o.applySteps)) // the recovery prompt says where the steps will run
        w.setRecoveryPrompt([&w, then = QStringLiteral("--apply-steps ") + parser.value(o.applySteps)](
                                const fxlens::views::AutosaveState &s) { return fxlens::views::Autosave::askToRecover(&w, s, then); });
    w.show();
    const QStringList files = parser.positionalArguments();
    bool ok = true;
    if (!files.isEmpty())
        ok = w.openFile(files.first());
    if (ok && parser.isSet(o.expandAll))
        w.canvas()->expandAll();
    for (const QString &m : ok ? parser.values(o.expand) : QStringList{}) {
        const QStringList parts = m.split(QLatin1Char('.'));
        for (int i = 1; i <= parts.size(); ++i)
            w.canvas()->setExpanded(parts.mid(0, i).join(QLatin1Char('.')), true);
    }
    // What needs the final layout waits for it (a Graphviz layout runs off the GUI thread and
    // fits the view when it arrives).
    auto afterLayout = [&w](std::function<void()> fn) {
        if (w.canvas()->layoutRunning())
            QObject::connect(
                w.canvas(), &fxlens::views::GraphCanvas::layoutFinished, &w, [fn](bool, const QString &) { fn(); },
                Qt::SingleShotConnection);
        else
            fn();
    };
    // The steps first: --expand and --select show the graph as they leave it.
    if (ok && parser.isSet(o.applySteps))
        applySteps(w, parser.value(o.applySteps));
    if (ok && parser.isSet(o.expand))
        afterLayout([&w, m = parser.values(o.expand).constLast()] {
            if (!w.showModule(m))
                std::fprintf(stderr, "fxlens: --expand %s: no such module\n", qPrintable(m));
        });
    if (ok && parser.isSet(o.select))
        afterLayout([&w, n = parser.value(o.select)] {
            if (!w.canvas()->selectNode(n))
                std::fprintf(stderr, "fxlens: --select %s: no such node\n", qPrintable(n));
        });
    if (parser.isSet(o.screenshot))
        afterLayout([&w, out = parser.value(o.screenshot), ok] {
            QTimer::singleShot(0, &w, [&w, out, ok] {
                w.grab().save(out);
                QApplication::exit(ok ? 0 : 3);
            });
        });
    return app.exec();
}
