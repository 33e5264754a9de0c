// SPDX-License-Identifier: MIT
// MainWindow: the panels over one GraphDocument (the open graph): the canvas and the text form, the
// node list, the inspector, the patterns, the rewrite debugger, the pattern editor and the profile.
#pragma once

#include "Services.h"
#include "ir/Graph.h"
#include "rewrite/Pattern.h"

#include <QMainWindow>
#include <QPointer>

#include <functional>
#include <memory>

class QPlainTextEdit;
class QLabel;
class QTabWidget;
class QDockWidget;
class QTimer;
class QSettings;

namespace fxlens::views {

class GraphDocument;
class Inspector;
class NodeList;
class PatternsPanel;
class GraphCanvas;
class RewriteDebugger;
struct AutosaveState;
class PatternEditor;
class PostGradView;
class ProfilePanel;
class WindowMenus;
class Selection;
class SessionReplay;
struct TuneSettings;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(Services services = {}, QWidget *parent = nullptr);
    ~MainWindow() override;

    /// Loads a graph file; on failure the current graph stays and loadFailed() is emitted.
    bool openFile(const QString &path);
    /// What File → Open, Open Recent and a drop do: with unsaved rewrite steps, asks first (save,
    /// discard or cancel), then opens.
    bool openFileAsked(const QString &path);
    /// The question asked before unsaved steps would be lost ("closing", "opening g.json"); returns a
    /// QMessageBox::StandardButton (Save, Discard, Cancel). The default asks the user.
    void setUnsavedPrompt(std::function<int(const QString &)> prompt) { m_unsavedPrompt = std::move(prompt); }
    const ir::Graph *graph() const;
    QString currentFile() const;
    GraphDocument *document() const { return m_doc; }
    /// Filters the node table (name, target or module path; a /regex/ is taken as a regular expression).
    void setSearch(const QString &text);
    int visibleNodeCount() const;
    /// Selects a node by name and shows it in the inspector; false if there is no such node.
    bool selectNode(const QString &name);
    /// The module `path` shown on the canvas (GraphCanvas::showModule) and selected: the Inspector
    /// describes it and no node stays selected off screen (`--expand`). False when it has no items.
    bool showModule(const QString &path);
    QString inspectorText() const;
    QStringList recentFiles() const;
    GraphCanvas *canvas() const { return m_canvas; }
    /// The selected node or module and the highlighted match: a panel follows it by connecting to it.
    Selection *selection() const { return m_selection; }
    /// Lists the matches of one pattern in the Patterns panel and outlines the first; returns how many.
    int showMatches(const QString &pattern);
    void showMatch(int row);
    void setDarkTheme(bool dark);
    RewriteDebugger *debugger() const { return m_debugger; }
    PatternEditor *patternEditor() const { return m_editor; }
    ProfilePanel *profilePanel() const { return m_profile; }
    /// Opens a saved profile over the graph (per-node table, canvas tint, inspector rows).
    bool openProfile(const QString &path);
    /// Parameters and constants in the node table and on the canvas (View menu; off by default).
    void setShowConstants(bool on);
    /// Brings the profile panel to the front.
    void showProfileDock();
    /// View ▸ Post-grad Graph: the compiled profile shown, its post-grad graph (the compiler's, saved
    /// beside the profile) in a dock beside the canvas, linked to the selection by provenance
    /// (PostGradView). False with the reason in the status bar when there is none to open.
    bool openPostGrad();
    /// Why View ▸ Post-grad Graph cannot open now ("" when it can): no compiled profile of the
    /// version on screen is shown, it records no post-grad graph, or the graph's file is missing.
    QString whyNoPostGrad() const;
    /// The open post-grad view (nullptr when none); it closes when the profile shown changes.
    PostGradView *postGradView() const;
    /// Writes the graph as it is now (after rewrite steps) to an fxlens graph file (.json / .json.gz).
    bool saveFile(const QString &path);
    /// File → Save (Ctrl+S): writes to the file last saved from this graph; without one, Save As.
    bool save();
    /// File → Save Graph As (Ctrl+Shift+S): asks where, proposing proposedSavePath().
    bool saveAs();
    /// What Save As proposes: the file last saved, else `<name>_opt.json` beside the file opened
    /// (never the input itself).
    QString proposedSavePath() const;
    /// Where Open… (a graph or a profile) starts: the folder of the file open (also when it was
    /// given on the command line), else "" (the dialog's own choice).
    QString openDir() const;
    /// Writes the graph as it is now as a runnable Python module (io::writePython).
    bool exportPython(const QString &path);
    /// Rewrite ▸ Tune…: asks for the settings (the Tune dialog, or the prompt set), then searches off
    /// the GUI thread (GraphDocument::tuning); false with the reason in the status bar when it
    /// cannot start.
    bool tune();
    /// What Tune asks: true with the settings to search with. The default shows the Tune dialog.
    void setTunePrompt(std::function<bool(TuneSettings &)> prompt) { m_tunePrompt = std::move(prompt); }
    /// File ▸ Export Report…: writes the last tune's report (report::tuneReportHtml) as one HTML page.
    bool exportReport(const QString &path);
    /// What Export Report proposes: `<name>_tune.html` beside the file opened.
    QString proposedReportPath() const;
    /// True when rewrite steps changed the graph since it was loaded or saved.
    bool isModified() const;
    /// Asked when a file opens that has an autosave (unsaved work from a crash or a kill): true
    /// recovers it. The default asks the user; tests and scripts set their own.
    void setRecoveryPrompt(std::function<bool(const AutosaveState &)> prompt) { m_recoveryPrompt = std::move(prompt); }
    /// Writes the autosave now (it is also written a moment after every change); removes it when
    /// nothing is unsaved.
    void autosaveNow();
    /// Every menu action with a key, as the Help menu lists them (rich text).
    QString shortcutsText() const;
    /// Puts the focus in the node search field (Ctrl+F).
    void focusSearch();

Q_SIGNALS:
    void graphLoaded(const QString &path);
    void loadFailed(const QString &message);

protected:
    void dragEnterEvent(QDragEnterEvent *e) override;
    void dropEvent(QDropEvent *e) override;
    void closeEvent(QCloseEvent *e) override;

private:
    /// The Inspector's least height when the Timeline tab takes room from it.
    static constexpr int kInspectorLeast = 150;
    void createPanels();
    void connectDocument();
    void fillText();
    /// The Text tab shows the selected node's line (scrolled to it and marked) once it is printed.
    void showTextNode();
    /// A new or edited graph: the text form is printed again (when shown), the status line counts it.
    void graphShown();
    void updateTitle();
    /// While a run is in progress: everything that could edit the graph or the patterns is held;
    /// the canvas, the node table and the inspector stay browsable.
    void setRunning(bool running);
    /// A dock on the right holding `content`, tabbed with `tabWith` when given.
    QDockWidget *addPanel(const QString &title, const QString &name, QWidget *content, QDockWidget *tabWith);
    /// True when nothing unsaved is in the way (none, saved, or discarded on purpose).
    bool settleUnsaved(const QString &before);
    /// The user's patterns saved with the settings, registered again; one that no longer compiles
    /// is said in the status bar and its text put in the Pattern Editor.
    void restoreUserPatterns(QSettings &settings);
    /// Offers the autosave of the file just opened; true when its work was recovered.
    bool offerRecovery();
    /// The file just opened records a rewrite session (a trace file): its history is replayed into
    /// the debugger (SessionReplay), unless `recovered` work took its place; says so in the status bar.
    void replayRecordedSession(bool recovered);

