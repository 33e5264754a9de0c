// SPDX-License-Identifier: MIT
// fxlens: the desktop app.
#include "Version.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("fxlens"));
    QApplication::setApplicationName(QStringLiteral("fxlens"));
    QApplication::setApplicationVersion(QStringLiteral(FXLENS_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("See and straighten PyTorch FX graphs."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("graph"), QStringLiteral("FX graph file (.json) to open"));
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Save a PNG of the window after loading and quit."),
                                  QStringLiteral("file.png"));
    parser.addOption(screenshot);
    QCommandLineOption applySteps(QStringLiteral("apply-steps"),
                                  QStringLiteral("After loading, apply the first N rewrite steps (the debugger's top candidate each time)."),
                                  QStringLiteral("N"));
    parser.addOption(applySteps);
    parser.process(app);

    fxlens::views::MainWindow w;
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
