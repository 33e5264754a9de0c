// SPDX-License-Identifier: MIT
// Main window of the fxlens desktop app.
#include "MainWindow.h"
#include "Autosave.h"

#include "NodeTableModel.h"
#include "GraphCanvas.h"
#include "RewriteDebugger.h"
#include "PatternEditor.h"
#include "ProfilePanel.h"
#include "BuiltinPatterns.h"
#include "rewrite/Session.h"
#include "io/GraphJson.h"
#include "io/PythonWriter.h"
#include "ir/GraphInfo.h"
#include "ir/Printer.h"

#include <QAction>
#include <QCloseEvent>
#include <QLocale>
#include <QMessageBox>
#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFile>
#include <QSaveFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <map>
#include <unordered_map>
#include <functional>
#include <QStyle>
#include <QUrl>
#include <QPushButton>
#include <QProgressBar>
#include <QListWidget>
#include <QSignalBlocker>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace fxlens::views {

namespace {
/// Matches a row if the name, target or module column contains the pattern.
class NodeFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        const auto re = filterRegularExpression();
        if (re.pattern().isEmpty())
            return true;
        for (int col : {NodeTableModel::NameColumn, NodeTableModel::TargetColumn, NodeTableModel::ModuleColumn})
            if (re.match(sourceModel()->index(row, col, parent).data().toString()).hasMatch())
                return true;
        return false;
    }
};
} // namespace

