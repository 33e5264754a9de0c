// SPDX-License-Identifier: MIT
// RewriteDebugger: a view of the document's rewrite session (RewriteHistory). Candidates in the
// order the driver would apply them (apply / skip the selected one), undo / redo, run to the next
// breakpoint or the fixpoint with progress and Stop, the history of versions with its branches
// (click one to go there), the before/after diff of each step, breakpoints, the optional
// numerical check of every step (its verification badge) when the app gave a verifier, and Tune's
// progress with Stop; after a tune the history says the measured times (the original, the tuned
// version, each step's Δ) and lists the matches left out for cost.
#pragma once

#include "rewrite/Pattern.h"

#include <QWidget>

#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListView;
class QProgressBar;
class QPushButton;
class QTextBrowser;

namespace fxlens::views {

class GraphDocument;
class RewriteHistory;
class Selection;
class CandidateModel;
class HistoryModel;
class TuneProgressRow;
struct RunProgress;

class RewriteDebugger : public QWidget {
    Q_OBJECT
public:
    explicit RewriteDebugger(GraphDocument &doc, QWidget *parent = nullptr);
    ~RewriteDebugger() override;

    /// Whether the app gave a step verifier (Services::makeVerifier).
    bool verifyAvailable() const;

    // --- actions (the buttons call these; so do tests and scripts) ---
    void setPreset(const QString &preset);
    /// The registry changed: lists its presets again; the history stays, the candidates are planned
    /// again from this version.
    void reloadPatterns();
    /// The candidate picked (or proposed next) is highlighted in the selection.
    void setSelection(Selection *selection);
    /// Checks every later step through the executor; false with a reason in status() if it cannot.
    bool setVerify(bool on);
    bool applySelected();
    bool skipSelected();
    /// Back one version, or, when the last action here was a Skip, takes that skip back.
    bool undo();
    /// Forward one version; like Apply, the view then shows what its step made (the next candidate
    /// is selected in the list and named in the status; showCandidate() goes to it).
    bool redo();
    /// Outlines the candidate selected in the list (after Apply or Redo: the next one) and shows it.
    void showCandidate();
    /// Runs the greedy driver to the next breakpoint (or the fixpoint); returns why it stopped
    /// ("stopped" after requestStop()). It runs in slices, keeping the window live: Run turns into
    /// Stop, and busyChanged() asks the window to hold the editing actions meanwhile. With `steps`
    /// >= 0 it stops after that many (the first steps Run would take).
    QString run(int steps = -1);
    /// Asks a run in progress to stop after its current slice (StopReason::Stopped).
    void requestStop();
    bool isRunning() const;
    /// Moves to version v (0 = the graph as loaded or as the session found it).
    bool checkout(int version);
    /// Makes branch `index` current; the history list shows branches after the versions and
    /// switches on a click.
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
    QList<QPair<QString, QString>> breakpointList() const;
    /// The steps of the history as "pattern<TAB>anchor" (what an autosave records).
    QStringList stepRecord() const;
    /// Applies recorded steps in order from the current version; false at the first that does not
    /// apply (the steps before it stay applied), and status() names it.
    bool replay(const QStringList &steps);
    void clearBreakpoints();

    // --- state ---
    int candidateCount() const;
    int historySize() const;
    int version() const;
    /// The diff of step `step` (1-based), as plain text: "+ " added, "- " removed, "~ " changed nodes.
    QString diffText(int step) const;
    QString status() const;
    /// Why the candidate list is empty, as the panel shows it over the list ("" when it is not).
    QString noCandidatesText() const;
    QString preset() const;
    /// The progress row of a search in progress (Rewrite ▸ Tune; hidden otherwise).
    TuneProgressRow *tuneRow() const { return m_tuneRow; }
    QListView *candidateList() const { return m_candidates; }
    QListView *historyList() const { return m_history; }
    CandidateModel *candidateModel() const { return m_candidateModel; }
    HistoryModel *historyModel() const { return m_historyModel; }

Q_SIGNALS:
    /// A run started (true) or ended (false).
    void busyChanged(bool busy);
    /// Show these nodes, the anchor in its own colour (a candidate or the nodes a step made).
    void highlightRequested(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);
    /// "Compare with Version on Screen" on a history row: that version (branch < 0) or the last
    /// version of branch `branch`, side by side with the version on screen.
    void compareRequested(int version, int branch);

protected:
    bool eventFilter(QObject *watched, QEvent *e) override;

private:
    /// Scrolls the history to the version on screen once its rows are laid out at the list's size.
    void keepCurrentVersionInView();
    bool m_historyFollows = true; ///< the history keeps the version on screen in view until the user scrolls it

    void connectControls();
    void connectSession();
    void fillPresets();
    void refresh();
    void fillHistory();
    void showStep(int step);
    void setStatus(const QString &text);
    void setBusy(bool busy);
    /// While a search runs: everything but its progress row holds still.
    void setTuning(bool tuning);
    void connectTuning();
    void showProgress(const RunProgress &p);
    /// Outlines and goes to the nodes the latest step made (what Apply just did).
    void showApplied();
    /// ". Next: pattern at anchor (…)" for the candidate selected in the list ("" without one).
    QString nextText() const;
    /// After a run from `fromVersion` that left more nodes than `nodesBefore`: by how many, and
    /// which patterns' steps added them ("" when the count did not rise).
    QString growthText(int fromVersion, size_t nodesBefore) const;
    /// checkout(), with the next candidate outlined afterwards or not (Redo shows its step).
    bool moveTo(int version, bool outlineNext);

    GraphDocument &m_doc;
    RewriteHistory &m_h;
    std::vector<rewrite::Match> m_matches;
    bool m_outlineNext = false;      ///< an action (Apply, Skip, a checkout) asks refresh() to outline the next candidate
    bool m_selectDriverNext = false; ///< refresh() selects the driver's next match (a run stopped at a breakpoint)
    QString m_status;
    struct SkipRecord {
        QString pattern, anchor;
        int version = 0;
    };
    std::vector<SkipRecord> m_skips; ///< Skips in order, each at its version: listed in the history, taken back by Undo

    QComboBox *m_preset = nullptr;
    QCheckBox *m_verifyBox = nullptr;
    QListView *m_candidates = nullptr;
    QListView *m_history = nullptr;
    CandidateModel *m_candidateModel = nullptr;
    HistoryModel *m_historyModel = nullptr;
    QTextBrowser *m_diff = nullptr;
    QLabel *m_statusLabel = nullptr;
    QLabel *m_noCandidates = nullptr;   ///< over the candidate list while the preset proposes nothing
    QProgressBar *m_progress = nullptr; ///< shown while a run goes: steps done of done + candidates left
    TuneProgressRow *m_tuneRow = nullptr;
    QString m_lastProgress;
    QComboBox *m_breakKind = nullptr;
    QLineEdit *m_breakValue = nullptr;
    QLabel *m_breakList = nullptr;
    QPushButton *m_apply = nullptr, *m_skip = nullptr, *m_undo = nullptr, *m_redo = nullptr, *m_run = nullptr;
};

} // namespace fxlens::views
