// SPDX-License-Identifier: MIT
// Session: the greedy driver and the stepping API (apply / skip / undo / redo / breakpoints / run), a
// facade over the parts it drives: the patterns and the rule for a match (rewrite/Matcher.h), the
// anchor index (rewrite/AnchorIndex.h) and the history (rewrite/History.h).
#pragma once

#include "rewrite/AnchorIndex.h"
#include "rewrite/History.h"
#include "rewrite/Matcher.h"
#include "rewrite/Mutation.h"
#include "rewrite/Pattern.h"
#include "util/Assert.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fxlens::rewrite {

struct Breakpoint {
    enum class Kind { Pattern, Node, Module };
    Kind kind;
    std::string value;
};

/// Why run() returned: a fixpoint (nothing left to apply), a limit, a breakpoint, a stop request
/// (Session::requestStop, e.g. the debugger's Stop button), or a rolled-back step when
/// SessionConfig::stopOnRollback is set.
enum class StopReason { Fixpoint, StepLimit, TimeLimit, Breakpoint, Stopped, RolledBack };
const char *stopReasonName(StopReason r);

/// One step of a run (as egg's iterations): what was applied where, its size and its time.
struct StepRecord {
    std::string pattern;
    std::string anchor;
    size_t edits = 0;
    double seconds = 0; ///< matching, rewriting and checking this step
};

/// A step a check refused (rolled back; the anchor is skipped from then on).
struct Rollback {
    std::string pattern;
    std::string anchor;
    std::string reason;
};

struct RunResult {
    StopReason reason = StopReason::Fixpoint;
    size_t steps = 0;
    std::map<std::string, size_t> rewritesByPattern; ///< real rewrites, not attempts
    size_t attempts = 0;
    double seconds = 0;
    std::string message;             ///< Breakpoint / RolledBack: which pattern at which node
    std::vector<StepRecord> records; ///< the steps this run applied, in order
    std::vector<Rollback> rollbacks; ///< the steps this run rolled back, in order
};

struct SessionConfig {
    size_t maxSteps = SIZE_MAX;
    double maxSeconds = 1e9;
    /// After each rewrite: lint, value meta on new nodes, and "applied <=> changed"; a failing step is
    /// rolled back and reported by pattern name.
    bool checked = kExpensiveChecks;
    /// Optional semantic check after each rewrite (the executor's: run the new version, compare its
    /// outputs with the original's). Returns "" when the version is fine, else why; a failing step is
    /// rolled back like a checked-mode failure.
    std::function<std::string(const Graph &)> verify;
    /// run() returns with StopReason::RolledBack after a step is rolled back (instead of going on
    /// with the next candidate).
    bool stopOnRollback = false;
    /// The scheduler's seam (rewrite/Tune.h): asked before the driver applies a match; false leaves
    /// the match out, as Session::skip does. Unset: every match is applied.
    std::function<bool(const Pattern &, const Match &)> decide;
};

class Session : public MatchContext, private ir::GraphObserver {
public:
    Session(Graph &g, std::vector<const Pattern *> patterns, SessionConfig cfg = {});
    ~Session() override;

    Graph &graph() { return m_g; }
    /// Replaces the patterns (a preset or the registry changed) and keeps everything else: the
    /// history with its branches and verified steps, skips of patterns still there, breakpoints.
    /// The driver plans again from the version it is at: phase 0, every anchor swept once more.
    void setPatterns(std::vector<const Pattern *> patterns);
    void addListener(RewriteListener *l) { m_listeners.push_back(l); }

    /// Current candidate matches, in the order the greedy driver would apply them (conflicting ones
    /// included: applying one may invalidate others). At most `limit`.
    std::vector<Match> candidates(size_t limit = SIZE_MAX);
    /// Every pattern's matches in an order that depends on the graph version alone (not on the
    /// worklist, which depends on where the session has been): the order a fresh session on this
    /// version would apply them in — phase by phase, anchors in reverse program order (the first
    /// sweep's), an anchor's patterns by benefit; skipped ones left out. What the debugger lists:
    /// findMatches (rewrite/Matcher.h) on the session's index, less the skips.
    std::vector<Match> stableCandidates(size_t limit = SIZE_MAX);
    /// Applies a match (as returned by candidates() on the current graph). False if it no longer
    /// matches or the checked-mode check failed (then the graph is unchanged; see lastError()).
    bool apply(const Match &m);
    /// Marks (pattern, anchor) so that neither the driver nor candidates() proposes it again.
    void skip(const Match &m);
    /// The (pattern, anchor node) pairs skipped (by skip(), or refused by a check), anchors alive now,
    /// in pattern-then-program order.
    std::vector<std::pair<std::string, std::string>> skipped() const;
    /// Proposes (pattern, anchor) again; false when it was not skipped.
    bool unskip(const std::string &pattern, const std::string &anchor);
    bool undo() { return m_history.undo(); }
    bool redo() { return m_history.redo(); }
    /// Moves to version v (0 = original, history().size() = latest) by undo/redo.
    bool checkout(size_t version) { return m_history.checkout(version); }
    size_t version() const { return m_history.version(); }
    const std::vector<Step> &history() const { return m_history.steps(); }
    /// Lines that left the history (a step applied after going back keeps the steps it replaced).
    const std::vector<Branch> &branches() const { return m_history.branches(); }
    /// Makes branch `index` the current line and moves to its last version; the current line's steps
    /// after the branch's fork become a branch in its place. False for a bad index.
    bool switchBranch(size_t index) { return m_history.switchBranch(index); }