MainWindow::MainWindow(Services services, QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("fxlens"));
    setAcceptDrops(true);
    m_model = new NodeTableModel(this);
    m_proxy = new NodeFilter(this);
    m_proxy->setSourceModel(m_model);

    auto *left = new QWidget(this);
    auto *layout = new QVBoxLayout(left);
    layout->setContentsMargins(0, 0, 0, 0);
    m_search = new QLineEdit(left);
    m_search->setPlaceholderText(tr("Search name, target or module (/regex/)"));
    m_search->setClearButtonEnabled(true);
    m_search->setObjectName(QStringLiteral("search"));
    layout->addWidget(m_search);
    m_table = new QTableView(left);
    m_table->setModel(m_proxy);
    m_table->setObjectName(QStringLiteral("nodeTable"));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table);

    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setObjectName(QStringLiteral("graphText"));
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFont(QStringLiteral("monospace")));

    m_canvas = new GraphCanvas(this);
    m_canvas->setObjectName(QStringLiteral("graphCanvas"));
    m_views = new QTabWidget(this);
    m_views->addTab(m_canvas, tr("Graph"));
    m_views->addTab(m_text, tr("Text"));
    connect(m_views, &QTabWidget::currentChanged, this, [this] {
        if (m_views->currentWidget() == m_text)
            fillText();
    });

    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(left);
    split->addWidget(m_views);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    setCentralWidget(split);

    auto *dock = new QDockWidget(tr("Inspector"), this);
    dock->setObjectName(QStringLiteral("inspectorDock"));
    m_inspector = new QTextBrowser(dock);
    m_inspector->setOpenLinks(false);
    connect(m_inspector, &QTextBrowser::anchorClicked, this, [this](const QUrl &url) {
        if (url.scheme() == QLatin1String("node"))
            selectNode(url.path());
    });
    dock->setWidget(m_inspector);
    addDockWidget(Qt::RightDockWidgetArea, dock);

    // Patterns: every pattern with its candidate matches in this graph; picking one lists its
    // matches, picking a match outlines it on the canvas.
    auto *pdock = new QDockWidget(tr("Patterns"), this);
    pdock->setObjectName(QStringLiteral("patternsDock"));
    auto *pw = new QWidget(pdock);
    auto *pl = new QVBoxLayout(pw);
    pl->setContentsMargins(2, 2, 2, 2);
    m_patternList = new QListWidget(pw);
    m_patternList->setObjectName(QStringLiteral("patternList"));
    m_matchList = new QListWidget(pw);
    m_matchList->setObjectName(QStringLiteral("matchList"));
    pl->addWidget(m_patternList, 1);
    pl->addWidget(m_matchList, 1);
    pdock->setWidget(pw);
    addDockWidget(Qt::RightDockWidgetArea, pdock);
    connect(m_patternList, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0)
            showMatches(m_patternList->item(row)->data(Qt::UserRole).toString());
    });
    connect(m_matchList, &QListWidget::currentRowChanged, this, &MainWindow::showMatch);
    std::string err = patterns::registerBuiltinPatterns(m_registry, services.patternDir);
    if (!err.empty())
        statusBar()->showMessage(QString::fromStdString(err), 10000);

    // The rewrite debugger: steps of the greedy engine on this graph.
    m_debugger = new RewriteDebugger(m_registry, std::move(services), this);
    QDockWidget *rdock = addPanel(tr("Rewrite"), QStringLiteral("rewriteDock"), m_debugger, pdock);
    connect(m_debugger, &RewriteDebugger::aboutToEdit, this, &MainWindow::waitForWorkers);
    connect(m_debugger, &RewriteDebugger::graphEdited, this, &MainWindow::graphEdited);
    // Unsaved work goes to an autosave a moment after each change (Autosave.h).
    m_autosaveTimer = new QTimer(this);
    m_autosaveTimer->setSingleShot(true);
    m_autosaveTimer->setInterval(800);
    connect(m_autosaveTimer, &QTimer::timeout, this, &MainWindow::autosaveNow);
    m_recoveryPrompt = [this](const AutosaveState &s) {
        return QMessageBox::question(this, tr("Recover unsaved work"),
                                     tr("%1 has unsaved work from %2 (%n rewrite step(s)) that was not saved when fxlens "
                                        "last closed. Recover it?",
                                        nullptr, int(s.steps.size()))
                                         .arg(QFileInfo(s.file).fileName(), QLocale().toString(s.savedAt.toLocalTime(), QLocale::ShortFormat)),
                                     QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes) == QMessageBox::Yes;
    };
    connect(m_debugger, &RewriteDebugger::highlightRequested, this, &MainWindow::showHighlight);
    // While a run is between slices, nothing else may touch the graph or the patterns.
    connect(m_debugger, &RewriteDebugger::busyChanged, this, [this](bool busy) {
        menuBar()->setEnabled(!busy);
        centralWidget()->setEnabled(!busy);
        for (auto *d : findChildren<QDockWidget *>())
            if (d->widget() != m_debugger)
                d->setEnabled(!busy);
        setAcceptDrops(!busy);
    });

    // The pattern editor: a pattern file compiled as it is typed, its matches in this graph, and
    // "why not here" for the node selected on the canvas.
    m_editor = new PatternEditor(m_registry, this);
    QDockWidget *edock = addPanel(tr("Pattern Editor"), QStringLiteral("patternEditorDock"), m_editor, rdock);
    connect(m_editor, &PatternEditor::highlightRequested, this, &MainWindow::showHighlight);
    connect(m_editor, &PatternEditor::aboutToChangePatterns, this, [this] {
        // Workers and the debugger's session hold pattern pointers: let them go first.
        for (const auto &t : m_workers)
            if (t)
                t->wait();
    });
    // A saved profile over the graph.
    m_profile = new ProfilePanel(this);
    m_profileDock = addPanel(tr("Profile"), QStringLiteral("profileDock"), m_profile, edock);
    rdock->raise();
    connect(m_profile, &ProfilePanel::heatChanged, m_canvas, &GraphCanvas::setHeat);
    connect(m_profile, &ProfilePanel::nodeRequested, this, [this](const QString &name) { selectNode(name); });
    connect(m_editor, &PatternEditor::patternsChanged, this, [this] {
        m_debugger->reloadPatterns();
        refreshPatterns();
    });

    // Graphviz layouts run off the GUI thread: a busy bar and a cancel button while they do.
    m_layoutBusy = new QProgressBar(this);
    m_layoutBusy->setRange(0, 0);
    m_layoutBusy->setMaximumWidth(120);
    m_layoutBusy->hide();
    m_layoutCancel = new QPushButton(tr("Cancel layout"), this);
    m_layoutCancel->hide();
    statusBar()->addWidget(m_layoutBusy);
    statusBar()->addWidget(m_layoutCancel);
    connect(m_layoutCancel, &QPushButton::clicked, m_canvas, &GraphCanvas::cancelLayout);
    connect(m_canvas, &GraphCanvas::layoutStarted, this, [this] {
        m_layoutBusy->show();
        m_layoutCancel->show();
        statusBar()->showMessage(tr("Graphviz layout running…"));
    });
    connect(m_canvas, &GraphCanvas::layoutFinished, this, [this](bool applied, const QString &error) {
        m_layoutBusy->hide();
        m_layoutCancel->hide();
        statusBar()->showMessage(applied ? tr("Graphviz layout done") : tr("Graphviz layout: %1").arg(error), 4000);
    });

    m_stats = new QLabel(this);
    m_stats->setMinimumWidth(320);
    m_stats->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    statusBar()->addPermanentWidget(m_stats);

    connect(m_search, &QLineEdit::textChanged, this, &MainWindow::setSearch);
    // Enter jumps to the first match: selected in the table, shown on the canvas and in the inspector.
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        if (m_proxy->rowCount() > 0)
            selectNode(m_proxy->index(0, 0).data().toString());
    });
    connect(m_canvas, &GraphCanvas::nodeSelected, m_editor, [this](const QString &name) { m_editor->explainAt(name); });
    // Canvas and table select together.
    connect(m_canvas, &GraphCanvas::nodeSelected, this, [this](const QString &name) {
        int row = m_model->rowOf(name);
        if (row < 0)
            return;
        QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
        if (idx.isValid()) {
            QSignalBlocker block(m_table->selectionModel());
            m_table->setCurrentIndex(idx);
            m_table->scrollTo(idx);
        }
        showNode(m_model->nodeAt(row));
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &cur) {
                const ir::Node *n = m_model->nodeAt(m_proxy->mapToSource(cur).row());
                showNode(n);
                if (n) {
                    m_canvas->selectNode(QString::fromStdString(n->name()));
                    m_editor->explainAt(QString::fromStdString(n->name()));
                }
            });
    createActions();

    QSettings settings;
    resize(1200, 800); // first start; a saved geometry wins
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow()
{
    // An orderly teardown (the app quits through closeEvent, which asked about unsaved work; a test or
    // an embedding program destroys the window) leaves no autosave behind; a crash or a kill does.
    if (m_autosaveTimer)
        m_autosaveTimer->stop();
    if (m_modified && !m_file.isEmpty())
        Autosave::remove(m_file);
    // Workers read this window's patterns: let them finish first.
    for (const auto &t : m_workers)
        if (t)
            t->wait();
    // The panels are children, destroyed after this window's members: the debugger's session
    // unregisters from the graph, so it must go while the graph is still there.
    detachGraph();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open…"), this, [this] {
        QString path = QFileDialog::getOpenFileName(this, tr("Open FX graph"), QString(),
                                                    tr("fxlens graphs (*.json *.json.gz);;All files (*)"));
        if (!path.isEmpty())
            openFileAsked(path);
    });
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    QAction *save = file->addAction(tr("&Save Graph As…"), this, [this] {
        if (!m_graph)
            return;
        QString path = QFileDialog::getSaveFileName(this, tr("Save Graph"), m_file, tr("fxlens graphs (*.json *.json.gz)"));
        if (!path.isEmpty())
            saveFile(path);
    });
    save->setShortcut(QKeySequence::SaveAs);
    file->addAction(tr("Export Graph as P&ython…"), this, [this] {
        if (!m_graph)
            return;
        QString path = QFileDialog::getSaveFileName(this, tr("Export as Python"), QFileInfo(m_file).completeBaseName() + QStringLiteral(".py"),
                                                    tr("Python (*.py)"));
        if (!path.isEmpty())
            exportPython(path);
    });
    file->addAction(tr("Open &Profile…"), this, [this] {
        QString path = QFileDialog::getOpenFileName(this, tr("Open profile"), QString(), tr("fxlens profiles (*.json);;All files (*)"));
        if (!path.isEmpty())
            openProfile(path);
    });
    file->addAction(tr("&Close Profile"), this, [this] { m_profile->closeProfile(); });
    file->addAction(tr("Export View as &SVG…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export SVG"), QString(), tr("SVG (*.svg)"));
        if (!path.isEmpty() && !m_canvas->exportSvg(path))
            statusBar()->showMessage(tr("Cannot write %1").arg(path), 5000);
    });
    file->addAction(tr("Export View as &PNG…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export PNG"), QString(), tr("PNG (*.png)"));
        if (!path.isEmpty() && !m_canvas->exportPng(path))
            statusBar()->showMessage(tr("Cannot write %1").arg(path), 5000);
    });
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
    quit->setShortcut(QKeySequence::Quit);
    QMenu *view = menuBar()->addMenu(tr("&View"));
    QAction *fit = view->addAction(tr("&Fit to Window"), m_canvas, &GraphCanvas::fitToView);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    view->addAction(tr("&Expand All Modules"), m_canvas, &GraphCanvas::expandAll);
    view->addAction(tr("&Collapse All Modules"), m_canvas, &GraphCanvas::collapseAll);
    view->addSeparator();
    QAction *dotLayout = view->addAction(tr("Graphviz &dot Layout (small views)"));
    dotLayout->setCheckable(true);
    connect(dotLayout, &QAction::toggled, this, [this](bool on) {
        m_canvas->setEngine(on ? GraphCanvas::Engine::Graphviz : GraphCanvas::Engine::Layered);
    });
    QAction *minimap = view->addAction(tr("&Minimap"));
    minimap->setCheckable(true);
    minimap->setChecked(true);
    connect(minimap, &QAction::toggled, m_canvas, &GraphCanvas::setMinimapVisible);
    QAction *dark = view->addAction(tr("D&ark Theme"));
    dark->setCheckable(true);
    dark->setChecked(QSettings().value(QStringLiteral("view/dark"), false).toBool());
    connect(dark, &QAction::toggled, this, &MainWindow::setDarkTheme);
    if (dark->isChecked())
        setDarkTheme(true);
    QAction *find = new QAction(tr("Find"), this);
    find->setShortcut(QKeySequence::Find);
    connect(find, &QAction::triggered, this, [this] { m_search->setFocus(); m_search->selectAll(); });
    addAction(find);

    // The rewrite debugger's actions, with keys (they work wherever the focus is in the window).
    QMenu *rewrite = menuBar()->addMenu(tr("&Rewrite"));
    auto rewriteAction = [&](const QString &text, const QKeySequence &key, auto fn) {
        QAction *a = rewrite->addAction(text, this, fn);
        a->setShortcut(key);
        a->setShortcutContext(Qt::WindowShortcut);
        return a;
    };
    rewriteAction(tr("&Apply Candidate"), QKeySequence(Qt::CTRL | Qt::Key_Return), [this] { m_debugger->applySelected(); });
    rewriteAction(tr("&Skip Candidate"), QKeySequence(Qt::CTRL | Qt::Key_K), [this] { m_debugger->skipSelected(); });
    rewriteAction(tr("&Undo Step"), QKeySequence::Undo, [this] { m_debugger->undo(); });
    rewriteAction(tr("&Redo Step"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), [this] { m_debugger->redo(); });
    rewriteAction(tr("Run to &Breakpoint or Fixpoint"), QKeySequence(Qt::Key_F5), [this] { m_debugger->run(); });

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard Shortcuts"), this, [this] {
        QMessageBox::information(this, tr("Keyboard shortcuts"), shortcutsText());
    });
    help->addAction(tr("&Legend"), this, [this] {
        QMessageBox::information(this, tr("Legend"),
                                 tr("<p><b>Canvas</b>: a box per node or collapsed module; click to select, double-click a "
                                    "module to expand it; wheel zooms, drag pans, Ctrl+0 fits.</p>"
                                    "<p><b>Outlines</b>: the anchor of a match or of the next rewrite candidate is drawn in the "
                                    "accent colour, the other matched nodes outlined.</p>"
                                    "<p><b>Profile tint</b>: with a profile open, each node is tinted by its share of the "
                                    "iteration's time.</p>"
                                    "<p><b>History</b>: bold is the version shown, grey the steps ahead of it (redo); "
                                    "✓ marks a step whose outputs were verified.</p>"));
    });
    help->addAction(tr("&About fxlens"), this, [this] {
        QMessageBox::about(this, tr("About fxlens"),
                           tr("<p><b>fxlens %1</b></p><p>See and straighten PyTorch FX graphs.</p>")
                               .arg(QCoreApplication::applicationVersion()));
    });
    updateRecentMenu();
}

