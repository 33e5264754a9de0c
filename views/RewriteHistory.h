// SPDX-License-Identifier: MIT
// RewriteHistory: the document's rewrite session — the greedy engine on the open graph, its
// history of versions (branches kept, never truncated), each step's diff, skips, breakpoints, the
// preset and the optional numerical check of every step. GraphDocument owns it; the rewrite
// debugger is a view of it. Every version has an id that stays the same however the history is
// walked (undo, redo, branch switches), so profiles and other results can be bound to a version.
//
// Changes are announced as values (VersionInfo, StepSummary, RunProgress): views never have to
// read the session while it runs.
#pragma once

#include "Services.h"
#include "ir/Graph.h"
#include "rewrite/Pattern.h"
#include "rewrite/Session.h"
#include "rewrite/Tune.h"
#include "rewrite/VersionList.h"

#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace fxlens::views {

class GraphDocument;

/// Where the history is now.
struct VersionInfo {
    int version = 0;  ///< 0 = the graph as the session found it
    uint64_t id = 0;  ///< the version's id (stable across undo/redo/branch switches)
    int steps = 0;    ///< versions on the current line after version 0
    int branches = 0; ///< lines kept beside the current one
    QString label;    ///< "version 3: merge_splits @ split_2" / "original"
};

/// One step as applied (or replayed).
struct StepSummary {
    int version = 0; ///< the version the step made
    uint64_t id = 0;
    QString pattern, anchor, summary;
    size_t edits = 0;
    bool verified = false;
};

/// A run between slices: steps done so far and a lower bound of those still to come.
struct RunProgress {
    size_t done = 0;
    size_t left = 0;
    bool leftCapped = false; ///< more candidates than were counted
    double seconds = 0;
    double etaSeconds = 0;
    QString text; ///< "12 of ≥40 steps, 1.2 s; about 3 s left"
};

/// What applying a tuned plan did (RewriteHistory::applyPlan).
struct PlanApplied {
    std::vector<std::string> groups; ///< per step applied (versions 1..n of the new line), its match group
    struct Skip {
        std::string pattern, anchor;
        std::string leftOut; ///< the plan's reason: "pattern <name>" or "group <pattern>#<fingerprint>"
        int version = 0;     ///< the version the driver was at when it left the match out
    };
    std::vector<Skip> skips; ///< the matches the plan left out, as skips of the session
};

class RewriteHistory : public QObject {
    Q_OBJECT
public:
    RewriteHistory(GraphDocument &doc, const rewrite::PatternRegistry &registry, Services services);
    ~RewriteHistory() override;

    /// Starts a session on the document's graph (nullptr: none, e.g. while the graph is replaced).
    void attach(ir::Graph *g);
    bool live() const { return m_session != nullptr; }

    // --- the session's settings ---
    QString preset() const { return m_preset; }
    /// Selects the patterns the engine tries; the history stays (undo, branches, verified steps) and
    /// the candidates are planned again from this version.
    void setPreset(const QString &preset);
    /// The registry changed (a pattern added or replaced): as setPreset, the history stays.
    void reloadPatterns();
    /// A new file is about to be attached: what named the previous file's nodes goes (node and
    /// module breakpoints; pattern breakpoints stay, as the patterns do).
    void forgetFile();
    bool verifyAvailable() const { return bool(m_services.makeVerifier); }
    bool verifying() const { return m_verify; }
    /// Checks every later step numerically; false with why in `error` when it cannot.
    bool setVerify(bool on, QString *error);
    bool addBreakpoint(const QString &kind, const QString &value, QString *error);
    void clearBreakpoints();
    /// (kind, value): "pattern", "node" or "module".
    QList<QPair<QString, QString>> breakpointList() const;

