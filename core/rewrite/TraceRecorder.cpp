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
    }
    return "?";
}

void TraceRecorder::notifyPatternBegin(const std::string &pattern, Node *anchor)
{
    m_events.push_back({TraceEvent::Kind::PatternBegin, m_step, pattern, anchor->name(), {}, false});
}

void TraceRecorder::notifyPatternEnd(const std::string &pattern, bool applied)
{
    m_events.push_back({TraceEvent::Kind::PatternEnd, m_step, pattern, {}, {}, applied});
    if (applied)
        ++m_step;
}

void TraceRecorder::notifyMatchFound(const Match &m)
{
    m_events.push_back({TraceEvent::Kind::MatchFound, m_step, m.pattern, m.anchor ? m.anchor->name() : "", m.summary, false});
}

void TraceRecorder::notifyMatchFailure(const std::string &pattern, Node *anchor, const std::string &reason)
{
    if (m_failures)
        m_events.push_back({TraceEvent::Kind::MatchFailed, m_step, pattern, anchor->name(), reason, false});
}

void TraceRecorder::notifyNodeInserted(Node *n) { m_events.push_back({TraceEvent::Kind::Inserted, m_step, {}, n->name(), {}, false}); }

void TraceRecorder::notifyNodeErased(Node *n) { m_events.push_back({TraceEvent::Kind::Erased, m_step, {}, n->name(), {}, false}); }

void TraceRecorder::notifyNodeReplaced(Node *from, Node *to)
{
    m_events.push_back({TraceEvent::Kind::Replaced, m_step, {}, from->name(), to->name(), false});
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
        steps.push_back({{"step", i + 1}, {"pattern", h[i].pattern}, {"anchor", h[i].anchor}, {"summary", h[i].summary},
                         {"edits", h[i].edits.size()}});
    json events = json::array();
    for (const auto &e : m_events) {
        json j = {{"kind", traceEventKindName(e.kind)}, {"step", e.step}};
        if (!e.pattern.empty())
            j["pattern"] = e.pattern;
        if (!e.node.empty())
            j["node"] = e.node;
        switch (e.kind) {
        case TraceEvent::Kind::Replaced: j["by"] = e.other; break;
        case TraceEvent::Kind::MatchFailed: j["reason"] = e.other; break;
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
                  {"rewrites_by_pattern", counts}}},
                {"steps", steps},
                {"events", events}};
    return out.dump(1) + "\n";
}

} // namespace fxlens::rewrite
