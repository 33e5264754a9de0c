// SPDX-License-Identifier: MIT
// Rewrite debugger latency, offscreen, in the whole window: open a file (the window, the canvas
// and the debugger's candidate list, at most 500), then one Apply (the step,
// the table, the canvas view, the statistics and the candidate list refreshed), Undo, Redo, and a Run
// to the fixpoint, each timed until its window update is done.
//
//   QT_QPA_PLATFORM=offscreen bench_debugger FILE [PRESET]
#include "MainWindow.h"
#include "RewriteDebugger.h"

#include <QApplication>
#include <QListWidget>

#include <chrono>
#include <cstdio>

using namespace fxlens;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_debugger FILE [PRESET]\n");
        return 2;
    }
    views::Services services;
    services.patternDir = FXLENS_PATTERN_SOURCE_DIR;
    views::MainWindow w(services);
    w.resize(1600, 1000);
    w.show();
    auto t0 = Clock::now();
    if (!w.openFile(QString::fromLocal8Bit(argv[1])))
        return 3;
    const double open = since(t0);
    auto *d = w.debugger();
    const size_t nodes = w.graph()->size();
    d->setPreset(QString::fromLocal8Bit(argc > 2 ? argv[2] : "all")); // "all" is listed on open already
    const int listed = d->candidateCount();
    auto time = [&](auto &&f) {
        auto t = Clock::now();
        f();
        QApplication::processEvents();
        return since(t);
    };
    const double apply = time([&] { d->applySelected(); });
    const double undo = time([&] { d->undo(); });
    const double redo = time([&] { d->redo(); });
    const double run = time([&] { d->run(); });
    std::printf("file=%s nodes=%zu open_s=%.3f candidates=%d apply_s=%.3f undo_s=%.3f redo_s=%.3f "
                "run_to_fixpoint_s=%.3f steps=%d nodes_after=%zu\n",
                argv[1], nodes, open, listed, apply, undo, redo, run, d->historySize(), w.graph()->size());
    return 0;
}
