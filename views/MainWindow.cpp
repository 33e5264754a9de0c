// SPDX-License-Identifier: MIT
// Main window of the fxlens desktop app: panels wired to the document. The document owns the graph
// and its workers; the window only asks (open, save) and shows what the document says.
#include "MainWindow.h"
#include "Count.h"

#include "Autosave.h"
#include "FileDialog.h"
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "Inspector.h"
#include "KernelTimeline.h"
#include "NodeList.h"
#include "PatternEditor.h"
#include "PatternsPanel.h"
#include "PostGradView.h"
#include "ProfilePanel.h"
#include "RewriteDebugger.h"
#include "Selection.h"
#include "SessionReplay.h"
#include "Theme.h"
#include "TuneJob.h"
#include "TuneWidgets.h"
#include "UserPatterns.h"
#include "WindowMenus.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBlock>
#include <QTimer>

namespace fxlens::views {

MainWindow::MainWindow(Services services, QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("fxlens"));
    setAcceptDrops(true);
    m_doc = new GraphDocument(services, this);
    if (!m_doc->registryError().isEmpty())
        statusBar()->showMessage(m_doc->registryError(), 10000);
    m_debugger = new RewriteDebugger(*m_doc, this);
    m_replay = std::make_unique<SessionReplay>(*m_doc, *m_debugger);
    // Unsaved work goes to an autosave a moment after each change (Autosave.h).
    m_autosaveTimer = new QTimer(this);
    m_autosaveTimer->setSingleShot(true);
    m_autosaveTimer->setInterval(800);
    connect(m_autosaveTimer, &QTimer::timeout, this, &MainWindow::autosaveNow);
    createPanels();
    connectDocument();
    m_recoveryPrompt = [this](const AutosaveState &s) { return Autosave::askToRecover(this, s); };
    m_menus = new WindowMenus(*this);
    QSettings settings;
    restoreUserPatterns(settings);
    resize(1200, 800); // first start; a saved geometry wins
    // First start: the side panels get room enough for their content (the candidates' text, a
    // diff, the profile's columns, an inspector of a dozen rows); a saved state wins.
    resizeDocks({m_inspectorDock}, {qMax(420, width() * 2 / 5)}, Qt::Horizontal);
    resizeDocks({m_inspectorDock, m_patternsDock}, {height() * 2 / 5, height() * 3 / 5}, Qt::Vertical);
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow()
{
    // An orderly teardown (the app quits through closeEvent, which asked about unsaved work; a test or
    // an embedding program destroys the window) leaves no autosave behind; a crash or a kill does.
    m_autosaveTimer->stop();
    if (m_doc->isModified() && !m_doc->file().isEmpty())
        Autosave::remove(m_doc->file());
    // The panels are children, destroyed after this window's members: they drop their pointers
    // into the graph first (the document frees its session and graph in its own order).
    m_doc->aboutToChangePatterns();
    Q_EMIT m_doc->aboutToReplace();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::restoreUserPatterns(QSettings &settings)
{
    const QStringList problems = m_doc->userPatterns().restore(UserPatterns::read(settings));
    if (problems.isEmpty())
        return;
    for (const QString &p : problems)
        qWarning("%s", qPrintable(p));
    const UserPattern &first = m_doc->userPatterns().broken().front(); // its text, to fix in the editor
    m_editor->setSource(first.source, first.file);
    statusBar()->showMessage(problems.join(QStringLiteral(" — ")) + tr(" (its text is in the Pattern Editor)"));
}

const ir::Graph *MainWindow::graph() const { return m_doc->graph(); }
QString MainWindow::currentFile() const { return m_doc->file(); }
bool MainWindow::isModified() const { return m_doc->isModified(); }

void MainWindow::createPanels()
{
    m_nodes = new NodeList(this);
    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setObjectName(QStringLiteral("graphText"));
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFont(QStringLiteral("monospace")));
    m_canvas = new GraphCanvas(this);
    m_canvas->setObjectName(QStringLiteral("graphCanvas"));
    m_canvas->setFollowResize(true);
    m_views = new QTabWidget(this);
    m_views->setObjectName(QStringLiteral("graphViews"));
    m_views->addTab(m_canvas, tr("Graph"));
    m_views->addTab(m_text, tr("Text"));
    connect(m_views, &QTabWidget::currentChanged, this, &MainWindow::fillText);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_nodes);
    split->addWidget(m_views);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    setCentralWidget(split);