    // --- reading ---
    /// Candidates in the order a fresh session at this version would apply them.
    std::vector<rewrite::Match> stableCandidates(size_t limit);
    /// Candidates in the order the greedy driver would take them from where it is.
    std::vector<rewrite::Match> driverCandidates(size_t limit);
    std::vector<std::pair<std::string, std::string>> skipped() const;
    const std::vector<rewrite::Step> &steps() const;
    const std::vector<rewrite::Branch> &branches() const;
    int version() const { return m_session ? int(m_session->version()) : 0; }
    int historySize() const { return m_session ? int(m_session->history().size()) : 0; }
    /// The id of version `v` of the current line (0 .. historySize()); 0 for a bad v.
    uint64_t versionId(int v) const;
    uint64_t currentId() const { return versionId(version()); }
    VersionInfo info() const;
    /// "original", "step 12 (merge_splits @ split_2)".
    QString versionLabel(int v) const;
    /// The diff of step `step` (1-based) as the step left the nodes: "+ ", "- ", "~ " lines.
    QString diffText(int step) const;
    /// "pattern<TAB>anchor" per step of the current line (what an autosave records).
    QStringList stepRecord() const;
    QString lastError() const { return m_lastError; }
    /// Why the preset proposes nothing here ("" when it has candidates or there is no graph):
    /// no pattern for this IR, no anchor node in the graph, or anchors that do not match now.
    QString noCandidatesReason();
    bool isRunning() const { return m_running; }

    // --- editing (each goes through the document: edit bracket, match counts, modified) ---
    bool apply(const rewrite::Match &m);
    bool skip(const rewrite::Match &m);
    bool unskip(const QString &pattern, const QString &anchor);
    bool checkout(int version);
    bool switchBranch(int index);
    /// Applies recorded steps ("pattern<TAB>anchor") from this version, each at its anchor by name;
    /// false at the first that does not apply, with lastError() naming it (step, pattern, anchor, why).
    bool replay(const QStringList &steps);
    /// The patterns of the preset as they are now (what the engine tries, what Tune searches).
    std::vector<const rewrite::Pattern *> presetPatterns() const;
    /// Goes to version 0 and applies a tuned plan (rewrite::replayPlan's stages with `patterns`)
    /// through the session: the matches it leaves out become skips, the line left is kept as a
    /// branch, earlier skips are proposed again. False (nothing done) while a run goes.
    bool applyPlan(const rewrite::TunePlan &plan, const std::vector<const rewrite::Pattern *> &patterns, PlanApplied &out);
    /// The greedy driver to the next breakpoint or the fixpoint, in slices with events between
    /// them (runProgress, Stop); returns the run's result (seconds summed, rollbacks of every slice).
    /// With a limit it stops after that many steps (StopReason::StepLimit): Run's first steps.
    rewrite::RunResult run(size_t limit = SIZE_MAX);
    void requestStop();
    /// Copies of the graph at each of `versions` (rewrite::copyVersions; the history ends where it
    /// was, so views keep their nodes): what profiling and comparing versions work on. Empty with
    /// `error` for a version not in the history or while a run goes.
    std::vector<rewrite::VersionCopy> copyVersions(const std::vector<int> &versions, QString *error);
    /// A copy of the last version of branch `index` (what comparing with a branch works on): the
    /// history switches to the branch and back to the version it was at, so nothing is lost, but the
    /// branch is listed last afterwards (or, when the line left had no steps after the fork, its
    /// steps follow the current version as redo steps). Empty with `error` for a bad index or while
    /// a run goes.
    std::vector<rewrite::VersionCopy> copyBranchTip(int index, QString *error);

Q_SIGNALS:
    /// The version on screen changed (a step, undo/redo, a branch switch, a replay, a run).
    void versionChanged(const fxlens::views::VersionInfo &info);
    void stepApplied(const fxlens::views::StepSummary &step);
    /// Candidates changed without a new version (skip, unskip, preset, breakpoints, patterns).
    void candidatesChanged();
    void runProgress(const fxlens::views::RunProgress &progress);
    void busyChanged(bool busy);

private:
    class Recorder;
    void restart();
    /// The session takes the preset's patterns as they are now and keeps its history.
    void replan();
    void announce();

    GraphDocument &m_doc;
    const rewrite::PatternRegistry &m_registry;
    Services m_services;
    ir::Graph *m_graph = nullptr;
    std::unique_ptr<rewrite::Session> m_session;
    std::unique_ptr<Recorder> m_recorder;
    /// Per step of the current line (parallel to Session::history) and per branch.
    struct StepInfo {
        uint64_t id = 0;
        QString diff;
    };
    std::vector<StepInfo> m_infos;
    std::vector<std::vector<StepInfo>> m_branchInfos;
    uint64_t m_baseId = 0; ///< the id of the version the session started from
    uint64_t m_nextId = 1;
    QString m_preset = QStringLiteral("all");
    std::vector<rewrite::Breakpoint> m_breakpoints;
    bool m_verify = false;
    StepVerifier m_verifier;
    bool m_running = false;
    QString m_lastError;
};

} // namespace fxlens::views