QString MainWindow::shortcutsText() const
{
    QString text = QStringLiteral("<table>");
    for (QAction *menu : menuBar()->actions()) {
        if (!menu->menu())
            continue;
        for (QAction *a : menu->menu()->actions())
            if (!a->shortcut().isEmpty())
                text += QStringLiteral("<tr><td><b>%1</b>&nbsp;&nbsp;</td><td>%2</td></tr>")
                            .arg(a->shortcut().toString(QKeySequence::NativeText), a->text().remove(QLatin1Char('&')));
    }
    return text + QStringLiteral("<tr><td><b>%1</b>&nbsp;&nbsp;</td><td>%2</td></tr></table>")
                      .arg(QKeySequence(QKeySequence::Find).toString(QKeySequence::NativeText), tr("Search nodes"));
}

QStringList MainWindow::recentFiles() const
{
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    for (const QString &f : recentFiles())
        m_recentMenu->addAction(f, this, [this, f] { openFileAsked(f); });
    m_recentMenu->setEnabled(!m_recentMenu->isEmpty());
}

bool MainWindow::settleUnsaved(const QString &before)
{
    if (!m_modified)
        return true;
    const int answer = m_unsavedPrompt ? m_unsavedPrompt(before)
                                       : QMessageBox::question(this, tr("Unsaved rewrites"),
                                                               tr("The graph has rewrite steps that are not saved. Save it before %1?").arg(before),
                                                               QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Save) {
        QString path = QFileDialog::getSaveFileName(this, tr("Save Graph"), m_file, tr("fxlens graphs (*.json *.json.gz)"));
        return !path.isEmpty() && saveFile(path);
    }
    Autosave::remove(m_file); // discarded on purpose
    m_modified = false;
    return true;
}