    m_inspector = new Inspector(this);
    m_inspectorDock = addPanel(tr("Inspector"), QStringLiteral("inspectorDock"), m_inspector, nullptr);
    m_patterns = new PatternsPanel(*m_doc, this);
    m_patternsDock = addPanel(tr("Patterns"), QStringLiteral("patternsDock"), m_patterns, nullptr);
    m_rewriteDock = addPanel(tr("Rewrite"), QStringLiteral("rewriteDock"), m_debugger, m_patternsDock);
    m_editor = new PatternEditor(m_doc->userPatterns(), this);
    m_editorDock = addPanel(tr("Pattern Editor"), QStringLiteral("patternEditorDock"), m_editor, m_rewriteDock);
    m_profile = new ProfilePanel(*m_doc, this);
    m_profileDock = addPanel(tr("Profile"), QStringLiteral("profileDock"), m_profile, m_editorDock);
    m_rewriteDock->raise();
    // The Timeline tab gets the height it asks for (the Inspector above gives it up, down to a
    // few rows of its own); a dock the user made taller stays so.
    connect(m_profile, &ProfilePanel::timelineRoomWanted, this, [this](int wanted) {
        if (m_profileDock->isFloating() || m_profile->height() >= wanted || !m_inspectorDock->isVisible() ||
            m_inspectorDock->isFloating() || dockWidgetArea(m_inspectorDock) != dockWidgetArea(m_profileDock))
            return;
        const int frame = m_profileDock->height() - m_profile->height();
        const int both = m_inspectorDock->height() + m_profileDock->height();
        const int profile = std::min(wanted + frame, both - kInspectorLeast);
        if (profile > m_profileDock->height())
            resizeDocks({m_inspectorDock, m_profileDock}, {both - profile, profile}, Qt::Vertical);
    });
    // Every panel that shows or changes the selection connects itself to it.
    m_selection = new Selection(m_doc, this);
    m_nodes->setSelection(m_selection);
    m_inspector->setSelection(m_selection, [this](const std::string &node) { return m_profile->statsFor(node); });
    m_profile->setSelection(m_selection);
    m_canvas->setSelection(m_selection);
    m_editor->setSelection(m_selection);
    m_patterns->setSelection(m_selection);
    m_debugger->setSelection(m_selection);
    connect(m_selection, &Selection::nodeSelected, this, [this](const QString &name) {
        m_textNode = name;
        showTextNode();
    });

    m_canvas->addLayoutStatus(statusBar());
    m_stats = new QLabel(this);
    m_stats->setMinimumWidth(320);
    m_stats->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    statusBar()->addPermanentWidget(m_stats);
}

