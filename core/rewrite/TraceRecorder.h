// SPDX-License-Identifier: MIT
// TraceRecorder: keeps the full event log of a rewrite run (every pattern attempt, match, failure
// with its reason, and every node inserted / erased / replaced), and writes it as JSON together
// with the session's step history. `fxlens-cli optimize --trace` and the GUI's event log use it.
#pragma once

#include "rewrite/Session.h"

#include <optional>
#include <string>
#include <vector>

namespace fxlens::rewrite {

struct TraceEvent {
    enum class Kind : uint8_t { PatternBegin, PatternEnd, MatchFound, MatchFailed, Inserted, Erased, Replaced, Modified, RolledBack };
    Kind kind;
    int64_t step;         ///< the step this event belongs to (1-based: the step being attempted)
    std::string pattern;  ///< for pattern/match events
    std::string node;     ///< the anchor, or the node inserted/erased, or the replaced node
    std::string other;    ///< Replaced: the replacement; MatchFailed / RolledBack: the reason; MatchFound: the summary
    MatchFailure failure; ///< MatchFailed: the structured reason
    bool applied = false; ///< PatternEnd
};

const char *traceEventKindName(TraceEvent::Kind k);

class TraceRecorder : public RewriteListener {
public:
    /// `failures`: also record failed attempts (the bulk of a large run's log).
    explicit TraceRecorder(bool failures = true) : m_failures(failures) {}

    void notifyPatternBegin(const std::string &pattern, Node *anchor) override;
    void notifyPatternEnd(const std::string &pattern, bool applied) override;
    void notifyMatchFound(const Match &m) override;
    void notifyMatchFailure(const std::string &pattern, Node *anchor, const MatchFailure &why) override;
    void notifyNodeInserted(Node *n) override;
    void notifyNodeErased(Node *n) override;
    void notifyNodeReplaced(Node *from, Node *to) override;
    void notifyNodeModified(Node *n) override;
    void notifyRolledBack(const std::string &pattern, Node *anchor, const std::string &reason) override;

    const std::vector<TraceEvent> &events() const { return m_events; }
    void clear() { m_events.clear(); }

    /// {"format": "fxlens-trace", "version": 1, "graph": ..., "run": {...}, "steps": [...], "events": [...]}
    std::string toJson(const Session &s, const RunResult &run, const std::string &graphName) const;

private:
    bool m_failures;
    int64_t m_step = 1;
    /// The begin of the attempt in progress, written when the attempt is (a failed attempt is left
    /// out when failures are not recorded).
    std::optional<TraceEvent> m_pendingBegin;
    bool m_beginWritten = false;
    void writeBegin();
    std::vector<TraceEvent> m_events;
};

} // namespace fxlens::rewrite