bool MainWindow::openFileAsked(const QString &path)
{
    if (!settleUnsaved(tr("opening %1").arg(QFileInfo(path).fileName())))
        return false;
    if (openFile(path))
        return true;
    // A file the user picked that does not load: said in a dialog (non-modal), not only in the status bar.
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Cannot open %1").arg(QFileInfo(path).fileName()), statusBar()->currentMessage(),
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("openError"));
    box->open();
    return false;
}

bool MainWindow::openFile(const QString &path)
{
    waitForWorkers();
    auto r = io::readGraphFile(path.toStdString());
    if (!r) {
        QString msg = QString::fromStdString(r.error().toString());
        statusBar()->showMessage(msg);
        Q_EMIT loadFailed(msg);
        return false;
    }
    detachGraph(); // drop everything that points into the old graph before it goes
    m_graph = std::move(r.value());
    m_file = path;
    m_model->setGraph(m_graph.get());
    // The text form (tens of MB for a 100k-node graph) is printed when its tab is first shown, and
    // the pattern matches are counted in a worker thread, so a big graph is on screen first.
    m_text->clear();
    m_textStale = true;
    if (m_views->currentWidget() == m_text)
        fillText();
    m_canvas->setGraph(m_graph.get());
    refreshPatterns();
    m_inspector->clear();
    m_modified = false;
    setSearch(QString()); // a filter of the previous file would hide this one's nodes
    m_profile->closeProfile(); // a profile belongs to the graph it was recorded on
    m_debugger->setGraph(m_graph.get());
    m_editor->setGraph(m_graph.get());
    m_profile->setGraph(m_graph.get());
    updateStats();
    updateTitle();
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > 10)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    updateRecentMenu();
    statusBar()->showMessage(tr("Loaded %1").arg(path), 5000);
    if (offerRecovery())
        statusBar()->showMessage(tr("Recovered the unsaved work on %1 (%2 step(s))").arg(path).arg(m_debugger->historySize()), 8000);
    Q_EMIT graphLoaded(path);
    return true;
}

