// SPDX-License-Identifier: MIT
// The event log of a rewrite run, as JSON.
#include "rewrite/TraceRecorder.h"

#include <nlohmann/json.hpp>

namespace fxlens::rewrite {

const char *traceEventKindName(TraceEvent::Kind k)
{
    switch (k) {
    case TraceEvent::Kind::PatternBegin: return "pattern_begin";
    case TraceEvent::Kind::PatternEnd: return "pattern_end";
    case TraceEvent::Kind::MatchFound: return "match_found";
    case TraceEvent::Kind::MatchFailed: return "match_failed";
    case TraceEvent::Kind::Inserted: return "node_inserted";
    case TraceEvent::Kind::Erased: return "node_erased";
    case TraceEvent::Kind::Replaced: return "node_replaced";
    case TraceEvent::Kind::Modified: return "node_modified";
    case TraceEvent::Kind::RolledBack: return "rolled_back";
    }
    return "?";
}

void TraceRecorder::notifyPatternBegin(const std::string &pattern, Node *anchor)
{
    m_pendingBegin = TraceEvent{TraceEvent::Kind::PatternBegin, m_step, pattern, anchor->name(), {}, {}, false};
    m_beginWritten = false;
}

void TraceRecorder::writeBegin()
{
    if (m_pendingBegin) {
        m_events.push_back(std::move(*m_pendingBegin));
        m_pendingBegin.reset();
        m_beginWritten = true;
    }
}

void TraceRecorder::notifyPatternEnd(const std::string &pattern, bool applied)
{
    m_pendingBegin.reset();
    if (m_beginWritten)
        m_events.push_back({TraceEvent::Kind::PatternEnd, m_step, pattern, {}, {}, {}, applied});
    m_beginWritten = false;
    if (applied)
        ++m_step;
}

void TraceRecorder::notifyMatchFound(const Match &m)
{
    writeBegin();
    m_events.push_back({TraceEvent::Kind::MatchFound, m_step, m.pattern, m.anchor ? m.anchor->name() : "", m.summary, {}, false});
}

void TraceRecorder::notifyMatchFailure(const std::string &pattern, Node *anchor, const MatchFailure &why)
{
    if (!m_failures)
        return;
    writeBegin();
    m_events.push_back({TraceEvent::Kind::MatchFailed, m_step, pattern, anchor->name(), why.toString(), why, false});
}

void TraceRecorder::notifyNodeModified(Node *n) { m_events.push_back({TraceEvent::Kind::Modified, m_step, {}, n->name(), {}, {}, false}); }

void TraceRecorder::notifyRolledBack(const std::string &pattern, Node *anchor, const std::string &reason)
{
    m_events.push_back({TraceEvent::Kind::RolledBack, m_step, pattern, anchor->name(), reason, {}, false});
}

void TraceRecorder::notifyNodeInserted(Node *n) { m_events.push_back({TraceEvent::Kind::Inserted, m_step, {}, n->name(), {}, {}, false}); }

void TraceRecorder::notifyNodeErased(Node *n) { m_events.push_back({TraceEvent::Kind::Erased, m_step, {}, n->name(), {}, {}, false}); }

void TraceRecorder::notifyNodeReplaced(Node *from, Node *to)
{
    m_events.push_back({TraceEvent::Kind::Replaced, m_step, {}, from->name(), to->name(), {}, false});
}

std::string TraceRecorder::toJson(const Session &s, const RunResult &run, const std::string &graphName) const
{
    using nlohmann::json;
    json counts = json::object();
    for (const auto &[p, c] : run.rewritesByPattern)
        counts[p] = c;
    json steps = json::array();
    const auto &h = s.history();
    for (size_t i = 0; i < h.size(); ++i)
        steps.push_back(
            {{"step", i + 1}, {"pattern", h[i].pattern}, {"anchor", h[i].anchor}, {"summary", h[i].summary}, {"edits", h[i].edits.size()}});
    json records = json::array();
    for (const auto &rec : run.records)
        records.push_back({{"pattern", rec.pattern}, {"anchor", rec.anchor}, {"edits", rec.edits}, {"seconds", rec.seconds}});
    json rollbacks = json::array();
    for (const auto &rb : run.rollbacks)
        rollbacks.push_back({{"pattern", rb.pattern}, {"anchor", rb.anchor}, {"reason", rb.reason}});
    json events = json::array();
    for (const auto &e : m_events) {
        json j = {{"kind", traceEventKindName(e.kind)}, {"step", e.step}};
        if (!e.pattern.empty())
            j["pattern"] = e.pattern;
        if (!e.node.empty())
            j["node"] = e.node;
        switch (e.kind) {
        case TraceEvent::Kind::Replaced: j["by"] = e.other; break;
        case TraceEvent::Kind::MatchFailed:
            j["reason"] = e.other;
            j["failure"] = {
                {"element", e.failure.element}, {"node", e.failure.node}, {"expected", e.failure.expected}, {"found", e.failure.found}};
            break;
        case TraceEvent::Kind::RolledBack: j["reason"] = e.other; break;
        case TraceEvent::Kind::MatchFound: j["summary"] = e.other; break;
        case TraceEvent::Kind::PatternEnd: j["applied"] = e.applied; break;
        default: break;
        }
        events.push_back(std::move(j));
    }
    json out = {{"format", "fxlens-trace"},
                {"version", 1},
                {"graph", graphName},
                {"run",
                 {{"stop_reason", stopReasonName(run.reason)},
                  {"steps", run.steps},
                  {"attempts", run.attempts},
                  {"seconds", run.seconds},
                  {"rewrites_by_pattern", counts},
                  {"records", records},
                  {"rollbacks", rollbacks}}},
                {"steps", steps},
                {"events", events}};
    return out.dump(1) + "\n";
}

} // namespace fxlens::rewrite
