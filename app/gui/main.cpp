// SPDX-License-Identifier: MIT
// fxlens: the desktop app.
#include "AppServices.h"
#include "MainWindow.h"
#include "PatternDir.h"
#include "RewriteDebugger.h"
#include "Version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

int main(int argc, char **argv)
{
    // --help and --version need no display: they are answered before the GUI starts (so that
    // `fxlens --help` works over ssh and man pages can be generated on a build machine).
    const auto describe = [](QCommandLineParser &parser, QCommandLineOption &screenshot, QCommandLineOption &applySteps) {
        parser.setApplicationDescription(QStringLiteral("See and straighten PyTorch FX graphs."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("graph"), QStringLiteral("FX graph file (.json, .json.gz) to open"));
        parser.addOption(screenshot);
        parser.addOption(applySteps);
    };
    QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Save a PNG of the window after loading and quit."),
                                  QStringLiteral("file.png"));
    QCommandLineOption applySteps(
        QStringLiteral("apply-steps"),
        QStringLiteral("After loading, apply the first N rewrite steps (the debugger's top candidate each time)."), QStringLiteral("N"));
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version") {
            QCoreApplication core(argc, argv);
            QCoreApplication::setApplicationName(QStringLiteral("fxlens"));
            QCoreApplication::setApplicationVersion(QStringLiteral(FXLENS_VERSION));
            QCommandLineParser parser;
            describe(parser, screenshot, applySteps);
            parser.process(core); // prints and exits
            return 0;
        }
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("fxlens"));
    QApplication::setApplicationName(QStringLiteral("fxlens"));
    QApplication::setApplicationVersion(QStringLiteral(FXLENS_VERSION));
    QCommandLineParser parser;
    describe(parser, screenshot, applySteps);
    parser.process(app);

    fxlens::views::MainWindow w(fxlens::app::appServices(fxlens::app::defaultPatternDir()));
    w.show();
    const QStringList files = parser.positionalArguments();
    bool ok = true;
    if (!files.isEmpty())
        ok = w.openFile(files.first());
    if (ok && parser.isSet(applySteps)) {
        const int n = parser.value(applySteps).toInt();
        for (int i = 0; i < n && w.debugger()->applySelected(); ++i) {
        }
    }
    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        QTimer::singleShot(0, &w, [&w, out, ok] {
            w.grab().save(out);
            QApplication::exit(ok ? 0 : 3);
        });
    }
    return app.exec();
}