void MainWindow::connectDocument()
{
    // The panels follow the document themselves (setDocument); the pattern editor is given the
    // graph it matches on, and the window keeps its text form, status line, title and autosave.
    m_canvas->setDocument(m_doc);
    // The red ghosts show what the step on screen removed: gone once another version is current
    // than the one a step just made (undo, a jump in the history, a branch switch) or work moves to
    // the Pattern Editor.
    connect(m_doc->history(), &RewriteHistory::versionChanged, m_canvas, [this, last = 0](const VersionInfo &info) mutable {
        if (info.version != last + 1)
            m_canvas->clearGhosts();
        last = info.version;
    });
    connect(m_editorDock, &QDockWidget::visibilityChanged, m_canvas, [this](bool shown) {
        if (shown)
            m_canvas->clearGhosts();
    });
    connect(m_editor, &PatternEditor::highlightRequested, m_canvas, &GraphCanvas::clearGhosts);
    m_nodes->setDocument(m_doc);
    m_inspector->setDocument(m_doc);
    connect(m_doc, &GraphDocument::aboutToReplace, m_editor, [this] { m_editor->setGraph(nullptr); });
    const auto editorGraph = [this] { m_editor->setGraph(m_doc->editableGraph()); }; // its matches name nodes of the graph before
    connect(m_doc, &GraphDocument::replaced, m_editor, editorGraph);
    connect(m_doc, &GraphDocument::changed, m_editor, editorGraph);
    connect(m_doc, &GraphDocument::replaced, this, [this] {
        m_text->clear();
        graphShown();
        updateTitle();
    });
    connect(m_doc, &GraphDocument::changed, this, [this] {
        graphShown();
        m_autosaveTimer->start();
    });
    connect(m_doc, &GraphDocument::modifiedChanged, this, [this](bool modified) {
        updateTitle();
        if (modified)
            m_autosaveTimer->start();
    });
    connect(m_debugger, &RewriteDebugger::busyChanged, this, &MainWindow::setRunning);
    connect(&m_doc->tuning(), &TuneJob::finished, this, [this](bool ok, const QString &message) {
        if (!message.isEmpty())
            statusBar()->showMessage(message, ok ? 15000 : 0);
    });
    // The user's patterns are kept with the settings (and with the autosave, autosaveNow).
    connect(&m_doc->userPatterns(), &UserPatterns::changed, this, [this] {
        QSettings settings;
        m_doc->userPatterns().write(settings);
        m_autosaveTimer->start();
    });
    connect(m_patterns, &PatternsPanel::anchorsCounted, m_canvas, &GraphCanvas::setMarked);
    connect(m_profile, &ProfilePanel::heatChanged, m_canvas, &GraphCanvas::setHeat);
    connect(m_profile, &ProfilePanel::kernelGroupsChanged, m_canvas, &GraphCanvas::setKernelGroups);
    connect(m_profile, &ProfilePanel::kernelGroupSelected, m_canvas, &GraphCanvas::setSelectedKernelGroup);
    connect(m_canvas, &GraphCanvas::kernelGroupClicked, m_profile, &ProfilePanel::selectKernelGroup);
    connect(m_profile, &ProfilePanel::kernelGroupsChanged, this, [this] {
        // Another profile shown, or the version on screen no longer the one profiled: the
        // post-grad view of the last one would link to the wrong nodes.
        if (postGradView() && (m_profile->profile() != m_postGradOf || !m_profile->bound())) {
            delete m_postGradDock->widget();
            m_postGradDock->hide();
        }
    });
    connect(m_nodes, &NodeList::searchChanged, this, [this](const QString &text, int matches) {
        m_canvas->setSearchHits(m_nodes->matchedNodes()); // the matches outlined on the canvas too
        if (text.isEmpty())
            statusBar()->clearMessage();
        else
            statusBar()->showMessage(counted(matches, "match"), 4000);
    });
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

void MainWindow::setRunning(bool running)
{
    m_menus->setRunning(running);
    for (QDockWidget *d : {m_patternsDock, m_editorDock, m_profileDock})
        d->setEnabled(!running);
    setAcceptDrops(!running);
}

bool MainWindow::settleUnsaved(const QString &before)
{
    if (!m_doc->isModified())
        return true;
    const int answer = m_unsavedPrompt
        ? m_unsavedPrompt(before)
        : QMessageBox::question(this, tr("Unsaved rewrites"),
                                tr("The graph has rewrite steps that are not saved. Save it before %1?").arg(before),
                                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Save)
        return save();
    Autosave::remove(m_doc->file()); // discarded on purpose
    m_doc->setModified(false);
    return true;
}

bool MainWindow::openFileAsked(const QString &path)
{
    const QString name = QFileInfo(path).fileName();
    const bool again = !m_doc->file().isEmpty() && QFileInfo(path).absoluteFilePath() == QFileInfo(m_doc->file()).absoluteFilePath();
    if (again && !m_doc->isModified()) { // nothing would change: said, not silently reloaded
        statusBar()->showMessage(tr("%1 is already open").arg(name), 8000);
        return true;
    }
    if (!settleUnsaved(again ? tr("reloading %1 from disk").arg(name) : tr("opening %1").arg(name)))
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
    QString error;
    if (!m_doc->open(path, &error)) {
        statusBar()->showMessage(error);
        Q_EMIT loadFailed(error);
        return false;
    }
    m_savedPath.clear();
    m_openDir = QFileInfo(path).absolutePath(); // resolved now: a relative path is relative to today's working directory
    m_menus->rememberRecent(path);
    statusBar()->showMessage(tr("Loaded %1").arg(path), 5000);
    m_replay->fileOpened(); // before recovery: recovered steps may use the session's pattern files
    const bool recovered = offerRecovery();
    if (recovered)
        statusBar()->showMessage(tr("Recovered the unsaved work on %1 (%2)").arg(path, counted(m_debugger->historySize(), "step")), 8000);
    replayRecordedSession(recovered);
    Q_EMIT graphLoaded(path);
    return true;
}

void MainWindow::replayRecordedSession(bool recovered)
{
    if (!m_replay->hasSession())
        return;
    if (recovered) { // the autosave holds the whole history, the recorded steps included
        const QStringList warnings = m_replay->warnings();
        for (const QString &w : warnings)
            qWarning("%s", qPrintable(w));
        if (!warnings.isEmpty())
            statusBar()->showMessage(statusBar()->currentMessage() + QStringLiteral(" — ") + warnings.join(QStringLiteral(" — ")));
        return;
    }
    const bool ok = m_replay->replay();
    const bool quiet = ok && m_replay->warnings().isEmpty();
    if (!quiet) // logged too: a step that stopped the replay, a pattern file that is missing
        qWarning("%s", qPrintable(m_replay->message()));
    statusBar()->showMessage(m_replay->message(), quiet ? 15000 : 0);
}

bool MainWindow::offerRecovery()
{
    auto saved = Autosave::read(m_doc->file());
    if (!saved)
        return false;
    if (!m_recoveryPrompt || !m_recoveryPrompt(*saved)) {
        Autosave::remove(m_doc->file());
        return false;
    }
    const QStringList problems = Autosave::restore(*saved, *m_doc, *m_debugger);
    for (const QString &p : problems)
        qWarning("%s", qPrintable(p));
    return true;
}

void MainWindow::autosaveNow()
{
    const QString file = m_doc->file();
    if (file.isEmpty())
        return;
    if (!m_doc->graph() || !m_doc->isModified()) {
        Autosave::remove(file);
        return;
    }
    const AutosaveState s = Autosave::capture(*m_doc, *m_debugger);
    QString error;
    if (!Autosave::write(s, &error))
        statusBar()->showMessage(tr("Cannot autosave: %1").arg(error), 8000);
}

void MainWindow::graphShown()
{
    // The text form (tens of MB for a 100k-node graph) is printed when its tab is first shown.
    m_textStale = true;
    fillText();
    m_stats->setText(m_doc->statsText());
}

void MainWindow::updateTitle()
{
    setWindowTitle(
        QStringLiteral("%1%2 — fxlens").arg(QFileInfo(m_doc->file()).fileName(), m_doc->isModified() ? QStringLiteral(" *") : QString()));
}

bool MainWindow::saveFile(const QString &path)
{
    QString error;
    if (!m_doc->save(path, &error)) {
        statusBar()->showMessage(error);
        return false;
    }
    m_savedPath = path;
    statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
    return true;
}

bool MainWindow::save() { return m_savedPath.isEmpty() ? saveAs() : saveFile(m_savedPath); }

bool MainWindow::saveAs()
{
    if (!m_doc->graph())
        return false;
    const QString path = askSaveFile(this, tr("Save Graph"), proposedSavePath(), tr("fxlens graphs (*.json *.json.gz)"));
    return !path.isEmpty() && saveFile(path);
}

/// The file opened without .json / .json.gz, with `suffix`, beside it.
static QString besideInput(const QString &file, const QString &suffix)
{
    const QFileInfo input(file);
    QString base = input.fileName();
    for (const QString &ext : {QStringLiteral(".json.gz"), QStringLiteral(".json")})
        if (base.endsWith(ext)) {
            base.chop(ext.size());
            break;
        }
    return input.dir().filePath(base + suffix);
}

QString MainWindow::openDir() const { return m_doc->file().isEmpty() ? QString() : m_openDir; }

QString MainWindow::proposedSavePath() const
{
    return !m_savedPath.isEmpty() ? m_savedPath : besideInput(m_doc->file(), QStringLiteral("_opt.json"));
}

QString MainWindow::proposedReportPath() const { return besideInput(m_doc->file(), QStringLiteral("_tune.html")); }

bool MainWindow::exportReport(const QString &path)
{
    QString message;
    const bool ok = m_doc->tuning().exportReport(path, &message);
    statusBar()->showMessage(message, ok ? 8000 : 0);
    return ok;
}

bool MainWindow::tune()
{
    TuneJob &job = m_doc->tuning();
    QString why;
    if (!job.available())
        why = TuneJob::unavailableReason();
    else if (!graph())
        why = tr("Open a graph to tune");
    else if (job.isRunning())
        why = tr("A search is running; wait for it or stop it");
    if (!why.isEmpty()) {
        statusBar()->showMessage(why, 8000);
        return false;
    }
    if (!m_tuneSettings)
        m_tuneSettings = std::make_unique<TuneSettings>();
    TuneSettings settings = *m_tuneSettings;
    if (m_tunePrompt) {
        if (!m_tunePrompt(settings))
            return false;
    } else {
        TuneDialog dialog(settings, this);
        if (dialog.exec() != QDialog::Accepted)
            return false;
        settings = dialog.settings();
    }
    *m_tuneSettings = settings;
    if (!job.start(settings, &why)) {
        statusBar()->showMessage(why, 8000);
        return false;
    }
    m_rewriteDock->raise(); // its progress and Stop are there
    return true;
}

bool MainWindow::exportPython(const QString &path)
{
    QString message;
    const bool ok = m_doc->exportPython(path, &message);
    statusBar()->showMessage(message, 8000);
    return ok;
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
    m_autosaveTimer->stop();
    if (!m_doc->file().isEmpty())
        Autosave::remove(m_doc->file()); // saved or discarded on purpose
    QMainWindow::closeEvent(e);
}

void MainWindow::setSearch(const QString &text) { m_nodes->setSearch(text); }
void MainWindow::focusSearch()
{
    m_nodes->searchField()->setFocus();
    m_nodes->searchField()->selectAll();
}
QString MainWindow::shortcutsText() const { return m_menus->shortcutsText(); }
QStringList MainWindow::recentFiles() const { return WindowMenus::recentFiles(); }
int MainWindow::visibleNodeCount() const { return m_nodes->visibleCount(); }

bool MainWindow::selectNode(const QString &name) { return m_selection->selectNode(name); }

bool MainWindow::showModule(const QString &path)
{
    if (!m_canvas->showModule(path))
        return false;
    m_selection->selectModule(path, nullptr);
    return true;
}

QString MainWindow::inspectorText() const { return m_inspector->toPlainText(); }

void MainWindow::fillText()
{
    if (!m_textStale || !m_doc->graph() || m_views->currentWidget() != m_text)
        return;
    m_textStale = false;
    m_text->setPlainText(QString::fromStdString(ir::printGraph(*m_doc->graph())));
    showTextNode();
}

void MainWindow::showTextNode()
{
    if (m_textStale || m_views->currentWidget() != m_text)
        return;
    QList<QTextEdit::ExtraSelection> marks;
    const QTextCursor line = m_textNode.isEmpty()
        ? QTextCursor()
        : m_text->document()->find(
              QRegularExpression(QStringLiteral("^\\s*%") + QRegularExpression::escape(m_textNode) + QStringLiteral(" :")));
    if (!line.isNull()) {
        QTextCursor at(line.block());
        m_text->setTextCursor(at);
        m_text->centerCursor();
        QTextEdit::ExtraSelection mark;
        mark.cursor = at;
        QColor shade = palette().color(QPalette::Highlight);
        shade.setAlpha(90);
        mark.format.setBackground(shade);
        mark.format.setProperty(QTextFormat::FullWidthSelection, true);
        marks << mark;
    }
    m_text->setExtraSelections(marks);
}

int MainWindow::showMatches(const QString &pattern) { return m_patterns->showMatches(pattern); }
void MainWindow::showMatch(int row) { m_patterns->showMatch(row); }

void MainWindow::setDarkTheme(bool dark)
{
    QSettings().setValue(QStringLiteral("view/dark"), dark);
    const QPalette p = themePalette(dark, style());
    qApp->setPalette(p);
    const QPalette box = themeCheckBoxPalette(dark, style());
    QApplication::setPalette(box, "QCheckBox");
    setPalette(p);
    for (QCheckBox *c : findChildren<QCheckBox *>()) // the window's palette reached them too
        c->setPalette(box);
    m_canvas->setPalette(p); // the canvas repaints in the new colours and keeps its state
    m_nodes->searchField()->setPalette(p);
    m_inspector->setPalette(p);
    m_inspector->updateLinkColor();
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
        showProfileDock();
    return ok;
}

void MainWindow::showProfileDock() { m_profileDock->raise(); }

QString MainWindow::whyNoPostGrad() const
{
    const prof::Profile *p = m_profile->profile();
    if (p && p->compiled() && !m_profile->bound())
        return tr("The compiled profile shown was recorded on another version: show the version it was recorded on");
    return postGradUnavailable(p);
}

PostGradView *MainWindow::postGradView() const { return m_postGradDock ? qobject_cast<PostGradView *>(m_postGradDock->widget()) : nullptr; }

bool MainWindow::openPostGrad()
{
    if (const QString why = whyNoPostGrad(); !why.isEmpty()) {
        statusBar()->showMessage(why, 0);
        return false;
    }
    QString error;
    const prof::Profile &p = *m_profile->profile();
    PostGradView *view = openPostGradView(p, *m_selection, nullptr, &error);
    if (!view) {
        statusBar()->showMessage(error, 0);
        return false;
    }
    if (!m_postGradDock) {
        m_postGradDock = new QDockWidget(this);
        m_postGradDock->setObjectName(QStringLiteral("postGradDock"));
        addDockWidget(Qt::LeftDockWidgetArea, m_postGradDock);
    }
    delete m_postGradDock->widget();
    m_postGradDock->setWidget(view);
    // A kernel picked on the timeline (or its outline in either canvas) is emphasised on both.
    connect(m_profile->timeline(), &KernelTimeline::kernelSelected, view, &PostGradView::showKernel);
    connect(view, &PostGradView::kernelClicked, m_profile->timeline(), &KernelTimeline::selectKernel);
    m_postGradDock->setWindowTitle(tr("Post-grad Graph (%1)").arg(QFileInfo(QString::fromStdString(p.postGradGraph)).fileName()));
    m_postGradOf = &p;
    m_postGradDock->show();
    // Room for both graphs: the view takes what shows its graph's breadth at a readable zoom (3/10
    // of the window at least, 2/5 at most), the inspector's side gives up some of its.
    const int room = std::clamp(view->readableWidth(), width() * 3 / 10, width() * 2 / 5);
    resizeDocks({m_postGradDock, m_inspectorDock}, {room, width() / 4}, Qt::Horizontal);
    // The FX canvas lost room to the dock: fitted again once the docks have their sizes, not left
    // cut at its right edge.
    QTimer::singleShot(0, m_canvas, &GraphCanvas::refit);
    return true;
}

void MainWindow::setShowConstants(bool on)
{
    m_nodes->setShowConstants(on);
    m_canvas->setShowConstants(on);
}

} // namespace fxlens::views