bool MainWindow::offerRecovery()
{
    auto saved = Autosave::read(m_file);
    if (!saved)
        return false;
    if (!m_recoveryPrompt || !m_recoveryPrompt(*saved)) {
        Autosave::remove(m_file);
        return false;
    }
    if (!saved->preset.isEmpty())
        m_debugger->setPreset(saved->preset);
    // The steps again from the file (history and all); if the file changed so that they no longer
    // apply, the saved version's graph itself (without its history).
    if (m_debugger->replay(saved->steps)) {
        m_debugger->checkout(saved->version);
    } else if (!saved->graph.empty()) {
        auto g = io::parseGraphJson(saved->graph, Autosave::pathFor(m_file).toStdString());
        if (g) {
            detachGraph();
            m_graph = std::move(g.value());
            m_model->setGraph(m_graph.get());
            m_canvas->setGraph(m_graph.get());
            m_debugger->setGraph(m_graph.get());
            m_editor->setGraph(m_graph.get());
            m_profile->setGraph(m_graph.get());
            refreshPatterns();
        }
    }
    for (const auto &b : saved->breakpoints)
        m_debugger->addBreakpoint(b.first, b.second);
    m_modified = true;
    updateStats();
    updateTitle();
    return true;
}

void MainWindow::autosaveNow()
{
    if (m_file.isEmpty())
        return;
    if (!m_graph || !m_modified) {
        Autosave::remove(m_file);
        return;
    }
    AutosaveState s;
    s.file = m_file;
    s.preset = m_debugger->preset();
    s.steps = m_debugger->stepRecord();
    s.version = m_debugger->version();
    s.breakpoints = m_debugger->breakpointList();
    // The version's graph is the fallback for a file changed since; it is serialized here, on the GUI
    // thread, so a very large graph relies on the steps alone (replayed from the file).
    if (m_graph->size() <= 20000)
        s.graph = io::writeGraphJson(*m_graph);
    QString error;
    if (!Autosave::write(s, &error))
        statusBar()->showMessage(tr("Cannot autosave: %1").arg(error), 8000);
}

QDockWidget *MainWindow::addPanel(const QString &title, const QString &name, QWidget *content, QDockWidget *tabWith)
{
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(name);
    dock->setWidget(content);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    if (tabWith)
        tabifyDockWidget(tabWith, dock);
    return dock;
}