    void addBreakpoint(Breakpoint b) { m_breakpoints.push_back(std::move(b)); }
    /// Sets (or, with nullptr, removes) the semantic check of later steps (SessionConfig::verify).
    void setVerifier(std::function<std::string(const Graph &)> verify) { m_cfg.verify = std::move(verify); }
    /// Sets (or, with nullptr, removes) the scheduler's seam for later steps (SessionConfig::decide):
    /// how a tuned plan is applied through a session that has a history (the app's Tune).
    void setDecide(std::function<bool(const Pattern &, const Match &)> decide) { m_cfg.decide = std::move(decide); }
    /// Turns checked mode (SessionConfig::checked) on or off for later steps.
    void setChecked(bool on) { m_cfg.checked = on; }
    /// Steps one run() may apply before it returns with StopReason::StepLimit (run() continues).
    void setMaxSteps(size_t n) { m_cfg.maxSteps = n; }
    void clearBreakpoints() { m_breakpoints.clear(); }
    /// Greedy worklist driver to a fixpoint (or a limit / breakpoint); continues where it stopped.
    RunResult run();
    /// Asks a run() in progress (on another thread) to return with StopReason::Stopped after the
    /// step it is on; cleared when run() returns.
    void requestStop() { m_stopRequested.store(true); }
    /// Why the last refused apply() / step was refused (RunResult::rollbacks lists a run's).
    const std::string &lastError() const { return m_lastError; }

    /// Index (op, target) -> live nodes, kept current under every edit.
    const std::unordered_set<Node *> &nodesWithKey(const AnchorKey &k) const override { return m_index.nodesWithKey(k); }
    uint64_t editCount() const override { return m_edits; }

private:
    void notifyNodeInserted(Node *n) override;
    void notifyNodeErased(Node *n) override;
    void notifyNodeChanged(Node *n) override;

    bool tryPatterns(Node *n, RunResult *stats, bool respectBreakpoints, bool &hitBreakpoint);
    bool applyMatch(const Pattern &p, const Match &m);
    bool breaksAt(const Pattern &p, const Match &m) const;
    void enqueue(Node *n);
    /// After undo or redo of a step: its nodes and their neighbours are visited again; listeners hear.
    void moved(const Step &s, bool undone);
    std::string checkStep(const Step &s) const;
    /// The alias analysis of this version; nullptr when nothing writes in place (see matchAt).
    const AliasInfo *aliasInfo();
    /// The engine's rule (matchAt) on the session's index.
    bool matches(const Pattern &p, Node *n, Match &m, MatchFailure &why);
    void trackMutation(Node *n);
    /// `n` no longer writes in place (changed or erased): refused anchors are visited again.
    void forgetMutator(Node *n);
    /// Starts the next phase: every live node is swept again. False when there is none.
    bool nextPhase();

    Graph &m_g;
    /// Graph inputs that outputs alias when the session starts: a later step may alias them again.
    std::vector<std::string> m_startAliases; ///< aliasKey of each
    PatternSet m_patterns;
    SessionConfig m_cfg;
    std::vector<RewriteListener *> m_listeners;
    AnchorIndex m_index;
    History m_history;
    std::vector<Node *> m_sweep;  ///< first sweep, popped from the back (reverse program order)
    std::deque<Node *> m_revisit; ///< nodes touched by rewrites (or undo/redo), first in first out
    bool m_sweeping = true;
    int m_phase = 0;
    uint64_t m_edits = 0;          ///< from nextEditStamp(), the clock shared by all sessions
    std::vector<uint8_t> m_queued; ///< by node id
    std::vector<Breakpoint> m_breakpoints;
    std::string m_lastError;
    bool m_resumeFromBreakpoint = false;
    std::atomic<bool> m_stopRequested{false};
    /// The rollbacks of the run in progress (applyMatch records them there).
    std::vector<Rollback> *m_rollbacks = nullptr;
    /// Calls that write in place, kept current under every edit; the alias analysis runs only when
    /// there is one, once per graph version.
    std::unordered_set<Node *> m_mutators;
    std::unique_ptr<AliasInfo> m_alias;
    uint64_t m_aliasEdits = 0;
    /// Anchors refused because of mutation: visited again when a mutation goes away.
    std::unordered_set<Node *> m_refusedForMutation;
};

} // namespace fxlens::rewrite
