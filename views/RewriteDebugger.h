// SPDX-License-Identifier: MIT
// RewriteDebugger: the greedy rewrite engine, one step at a time, on the window's graph. Candidates
// in the order the driver would apply them (apply / skip the selected one), undo / redo, run to the
// next breakpoint or the fixpoint, a history of versions (double-click one to go back to it), the
// before/after diff of each step, and an optional numerical check of every step through the LibTorch
// executor (its verification badge) in builds that have it.
#pragma once

#include "Services.h"
#include "ir/Graph.h"
#include "rewrite/Pattern.h"
#include "rewrite/Session.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QTextBrowser;

namespace fxlens::views {

class RewriteDebugger : public QWidget {
    Q_OBJECT
public:
    RewriteDebugger(const rewrite::PatternRegistry &registry, Services services = {}, QWidget *parent = nullptr);
    ~RewriteDebugger() override;

    /// The graph to straighten (edited in place; nullptr detaches). Starts a new session.
    void setGraph(ir::Graph *g);
    /// Whether steps can be checked numerically (the executor is built in).
    /// Whether the app gave a step verifier (Services::makeVerifier).
    bool verifyAvailable() const;

    // --- actions (the buttons call these; so do tests and scripts) ---
    void setPreset(const QString &preset);
    /// The registry changed: lists its presets again and starts a new session (from this version).
    void reloadPatterns();
    /// Checks every later step through the executor; false with a reason in status() if it cannot.
    bool setVerify(bool on);
    bool applySelected();
    bool skipSelected();
    bool undo();
    bool redo();
    /// Runs the greedy driver to the next breakpoint (or the fixpoint); returns why it stopped
    /// ("stopped" after requestStop()). It runs in slices, keeping the window live: Run turns into
    /// Stop, and busyChanged() asks the window to hold everything else still meanwhile.
    QString run();
    /// Asks a run in progress to stop after its current slice (StopReason::Stopped).
    void requestStop()
    {
        m_stop = true;
        if (m_session)
            m_session->requestStop();
    }
    bool isRunning() const { return m_running; }
    /// Moves to version v (0 = the graph as loaded or as the session found it).
    bool checkout(int version);
    /// Makes branch `index` of the session current (see rewrite::Session::switchBranch); the
    /// history list shows branches after the versions and switches on double-click.
    bool switchBranch(int index);
    /// Proposes a skipped candidate again; skipped ones are listed (greyed) after the candidates,
    /// and double-clicking one calls this.
    bool unskip(const QString &pattern, const QString &anchor);
    int skippedCount() const;
    /// The progress line of the last run slice ("12 steps of ~40 … ETA …"), "" before any run.
    QString lastProgress() const { return m_lastProgress; }
    int branchCount() const;
    /// kind: "pattern", "node" or "module".
    bool addBreakpoint(const QString &kind, const QString &value);
    /// Breakpoints as (kind, value): "pattern", "node" or "module".
    QList<QPair<QString, QString>> breakpointList() const;
    /// The steps of the history as "pattern<TAB>anchor" (what an autosave records).
    QStringList stepRecord() const;
    /// Applies recorded steps in order from the current version, each the current candidate of that
    /// pattern at that anchor; false at the first that is not one (the steps before it stay applied).
    bool replay(const QStringList &steps);
    void clearBreakpoints();

    // --- state ---
    int candidateCount() const;
    int historySize() const;
    int version() const;
    /// The diff of step `step` (1-based), as plain text: "+ " added, "- " removed, "~ " changed nodes.
    QString diffText(int step) const;
    QString status() const;
    QString preset() const;
    QListWidget *candidateList() const { return m_candidates; }
    QListWidget *historyList() const { return m_history; }

Q_SIGNALS:
    /// Before the graph changes (the window stops readers of it).
    void aboutToEdit();
    /// After the graph changed (the window refreshes its table, canvas and statistics).
    void graphEdited();
    /// A run started (true) or ended (false).
    void busyChanged(bool busy);
    /// Show these nodes, the anchor in its own colour (a candidate or the nodes a step made).
    void highlightRequested(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);

private:
    void restart();
    void connectControls();
    void fillPresets();
    void refresh();
    void afterEdit();
    void showStep(int step);
    void setStatus(const QString &text);
    void setBusy(bool busy);

    const rewrite::PatternRegistry &m_registry;
    Services m_services;
    ir::Graph *m_graph = nullptr;
    std::unique_ptr<rewrite::Session> m_session;
    std::unique_ptr<rewrite::RewriteListener> m_recorder;
    std::vector<rewrite::Match> m_matches;
    std::vector<QString> m_diffs;                    ///< by step (0-based), written when the step was applied
    std::vector<std::vector<QString>> m_branchDiffs; ///< the diffs of each session branch
    std::vector<rewrite::Breakpoint> m_breakpoints;
    bool m_verify = false;
    bool m_running = false;
    bool m_outlineNext = false; ///< an action (Apply, Skip, a checkout) asks refresh() to outline the next candidate
    bool m_stop = false;
    bool m_selectDriverNext = false; ///< refresh() selects the driver's next match (a run stopped at a breakpoint)
    std::function<std::string(const ir::Graph &)> m_verifier;
    QString m_status;

    QComboBox *m_preset = nullptr;
    QCheckBox *m_verifyBox = nullptr;
    QListWidget *m_candidates = nullptr;
    QListWidget *m_history = nullptr;
    QTextBrowser *m_diff = nullptr;
    QLabel *m_statusLabel = nullptr;
    QProgressBar *m_progress = nullptr; ///< shown while a run goes: steps done of done + candidates left
    QString m_lastProgress;
    QComboBox *m_breakKind = nullptr;
    QLineEdit *m_breakValue = nullptr;
    QLabel *m_breakList = nullptr;
    QPushButton *m_apply = nullptr, *m_skip = nullptr, *m_undo = nullptr, *m_redo = nullptr, *m_run = nullptr;
};

} // namespace fxlens::views