void MainWindow::detachGraph()
{
    m_model->setGraph(nullptr);
    m_debugger->setGraph(nullptr);
    m_editor->setGraph(nullptr);
    m_profile->setGraph(nullptr);
    m_canvas->setGraph(nullptr);
}

void MainWindow::updateStats()
{
    auto info = ir::computeGraphInfo(*m_graph);
    m_stats->setText(tr("%1 · %2 · depth %3 · %4 IR")
                         .arg(info.nodes == 1 ? tr("1 node") : tr("%1 nodes").arg(info.nodes))
                         .arg(info.edges == 1 ? tr("1 edge") : tr("%1 edges").arg(info.edges))
                         .arg(info.depth)
                         .arg(QString::fromStdString(m_graph->irLevel)));
}

void MainWindow::updateTitle()
{
    setWindowTitle(QStringLiteral("%1%2 — fxlens").arg(QFileInfo(m_file).fileName(), m_modified ? QStringLiteral(" *") : QString()));
}

void MainWindow::waitForWorkers()
{
    // The workers count on their own copies: only the copying reads the window's graph.
    for (const auto &c : m_copies) {
        std::unique_lock<std::mutex> lock(c->mutex);
        c->cv.wait(lock, [&] { return c->done; });
    }
    m_copies.clear();
}

void MainWindow::graphEdited()
{
    if (!m_graph)
        return;
    m_modified = true;
    if (m_autosaveTimer)
        m_autosaveTimer->start();
    m_model->setGraph(m_graph.get());
    m_canvas->graphEdited();
    m_textStale = true;
    if (m_views->currentWidget() == m_text)
        fillText();
    m_inspector->clear();
    m_editor->setGraph(m_graph.get()); // its matches named nodes of the previous version
    m_profile->setGraph(m_graph.get());
    updateStats();
    updateTitle();
    refreshPatterns();
}

void MainWindow::showHighlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor)
{
    if (anchor)
        m_canvas->selectNode(QString::fromStdString(anchor->name()));
    m_canvas->setHighlight(nodes, anchor);
    if (anchor)
        showNode(anchor);
}

bool MainWindow::saveFile(const QString &path)
{
    if (!m_graph)
        return false;
    auto r = io::writeGraphFile(*m_graph, path.toStdString());
    if (!r) {
        statusBar()->showMessage(QString::fromStdString(r.error().toString()));
        return false;
    }
    Autosave::remove(m_file); // saved: nothing left to recover
    m_file = path;
    m_modified = false;
    Autosave::remove(m_file);
    updateTitle();
    statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
    return true;
}

bool MainWindow::exportPython(const QString &path)
{
    if (!m_graph)
        return false;
    auto py = io::writePython(*m_graph);
    if (!py.error.empty()) {
        statusBar()->showMessage(tr("Cannot export as Python: %1").arg(QString::fromStdString(py.error)), 8000);
        return false;
    }
    QSaveFile f(path); // atomic: the previous file stays until the new one is complete
    if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(py.code)) < 0 || !f.commit()) {
        statusBar()->showMessage(tr("Cannot write %1: %2").arg(path, f.errorString()));
        return false;
    }
    statusBar()->showMessage(py.unsupported.empty() ? tr("Wrote %1").arg(path)
                                                    : tr("Wrote %1; %2 call_module node(s) of unknown types raise NotImplementedError")
                                                          .arg(path)
                                                          .arg(py.unsupported.size()),
                             8000);
    return true;
}

void MainWindow::closeEvent(QCloseEvent *e)
{
    if (m_debugger->isRunning()) { // stop the run first; close again when it has
        m_debugger->requestStop();
        e->ignore();
        return;
    }
    if (!settleUnsaved(tr("closing"))) {
        e->ignore();
        return;
    }
    if (m_autosaveTimer)
        m_autosaveTimer->stop();
    if (!m_file.isEmpty())
        Autosave::remove(m_file); // saved or discarded on purpose
    QMainWindow::closeEvent(e);
}

void MainWindow::setSearch(const QString &text)
{
    if (m_search->text() != text)
        m_search->setText(text);
    QRegularExpression re;
    if (text.size() > 2 && text.startsWith(QLatin1Char('/')) && text.endsWith(QLatin1Char('/')))
        re = QRegularExpression(text.mid(1, text.size() - 2));
    else
        re = QRegularExpression(QRegularExpression::escape(text), QRegularExpression::CaseInsensitiveOption);
    m_proxy->setFilterRegularExpression(re);
    if (text.isEmpty())
        statusBar()->clearMessage();
    else
        statusBar()->showMessage(m_proxy->rowCount() == 1 ? tr("1 match") : tr("%1 matches").arg(m_proxy->rowCount()), 4000);
}

