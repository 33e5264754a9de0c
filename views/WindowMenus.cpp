// SPDX-License-Identifier: MIT
#include "WindowMenus.h"

#include "CompareView.h"
#include "FileDialog.h"
#include "GraphCanvas.h"
#include "MainWindow.h"
#include "ProfilePanel.h"
#include "RewriteDebugger.h"
#include "TuneJob.h"

#include <QAction>
#include <QApplication>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

namespace fxlens::views {

WindowMenus::WindowMenus(MainWindow &w) : QObject(&w), m_w(w)
{
    fileMenu();
    viewMenu();
    rewriteMenu();
    profileMenu();
    helpMenu();
    tuneActions();
    updateRecentMenu();
}

void WindowMenus::fileMenu()
{
    m_file = m_w.menuBar()->addMenu(tr("&File"));
    QAction *open = m_file->addAction(tr("&Open…"), &m_w, [this] {
        QString path = askOpenFile(&m_w, tr("Open FX graph"), m_w.openDir(), tr("fxlens graphs (*.json *.json.gz);;All files (*)"));
        if (!path.isEmpty())
            m_w.openFileAsked(path);
    });
    open->setShortcut(QKeySequence::Open);
    m_recent = m_file->addMenu(tr("Open &Recent"));
    QAction *save = m_file->addAction(tr("&Save Graph"), &m_w, [this] {
        if (m_w.graph())
            m_w.save();
    });
    save->setShortcut(QKeySequence::Save);
    save->setToolTip(tr("Write to the file last saved (the first time, ask where)"));
    QAction *saveAs = m_file->addAction(tr("Save Graph &As…"), &m_w, [this] { m_w.saveAs(); });
    // Spelled out: QKeySequence::SaveAs is empty on some X11 desktops.
    saveAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    m_file->addAction(tr("Export Graph as P&ython…"), &m_w, [this] {
        if (!m_w.graph())
            return;
        QString path = askSaveFile(&m_w, tr("Export as Python"), QFileInfo(m_w.currentFile()).completeBaseName() + QStringLiteral(".py"),
                                   tr("Python (*.py)"));
        if (!path.isEmpty())
            m_w.exportPython(path);
    });
    for (const bool svg : {true, false})
        m_file->addAction(svg ? tr("Export View as &SVG…") : tr("Export View as &PNG…"), &m_w, [this, svg] {
            const QString path =
                askSaveFile(&m_w, svg ? tr("Export SVG") : tr("Export PNG"), QString(), svg ? tr("SVG (*.svg)") : tr("PNG (*.png)"));
            if (!path.isEmpty() && !(svg ? m_w.canvas()->exportSvg(path) : m_w.canvas()->exportPng(path)))
                m_w.statusBar()->showMessage(tr("Cannot write %1").arg(path), 5000);
        });
    m_exportReport = m_file->addAction(tr("Export Repor&t…"), &m_w, [this] {
        const QString path = askSaveFile(&m_w, tr("Export tune report"), m_w.proposedReportPath(), tr("HTML (*.html)"));
        if (!path.isEmpty())
            m_w.exportReport(path);
    });
    m_exportReport->setObjectName(QStringLiteral("exportReport"));
    m_file->addSeparator();
    QAction *quit = m_file->addAction(tr("&Quit"), qApp, &QApplication::quit);
    quit->setShortcut(QKeySequence::Quit);
}

void WindowMenus::viewMenu()
{
    GraphCanvas *canvas = m_w.canvas();
    QMenu *view = m_w.menuBar()->addMenu(tr("&View"));
    QAction *fit = view->addAction(tr("&Fit to Window"), canvas, &GraphCanvas::fitToView);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    view->addAction(tr("&Expand All Modules"), canvas, &GraphCanvas::expandAll);
    QAction *stable = view->addAction(tr("&Keep Places Across Steps"));
    stable->setCheckable(true);
    stable->setChecked(true);
    stable->setToolTip(tr("After a step, unchanged nodes stay where they were, new ones are green and removed ones red ghosts"));
    connect(stable, &QAction::toggled, canvas, &GraphCanvas::setStableLayout);
    QAction *fresh = view->addAction(tr("&Re-layout"), canvas, &GraphCanvas::relayoutFresh);
    fresh->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    view->addAction(tr("&Collapse All Modules"), canvas, &GraphCanvas::collapseAll);
    view->addSeparator();
    QAction *dotLayout = view->addAction(tr("Graphviz &dot Layout (small views)"));
    dotLayout->setCheckable(true);
    connect(dotLayout, &QAction::toggled, canvas,
            [canvas](bool on) { canvas->setEngine(on ? GraphCanvas::Engine::Graphviz : GraphCanvas::Engine::Layered); });
    QAction *constants = view->addAction(tr("Show &Parameters and Constants"));
    constants->setCheckable(true);
    constants->setToolTip(tr("Weights, buffers and constants as nodes (hidden by default: a node's tooltip lists those it reads)"));
    connect(constants, &QAction::toggled, &m_w, [this](bool on) { m_w.setShowConstants(on); });
    QAction *legend = view->addAction(tr("Colour &Legend"));
    legend->setCheckable(true);
    legend->setChecked(true);
    connect(legend, &QAction::toggled, canvas, &GraphCanvas::setLegendVisible);
    QAction *minimap = view->addAction(tr("&Minimap"));
    minimap->setCheckable(true);
    minimap->setChecked(true);
    connect(minimap, &QAction::toggled, canvas, &GraphCanvas::setMinimapVisible);
    view->addSeparator();
    QAction *postGrad = view->addAction(tr("Post-&grad Graph (Inductor)"), &m_w, [this] { m_w.openPostGrad(); });
    postGrad->setObjectName(QStringLiteral("postGradGraph"));
    view->setToolTipsVisible(true); // a disabled Post-grad Graph says why
    auto updatePostGrad = [this, postGrad] {
        const QString why = m_w.whyNoPostGrad();
        postGrad->setEnabled(why.isEmpty());
        postGrad->setToolTip(why.isEmpty() ? tr("The compiled profile's post-grad graph beside the canvas, selection linked by provenance")
                                           : why);
    };
    connect(m_w.profilePanel(), &ProfilePanel::kernelGroupsChanged, this, updatePostGrad);
    updatePostGrad();
    view->addSeparator();
    QAction *dark = view->addAction(tr("D&ark Theme"));
    dark->setCheckable(true);
    dark->setChecked(QSettings().value(QStringLiteral("view/dark"), false).toBool());
    connect(dark, &QAction::toggled, &m_w, &MainWindow::setDarkTheme);
    if (dark->isChecked())
        m_w.setDarkTheme(true);
    auto *find = new QAction(tr("Find"), &m_w);
    find->setShortcut(QKeySequence::Find);
    connect(find, &QAction::triggered, &m_w, &MainWindow::focusSearch);
    m_w.addAction(find);
}

void WindowMenus::rewriteMenu()
{
    // The rewrite debugger's actions, with keys (they work wherever the focus is in the window).
    RewriteDebugger *d = m_w.debugger();
    m_rewrite = m_w.menuBar()->addMenu(tr("&Rewrite"));
    auto add = [&](const QString &text, const QKeySequence &key, auto fn) {
        QAction *a = m_rewrite->addAction(text, &m_w, fn);
        a->setShortcut(key);
        a->setShortcutContext(Qt::WindowShortcut);
    };
    add(tr("&Apply Candidate"), QKeySequence(Qt::CTRL | Qt::Key_Return), [d] { d->applySelected(); });
    add(tr("&Skip Candidate"), QKeySequence(Qt::CTRL | Qt::Key_K), [d] { d->skipSelected(); });
    add(tr("&Undo Step"), QKeySequence::Undo, [d] { d->undo(); });
    add(tr("&Redo Step"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), [d] { d->redo(); });
    add(tr("&Go to Next Candidate"), QKeySequence(Qt::CTRL | Qt::Key_G), [d] { d->showCandidate(); });
    add(tr("Run to &Breakpoint or Fixpoint"), QKeySequence(Qt::Key_F5), [d] { d->run(); });
    m_rewrite->addSeparator();
    m_tune = m_rewrite->addAction(tr("&Tune…"), &m_w, [this] { m_w.tune(); });
    m_tune->setObjectName(QStringLiteral("tune"));
    m_rewrite->addSeparator();
    add(tr("&Compare Versions Side by Side…"), QKeySequence(Qt::CTRL | Qt::Key_D), [this] {
        CompareChooser chooser(*m_w.document()->history(), &m_w);
        if (chooser.exec() == QDialog::Accepted)
            openCompare(chooser.a(), chooser.b());
    });
    add(tr("Compare with &Previous Version"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D),
        [this, d] { openCompare(std::max(0, d->version() - 1), d->version()); });
    // A history row's "Compare with Version on Screen".
    connect(d, &RewriteDebugger::compareRequested, this,
            [this, d](int version, int branch) { openCompare(VersionChoice(version, branch), d->version()); });
}

void WindowMenus::openCompare(VersionChoice a, VersionChoice b)
{
    QString error;
    if (CompareView *view = compareVersions(*m_w.document(), a, b, &m_w, &error))
        view->show();
    else
        m_w.statusBar()->showMessage(error, 8000);
}

void WindowMenus::profileMenu()
{
    ProfilePanel *panel = m_w.profilePanel();
    m_profile = m_w.menuBar()->addMenu(tr("&Profile"));
    auto report = [this, panel](bool ok) {
        m_w.statusBar()->showMessage(panel->status(), ok ? 5000 : 0);
        if (ok)
            m_w.showProfileDock();
    };
    QAction *freeze = new QAction(tr("&Freeze Weights When Profiling"), this);
    freeze->setCheckable(true);
    freeze->setToolTip(tr("Fold weight-only nodes once before timing (inference with frozen weights)"));
    QAction *one = m_profile->addAction(tr("Profile &This Version"), &m_w, [panel, freeze, report] {
        report(panel->profileVersions(QStringLiteral("current"), freeze->isChecked()));
    });
    one->setShortcut(QKeySequence(Qt::Key_F6));
    m_profile->addAction(tr("Profile &Versions…"), &m_w, [this, panel, freeze, report] {
        const int steps = m_w.debugger()->historySize();
        bool ok = false;
        const QString list =
            QInputDialog::getText(&m_w, tr("Profile versions"),
                                  tr("Versions of the history (0 to %1): numbers, ranges (3-9), last, current, all, "
                                     "spread:N (N evenly spaced)")
                                      .arg(steps),
                                  QLineEdit::Normal, steps <= 9 ? QStringLiteral("all") : QStringLiteral("spread:10"), &ok);
        if (ok)
            report(panel->profileVersions(list, freeze->isChecked()));
    });
    m_profile->addAction(freeze);
    m_profile->addSeparator();
    m_profile->addAction(tr("&Open Profile…"), &m_w, [this] {
        QString path = askOpenFile(&m_w, tr("Open profile"), m_w.openDir(), tr("fxlens profiles (*.json *.json.gz);;All files (*)"));
        if (!path.isEmpty())
            m_w.openProfile(path);
    });
    m_profile->addAction(tr("Open Profile to &Compare…"), &m_w, [this, panel, report] {
        QString path = askOpenFile(&m_w, tr("Open the profile to compare with (version B)"), m_w.openDir(),
                                   tr("fxlens profiles (*.json *.json.gz);;All files (*)"));
        if (!path.isEmpty())
            report(panel->openComparison(path));
    });
    m_profile->addAction(tr("Export Chrome &Trace…"), &m_w, [this, panel, report] {
        const QString path = askSaveFile(&m_w, tr("Export Chrome trace"), QString(), tr("Chrome trace (*.json)"));
        if (!path.isEmpty())
            report(panel->exportTrace(path));
    });
    m_profile->addAction(tr("&Close Profiles"), &m_w, [panel] { panel->closeProfile(); });
    connect(panel, &ProfilePanel::jobFinished, this,
            [this](bool ok, const QString &message) { m_w.statusBar()->showMessage(message, ok ? 10000 : 0); });
}

void WindowMenus::helpMenu()
{
    QMenu *help = m_w.menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard Shortcuts"), &m_w, [this] { QMessageBox::information(&m_w, tr("Keyboard shortcuts"), shortcutsText()); });
    help->addAction(tr("&Legend"), &m_w, [this] {
        QMessageBox::information(&m_w, tr("Legend"),
                                 tr("<p><b>Canvas</b>: a box per node or collapsed module (one per call of a module run "
                                    "more than once); click to select, double-click a module to expand it; wheel zooms, drag "
                                    "pans, Ctrl+0 fits. Edges run from a node's bottom to its readers' tops, around other "
                                    "nodes, with arrowheads; once text is legible they carry the value's shape and dtype. The "
                                    "selected node's inputs are blue, its outputs orange. Parameters and constants are hidden "
                                    "(View ▸ Show Parameters and Constants); hover a node or an edge for details.</p>"
                                    "<p><b>Colours</b> by op category: inputs green, output orange, matmul/conv blue, "
                                    "elementwise pale blue, reductions pink, view/reshape teal, split/cat/stack yellow, "
                                    "normalization violet, modules cream, parameters grey (the legend in the canvas' corner "
                                    "lists those in view).</p>"
                                    "<p><b>Outlines</b>: the anchor of a match or of the next rewrite candidate is drawn in the "
                                    "accent colour, the other matched nodes outlined.</p>"
                                    "<p><b>Profile tint</b>: with a profile of the version on screen, each node is tinted by "
                                    "its device time, from pale (0) to red (the hottest node; the scale is under the profile "
                                    "table). A profile of another version or graph tints nothing.</p>"
                                    "<p><b>Timeline</b>: iterations, FX-node ranges and launches (host), then one track per "
                                    "CUDA stream; a pixel column's shading rises with the share of its time the track is "
                                    "busy, so ink is proportional to time at any zoom. Amber on the launch track: the GPU "
                                    "idle, waiting for the host's next launch. With B chosen, B's tracks are under A's. "
                                    "Drag to measure a range; click a kernel to select its node.</p>"
                                    "<p><b>History</b>: bold is the version shown, grey the steps ahead of it (redo); "
                                    "✓ marks a step whose outputs were verified; right-click a row to compare it with the "
                                    "version on screen. After Rewrite ▸ Tune, the original and the tuned version say their "
                                    "measured time, each step the measured Δ of its group (time with it minus without it), "
                                    "and the matches the search left out are listed under their version as "
                                    "\"left out for cost (+x ms)\".</p>"
                                    "<p><b>Compare</b>: removed red (A), added green (B), changed amber (both); N / Shift+N "
                                    "go to the next / previous change, Esc closes.</p>"));
    });
    help->addAction(tr("&About fxlens"), &m_w, [this] {
        QMessageBox::about(
            &m_w, tr("About fxlens"),
            tr("<p><b>fxlens %1</b></p><p>See and straighten PyTorch FX graphs.</p>").arg(QCoreApplication::applicationVersion()));
    });
}

QString WindowMenus::shortcutsText() const
{
    QString text = QStringLiteral("<table>");
    for (QAction *menu : m_w.menuBar()->actions()) {
        if (!menu->menu())
            continue;
        for (QAction *a : menu->menu()->actions())
            if (!a->shortcut().isEmpty())
                text += QStringLiteral("<tr><td><b>%1</b>&nbsp;&nbsp;</td><td>%2</td></tr>")
                            .arg(a->shortcut().toString(QKeySequence::NativeText), a->text().remove(QLatin1Char('&')));
    }
    return text +
        QStringLiteral("<tr><td><b>%1</b>&nbsp;&nbsp;</td><td>%2</td></tr></table>")
            .arg(QKeySequence(QKeySequence::Find).toString(QKeySequence::NativeText), tr("Search nodes"));
}

QStringList WindowMenus::recentFiles() { return QSettings().value(QStringLiteral("recentFiles")).toStringList(); }

void WindowMenus::rememberRecent(const QString &path)
{
    QStringList recent = recentFiles();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    constexpr int kRecentFiles = 10;
    while (recent.size() > kRecentFiles)
        recent.removeLast();
    QSettings().setValue(QStringLiteral("recentFiles"), recent);
    updateRecentMenu();
}

void WindowMenus::updateRecentMenu()
{
    m_recent->clear();
    for (const QString &f : recentFiles())
        m_recent->addAction(f, &m_w, [this, f] { m_w.openFileAsked(f); });
    m_recent->setEnabled(!m_recent->isEmpty());
}

void WindowMenus::setRunning(bool running)
{
    m_file->setEnabled(!running);
    for (QAction *a : m_rewrite->actions())
        a->setEnabled(!running);
    if (!running)
        updateTuneActions();
}

void WindowMenus::tuneActions()
{
    const TuneJob &job = m_w.document()->tuning();
    const QString tip = job.available() ? tr("Choose the patterns, their order and which matches to apply by measured time of the "
                                             "whole graph; the tuned version becomes the history")
                                        : TuneJob::unavailableReason();
    m_tune->setToolTip(tip);
    m_tune->setStatusTip(tip);
    const QString reportTip = tr("The last tune as one HTML page: versions, steps with their measured Δ, the search, before and after");
    m_exportReport->setToolTip(reportTip);
    m_exportReport->setStatusTip(reportTip);
    connect(&job, &TuneJob::resultChanged, this, &WindowMenus::updateTuneActions);
    updateTuneActions();
}

void WindowMenus::updateTuneActions()
{
    const TuneJob &job = m_w.document()->tuning();
    m_tune->setEnabled(job.available() && !job.isRunning());
    m_exportReport->setEnabled(job.result() != nullptr);
}

} // namespace fxlens::views
