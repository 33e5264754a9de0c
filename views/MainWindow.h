// SPDX-License-Identifier: MIT
// MainWindow: opens a graph file and shows its nodes, its text form and an inspector.
#pragma once

#include "Services.h"
#include "ir/Graph.h"
#include "rewrite/Pattern.h"

#include <QMainWindow>
#include <QPointer>
#include <QThread>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

class QLineEdit;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;
class QTextBrowser;
class QLabel;
class QTabWidget;
class QListWidget;
class QProgressBar;
class QPushButton;
class QDockWidget;
class QTimer;

namespace fxlens::views {

class NodeTableModel;
class GraphCanvas;
class RewriteDebugger;
struct AutosaveState;
class PatternEditor;
class ProfilePanel;

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
    const ir::Graph *graph() const { return m_graph.get(); }
    QString currentFile() const { return m_file; }
    /// Filters the node table (name, target or module path; a /regex/ is taken as a regular expression).
    void setSearch(const QString &text);
    int visibleNodeCount() const;
    /// Selects a node by name and shows it in the inspector; false if there is no such node.
    bool selectNode(const QString &name);
    QString inspectorText() const;
    QStringList recentFiles() const;
    GraphCanvas *canvas() const { return m_canvas; }
    /// Lists the matches of one pattern in the Patterns panel and outlines the first; returns how many.
    int showMatches(const QString &pattern);
    void showMatch(int row);
    void setDarkTheme(bool dark);
    RewriteDebugger *debugger() const { return m_debugger; }
    PatternEditor *patternEditor() const { return m_editor; }
    ProfilePanel *profilePanel() const { return m_profile; }
    /// Opens a saved profile over the graph (per-node table, canvas tint, inspector rows).
    bool openProfile(const QString &path);
    /// Writes the graph as it is now (after rewrite steps) to an fxlens graph file (.json / .json.gz).
    bool saveFile(const QString &path);
    /// Writes the graph as it is now as a runnable Python module (io::writePython).
    bool exportPython(const QString &path);
    /// True when rewrite steps changed the graph since it was loaded or saved.
    bool isModified() const { return m_modified; }
    /// Asked when a file opens that has an autosave (unsaved work from a crash or a kill): true
    /// recovers it. The default asks the user; tests and scripts set their own.
    void setRecoveryPrompt(std::function<bool(const AutosaveState &)> prompt) { m_recoveryPrompt = std::move(prompt); }
    /// Writes the autosave now (it is also written a moment after every change); removes it when
    /// nothing is unsaved.
    void autosaveNow();
    /// Every menu action with a key, as the Help menu lists them (rich text).
    QString shortcutsText() const;

Q_SIGNALS:
    void graphLoaded(const QString &path);
    void loadFailed(const QString &message);

protected:
    void dragEnterEvent(QDragEnterEvent *e) override;
    void dropEvent(QDropEvent *e) override;
    void closeEvent(QCloseEvent *e) override;

private:
    void createActions();
    void showNode(const ir::Node *n);
    void updateRecentMenu();
    void refreshPatterns();
    void fillText();
    void graphEdited();
    void updateStats();
    void updateTitle();
    /// Waits for the workers that read the graph (before an edit).
    void waitForWorkers();
    /// Drops every pointer into the graph (table, panels, canvas) before it is replaced or freed.
    void detachGraph();
    /// A dock on the right holding `content`, tabbed with `tabWith` when given.
    QDockWidget *addPanel(const QString &title, const QString &name, QWidget *content, QDockWidget *tabWith);
    void showHighlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);

    /// Shared with the worker that counts pattern matches on a copy it makes itself. Only the
    /// rewrite debugger edits it, after waiting for such workers (aboutToEdit).
    std::shared_ptr<ir::Graph> m_graph;
    QString m_file;
    NodeTableModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QTableView *m_table = nullptr;
    QLineEdit *m_search = nullptr;
    QPlainTextEdit *m_text = nullptr;
    QTextBrowser *m_inspector = nullptr;
    QLabel *m_stats = nullptr;
    GraphCanvas *m_canvas = nullptr;
    QTabWidget *m_views = nullptr;
    QListWidget *m_patternList = nullptr, *m_matchList = nullptr;
    QProgressBar *m_layoutBusy = nullptr;
    QPushButton *m_layoutCancel = nullptr;
    rewrite::PatternRegistry m_registry;
    std::vector<rewrite::Match> m_matches;
    bool m_textStale = false;
    uint64_t m_patternJob = 0;
    std::vector<QPointer<QThread>> m_workers;
    /// Set by each worker once its copy of the graph is made: an edit waits for that only.
    struct CopyDone {
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
    };
    std::vector<std::shared_ptr<CopyDone>> m_copies;
    QMenu *m_recentMenu = nullptr;
    RewriteDebugger *m_debugger = nullptr;
    PatternEditor *m_editor = nullptr;
    ProfilePanel *m_profile = nullptr;
    QDockWidget *m_profileDock = nullptr;
    bool m_modified = false;
    QTimer *m_autosaveTimer = nullptr;
    std::function<bool(const AutosaveState &)> m_recoveryPrompt;
    std::function<int(const QString &)> m_unsavedPrompt;
    /// True when nothing unsaved is in the way (none, saved, or discarded on purpose).
    bool settleUnsaved(const QString &before);
    /// Offers the autosave of the file just opened; true when its work was recovered.
    bool offerRecovery();
};

} // namespace fxlens::views