int MainWindow::visibleNodeCount() const { return m_proxy->rowCount(); }

bool MainWindow::selectNode(const QString &name)
{
    int row = m_model->rowOf(name);
    if (row < 0)
        return false;
    QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
    if (!idx.isValid()) { // filtered out: clear the search so the node can be shown
        setSearch(QString());
        idx = m_proxy->mapFromSource(m_model->index(row, 0));
    }
    m_table->setCurrentIndex(idx);
    m_table->scrollTo(idx);
    showNode(m_model->nodeAt(row));
    m_canvas->selectNode(name);
    return true;
}

QString MainWindow::inspectorText() const { return m_inspector->toPlainText(); }

void MainWindow::showNode(const ir::Node *n)
{
    if (!n) {
        m_inspector->clear();
        return;
    }
    auto esc = [](const std::string &s) { return QString::fromStdString(s).toHtmlEscaped(); };
    QString html = QStringLiteral("<h3>%1</h3><table>").arg(esc(n->name()));
    auto row = [&](const QString &k, const QString &v) { html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v); };
    row(tr("op"), QString::fromLatin1(ir::opKindName(n->op())));
    row(tr("target"), esc(n->target()));
    // Node references are links: clicking one selects that node.
    auto link = [&](const ir::Node *m) { return QStringLiteral("<a href=\"node:%1\">%1</a>").arg(esc(m->name())); };
    std::function<QString(const ir::Argument &)> arg = [&](const ir::Argument &a) -> QString {
        if (a.isNode())
            return link(a.toNode());
        if (a.isSequence()) {
            QString out = QStringLiteral("[");
            for (size_t i = 0; i < a.items().size(); ++i)
                out += (i ? QStringLiteral(", ") : QString()) + arg(a.items()[i]);
            return out + QStringLiteral("]");
        }
        return esc(a.toString());
    };
    QString args;
    for (const auto &a : n->args())
        args += arg(a) + QStringLiteral("<br>");
    row(tr("args"), args);
    QString kwargs;
    for (const auto &[k, v] : n->kwargs())
        kwargs += esc(k) + QStringLiteral(" = ") + arg(v) + QStringLiteral("<br>");
    row(tr("kwargs"), kwargs);
    QString users;
    for (const auto *u : n->users())
        users += link(u) + QStringLiteral(" ");
    row(tr("users"), users);
    row(tr("value"), esc(n->meta().val.toString()));
    if (n->meta().val.isTensor()) {
        QString stride;
        for (auto s : n->meta().val.tensor.stride)
            stride += QString::number(s) + QStringLiteral(" ");
        row(tr("stride"), stride);
    }
    row(tr("module"), esc(n->meta().modulePath()));
    const QString measured = m_profile ? m_profile->statsFor(n->name()) : QString();
    if (!measured.isEmpty())
        row(tr("profile"), measured.toHtmlEscaped());
    if (n->meta().provenance)
        row(tr("provenance"), esc(n->meta().provenance->pattern) + QStringLiteral(" @ step ") +
                                  QString::number(n->meta().provenance->step));
    html += QStringLiteral("</table>");
    if (!n->meta().stackTrace.empty())
        html += QStringLiteral("<pre>%1</pre>").arg(esc(n->meta().stackTrace));
    m_inspector->setHtml(html);
}

void MainWindow::fillText()
{
    if (!m_textStale || !m_graph)
        return;
    m_textStale = false;
    m_text->setPlainText(QString::fromStdString(ir::printGraph(*m_graph)));
}