    GraphDocument *m_doc = nullptr;
    NodeList *m_nodes = nullptr;
    QPlainTextEdit *m_text = nullptr;
    Inspector *m_inspector = nullptr;
    QLabel *m_stats = nullptr;
    GraphCanvas *m_canvas = nullptr;
    QTabWidget *m_views = nullptr;
    PatternsPanel *m_patterns = nullptr;
    QDockWidget *m_patternsDock = nullptr;
    bool m_textStale = false;
    QString m_textNode; ///< the selected node, for the Text tab
    WindowMenus *m_menus = nullptr;
    Selection *m_selection = nullptr;
    RewriteDebugger *m_debugger = nullptr;
    PatternEditor *m_editor = nullptr;
    ProfilePanel *m_profile = nullptr;
    QDockWidget *m_profileDock = nullptr, *m_rewriteDock = nullptr, *m_editorDock = nullptr, *m_inspectorDock = nullptr;
    QDockWidget *m_postGradDock = nullptr;
    const void *m_postGradOf = nullptr; ///< the profile the post-grad view shows the graph of
    QTimer *m_autosaveTimer = nullptr;
    std::function<bool(const AutosaveState &)> m_recoveryPrompt;
    std::function<int(const QString &)> m_unsavedPrompt;
    std::function<bool(TuneSettings &)> m_tunePrompt;
    std::unique_ptr<TuneSettings> m_tuneSettings; ///< what Tune was last asked with
    std::unique_ptr<SessionReplay> m_replay;
    QString m_savedPath; ///< the file last saved from this graph ("" until it is saved)
    QString m_openDir;   ///< openDir(): the absolute folder of the file last opened
};

} // namespace fxlens::views