void MainWindow::refreshPatterns()
{
    m_patternList->clear();
    m_matchList->clear();
    m_matches.clear();
    if (!m_graph)
        return;
    // Candidate matches of every pattern (the engine's own matcher, nothing applied), counted on a
    // copy of the graph that the worker thread makes and owns: seconds for a 100k-node graph, and
    // the window stays live. The worker shares the loaded graph, so opening another file meanwhile
    // is safe.
    m_patternList->addItem(tr("counting matches…"));
    struct Found {
        std::string pattern;
        size_t anchor = 0; ///< program position
    };
    std::shared_ptr<const ir::Graph> source = m_graph;
    auto found = std::make_shared<std::vector<Found>>();
    std::string err;
    auto patterns = m_registry.preset("all", err);
    const uint64_t job = ++m_patternJob;
    auto copied = std::make_shared<CopyDone>();
    m_copies.push_back(copied);
    QThread *t = QThread::create([source, found, patterns, copied] {
        auto copy = source->clone(); // a Session edits its graph's index; the window's graph stays untouched
        {
            std::lock_guard<std::mutex> lock(copied->mutex);
            copied->done = true;
        }
        copied->cv.notify_all();
        std::unordered_map<const ir::Node *, size_t> pos;
        size_t i = 0;
        for (ir::Node *n = copy->first(); n; n = n->next())
            pos[n] = i++;
        rewrite::Session session(*copy, patterns);
        for (const auto &m : session.candidates())
            found->push_back({m.pattern, pos[m.anchor]});
    });
    connect(t, &QThread::finished, t, &QObject::deleteLater);
    m_workers.push_back(t);
    connect(t, &QThread::finished, this, [this, job, found] {
        if (job != m_patternJob || !m_graph)
            return; // another graph since
        std::vector<const ir::Node *> byPos;
        for (ir::Node *n = m_graph->first(); n; n = n->next())
            byPos.push_back(n);
        std::map<std::string, int> count;
        std::vector<const ir::Node *> anchors;
        for (const auto &f : *found) {
            ++count[f.pattern];
            if (f.anchor < byPos.size())
                anchors.push_back(byPos[f.anchor]);
        }
        m_canvas->setMarked(anchors);
        m_patternList->clear();
        for (const auto *p : m_registry.all()) {
            auto *item = new QListWidgetItem(QStringLiteral("%1  (%2)").arg(QString::fromStdString(p->name)).arg(count[p->name]), m_patternList);
            item->setData(Qt::UserRole, QString::fromStdString(p->name));
            item->setToolTip(QString::fromStdString(p->description));
            if (!count[p->name])
                item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
        }
    });
    t->start();
}

int MainWindow::showMatches(const QString &pattern)
{
    m_matchList->clear();
    m_matches.clear();
    const rewrite::Pattern *p = m_registry.find(pattern.toStdString());
    if (!p || !m_graph)
        return 0;
    rewrite::Session session(*m_graph, {p});
    m_matches = session.candidates();
    for (const auto &m : m_matches)
        m_matchList->addItem(QStringLiteral("%1: %2").arg(QString::fromStdString(m.anchor->name()), QString::fromStdString(m.summary)));
    if (!m_matches.empty())
        m_matchList->setCurrentRow(0);
    else
        m_canvas->setHighlight({}, nullptr);
    return int(m_matches.size());
}

void MainWindow::showMatch(int row)
{
    if (row < 0 || size_t(row) >= m_matches.size())
        return;
    const auto &m = m_matches[size_t(row)];
    showHighlight(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
}

void MainWindow::setDarkTheme(bool dark)
{
    QSettings().setValue(QStringLiteral("view/dark"), dark);
    QPalette p;
    if (dark) {
        p.setColor(QPalette::Window, QColor(45, 45, 48));
        p.setColor(QPalette::WindowText, QColor(220, 220, 220));
        p.setColor(QPalette::Base, QColor(30, 30, 32));
        p.setColor(QPalette::AlternateBase, QColor(45, 45, 48));
        p.setColor(QPalette::Text, QColor(220, 220, 220));
        p.setColor(QPalette::Button, QColor(55, 55, 58));
        p.setColor(QPalette::ButtonText, QColor(220, 220, 220));
        p.setColor(QPalette::Highlight, QColor(42, 130, 218));
        p.setColor(QPalette::HighlightedText, Qt::white);
        p.setColor(QPalette::Mid, QColor(90, 90, 95));
        p.setColor(QPalette::Link, QColor(120, 180, 255));
        p.setColor(QPalette::PlaceholderText, QColor(150, 150, 155));
    } else {
        p = style()->standardPalette();
    }
    qApp->setPalette(p);
    setPalette(p);
    m_canvas->setPalette(p); // the canvas repaints in the new colours and keeps its state
    // Links and placeholders follow the palette (readable in both themes).
    m_search->setPalette(p);
    m_inspector->document()->setDefaultStyleSheet(QStringLiteral("a { color: %1; }").arg(p.color(QPalette::Link).name()));
}

void MainWindow::dragEnterEvent(QDragEnterEvent *e)
{
    if (e->mimeData()->hasUrls())
        e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *e)
{
    const auto urls = e->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile())
        return;
    const QString path = urls.first().toLocalFile();
    if (prof::isProfileFile(path.toStdString()))
        openProfile(path);
    else
        openFileAsked(path);
}

bool MainWindow::openProfile(const QString &path)
{
    const bool ok = m_profile->openProfile(path);
    statusBar()->showMessage(m_profile->status(), ok ? 5000 : 0);
    if (ok)
        m_profileDock->raise();
    return ok;
}

} // namespace fxlens::views
