// SPDX-License-Identifier: MIT
// Greedy worklist driver and stepping API.
#include "rewrite/Session.h"

#include <algorithm>
#include <atomic>

namespace fxlens::rewrite {

const char *stopReasonName(StopReason r)
{
    switch (r) {
    case StopReason::Fixpoint: return "fixpoint";
    case StopReason::StepLimit: return "step limit";
    case StopReason::TimeLimit: return "time limit";
    case StopReason::Breakpoint: return "breakpoint";
    case StopReason::Stopped: return "stopped";
    case StopReason::RolledBack: return "rolled back";
    }
    return "?";
}

/// A graph input by identity across steps: a placeholder by name, a get_attr by the attribute it reads
/// (an erased get_attr and a later one of the same attribute are one storage).
static std::string aliasKey(const Node *n) { return n->op() == ir::OpKind::GetAttr ? "attr:" + n->target() : "input:" + n->name(); }

Session::Session(Graph &g, std::vector<const Pattern *> patterns, SessionConfig cfg)
    : m_g(g), m_patterns(patterns, g), m_cfg(std::move(cfg)), m_index(g),
      m_history(g, [this](const Step &s, bool undone) { moved(s, undone); }), m_edits(nextEditStamp())
{
    for (const Node *a : outputAliases(g))
        if (a)
            m_startAliases.push_back(aliasKey(a));
    for (const AnchorKey &k : m_patterns.keys())
        m_index.addKey(k);
    // The first sweep visits every anchor once, in reverse program order (consumers before producers,
    // as Inductor's pattern passes do); nodes touched by rewrites are re-visited afterwards, in the
    // order they were touched, each once however often it was touched meanwhile.
    for (Node *n = g.first(); n; n = n->next()) {
        m_index.update(n);
        trackMutation(n);
        enqueue(n);
    }
    m_sweeping = false;
    g.addObserver(this);
}

Session::~Session() { m_g.removeObserver(this); }

void Session::setPatterns(std::vector<const Pattern *> patterns)
{
    m_patterns = PatternSet(patterns, m_g);
    m_history.rebindSkips([this](const std::string &name) { return m_patterns.named(name); });
    m_index.clear();
    for (const AnchorKey &k : m_patterns.keys())
        m_index.addKey(k);
    m_sweep.clear();
    m_revisit.clear();
    m_queued.clear();
    m_refusedForMutation.clear();
    m_phase = 0;
    m_resumeFromBreakpoint = false;
    m_sweeping = true; // as the constructor does: every anchor once, in reverse program order
    for (Node *n = m_g.first(); n; n = n->next()) {
        m_index.update(n);
        enqueue(n);
    }
    m_sweeping = false;
}

void Session::trackMutation(Node *n)
{
    if (!n->isErased() && (mutatesInput(n) || observesLayout(n)))
        m_mutators.insert(n);
    else
        forgetMutator(n);
}

void Session::forgetMutator(Node *n)
{
    if (!m_mutators.erase(n))
        return;
    // Matches refused because of this write may be safe now: visited again, in node order (the
    // set's own order would make the driver's order depend on addresses).
    std::vector<Node *> again(m_refusedForMutation.begin(), m_refusedForMutation.end());
    std::sort(again.begin(), again.end(), [](const Node *a, const Node *b) { return a->id() < b->id(); });
    m_refusedForMutation.clear();
    for (Node *r : again)
        enqueue(r);
}

const AliasInfo *Session::aliasInfo()
{
    if (m_mutators.empty())
        return nullptr;
    if (!m_alias || m_aliasEdits != m_edits) {
        m_alias = std::make_unique<AliasInfo>(m_g);
        m_aliasEdits = m_edits;
    }
    return m_alias.get();
}

bool Session::matches(const Pattern &p, Node *n, Match &m, MatchFailure &why)
{
    const AliasSource alias = [this] { return aliasInfo(); };
    const Verdict v = matchAt(p, n, *this, alias, m, why);
    if (v == Verdict::Unsafe)
        m_refusedForMutation.insert(n); // visited again when a write in place goes away
    return v == Verdict::Match;
}

void Session::notifyNodeInserted(Node *n)
{
    m_edits = nextEditStamp();
    m_index.update(n);
    trackMutation(n);
    enqueue(n);
}

void Session::notifyNodeErased(Node *n)
{
    m_edits = nextEditStamp();
    forgetMutator(n);
    m_index.remove(n); // called before the node is unlinked
}

void Session::notifyNodeChanged(Node *n)
{
    m_edits = nextEditStamp();
    m_index.update(n); // the target may have changed
    trackMutation(n);
    enqueue(n);
}

void Session::enqueue(Node *n)
{
    if (!n || n->isErased())
        return;
    if (m_queued.size() <= n->id())
        m_queued.resize(size_t(m_g.idBound()) + 1024, 0);
    if (m_queued[n->id()])
        return;
    // Only nodes some pattern is anchored on are worth visiting.
    if (m_patterns.at(*n).empty())
        return;
    m_queued[n->id()] = 1;
    if (m_sweeping)
        m_sweep.push_back(n);
    else
        m_revisit.push_back(n);
}

std::vector<Match> Session::candidates(size_t limit)
{
    std::vector<Match> out;
    if (m_sweep.empty() && m_revisit.empty())
        nextPhase(); // what the driver would do next
    std::vector<Node *> order(m_sweep.rbegin(), m_sweep.rend());
    order.insert(order.end(), m_revisit.begin(), m_revisit.end());
    for (Node *n : order) {
        if (n->isErased())
            continue;
        for (const Pattern *p : m_patterns.at(*n)) {
            if (p->phase > m_phase)
                continue;
            Match m;
            MatchFailure why;
            if (!m_history.isSkipped(*p, *n) && matches(*p, n, m, why)) {
                out.push_back(std::move(m));
                if (out.size() >= limit)
                    return out;
            }
        }
    }
    return out;
}

std::vector<Match> Session::stableCandidates(size_t limit)
{
    // What a fresh session on this version would list, on this session's index, less the skips.
    const AliasSource alias = [this] { return aliasInfo(); };
    return findMatches(m_g, m_patterns, *this, alias, limit, [this](const Pattern &p, const Node &n) { return m_history.isSkipped(p, n); });
}

bool Session::breaksAt(const Pattern &p, const Match &m) const
{
    for (const auto &b : m_breakpoints) {
        switch (b.kind) {
        case Breakpoint::Kind::Pattern:
            if (p.name == b.value)
                return true;
            break;
        case Breakpoint::Kind::Node:
            for (Node *n : m.nodes)
                if (n->name() == b.value)
                    return true;
            break;
        case Breakpoint::Kind::Module: {
            const std::string &path = m.anchor->meta().modulePath();
            if (path == b.value || path.rfind(b.value + ".", 0) == 0)
                return true;
            break;
        }
        }
    }
    return false;
}

std::string Session::checkStep(const Step &s) const
{
    // The step's nodes and their neighbours: lint in time proportional to the step.
    std::vector<const Node *> around;
    for (const auto &e : s.edits) {
        around.push_back(e.node);
        for (const Node *in : e.node->inputNodes())
            around.push_back(in);
        for (const Node *u : e.node->users())
            around.push_back(u);
    }
    auto errors = m_g.lintNodes(around);
    if (!errors.empty())
        return "graph fails lint: " + errors.front().toString();
    for (const auto &e : s.edits)
        if (e.kind == Edit::Kind::Insert && !e.node->isErased() && e.node->op() != ir::OpKind::Output &&
            e.node->meta().val.kind == ir::ValueMeta::Kind::Unknown)
            return "new node '" + e.node->name() + "' has no shape/dtype";
    return {};
}

/// A step must not make a graph output alias a graph input that no output aliased before, in the
/// previous version or when the session started (a caller that writes to the output would write to
/// its input): such an output gets its own copy, a clone, as a part of the same step. An alias the
/// original graph had is kept: a stack that a step put between an input and an output and a later
/// step turned back into a view returns to the original's aliasing, not to a new one.
static void keepOutputsFresh(Graph &g, Rewriter &rw, const std::vector<std::string> &before)
{
    Node *out = g.outputNode();
    if (!out)
        return;
    for (Node *v : out->inputNodes()) {
        const Node *a = aliasedInput(v);
        if (!a || std::find(before.begin(), before.end(), aliasKey(a)) != before.end())
            continue;
        const bool aten = g.irLevel == "aten";
        Node *c =
            rw.create(ir::OpKind::CallFunction, aten ? "aten.clone.default" : "torch.clone", {Argument::node(v)}, {}, "clone", out, v);
        c->meta().val = v->meta().val;
        auto args = out->args();
        for (auto &x : args)
            x = x.withNodeReplaced(v, c);
        auto kwargs = out->kwargs();
        rw.setInputs(out, std::move(args), std::move(kwargs));
    }
}

bool Session::applyMatch(const Pattern &p, const Match &m)
{
    FXLENS_ASSERT(m.anchor && !m.anchor->isErased(), "a step needs a live anchor");
    Rewriter rw(m_g);
    rw.setListeners(m_listeners);
    rw.setContext(p.name, int64_t(m_history.version()) + 1);
    auto aliasesBefore = m_startAliases;
    for (const Node *a : outputAliases(m_g))
        if (a)
            aliasesBefore.push_back(aliasKey(a));
    p.rewrite(m, rw);
    if (rw.changed()) {
        keepOutputsFresh(m_g, rw, aliasesBefore);
        // A call whose input the step replaced may read other strides: a strict `view` there (or
        // after it) could fail where it worked, so it becomes a reshape (same values).
        const std::vector<Edit> edits = rw.edits(); // a copy: relaxing appends edits
        relaxViewsAfterStep(rw, edits);
    }
    Step step{p.name, m.anchor->name(), m.summary, rw.takeEdits()};
    auto touched = rw.takeTouched();
    std::string problem;
    if (!rw.failure().empty())
        problem = "the rewrite failed: " + rw.failure();
    else if (step.edits.empty())
        problem = "pattern '" + p.name + "' matched at '" + step.anchor + "' but changed nothing";
    else if (m_cfg.checked)
        problem = checkStep(step);
    if (problem.empty() && m_cfg.verify) {
        problem = m_cfg.verify(m_g);
        step.verified = problem.empty();
    }
    if (!problem.empty()) {
        Rewriter::undo(m_g, step.edits);
        m_history.skip(p, *m.anchor);
        m_lastError = "pattern '" + p.name + "' at '" + step.anchor + "' rolled back: " + problem;
        if (m_rollbacks)
            m_rollbacks->push_back({p.name, step.anchor, problem});
        for (auto *l : m_listeners) {
            l->notifyRolledBack(p.name, m.anchor, problem);
            l->notifyPatternEnd(p.name, false);
        }
        return false;
    }
    m_history.record(std::move(step)); // after going back, the steps it replaces are kept as a branch
    // Patterns look a couple of edges around their anchor: re-visit the neighbourhood of every edit.
    for (Node *t : touched) {
        if (t->isErased())
            continue;
        enqueue(t);
        for (Node *u : t->users()) {
            enqueue(u);
            for (Node *uu : u->users())
                enqueue(uu);
        }
        for (Node *in : t->inputNodes())
            enqueue(in);
    }
    for (auto *l : m_listeners)
        l->notifyPatternEnd(p.name, true);
    return true;
}

bool Session::apply(const Match &m)
{
    const Pattern *p = m_patterns.named(m.pattern);
    if (!p || !m.anchor || m.anchor->isErased())
        return false;
    // Re-match on the current graph: the caller's match may be stale.
    Match fresh;
    MatchFailure why;
    for (auto *l : m_listeners)
        l->notifyPatternBegin(p->name, m.anchor);
    if (!matches(*p, m.anchor, fresh, why)) {
        m_lastError = "no longer matches: " + why.toString();
        for (auto *l : m_listeners) {
            l->notifyMatchFailure(p->name, m.anchor, why);
            l->notifyPatternEnd(p->name, false);
        }
        return false;
    }
    for (auto *l : m_listeners)
        l->notifyMatchFound(fresh);
    return applyMatch(*p, fresh);
}

void Session::skip(const Match &m)
{
    if (const Pattern *p = m_patterns.named(m.pattern))
        m_history.skip(*p, *m.anchor);
}

std::vector<std::pair<std::string, std::string>> Session::skipped() const { return m_history.skipped(); }

bool Session::unskip(const std::string &pattern, const std::string &anchor)
{
    const Pattern *p = m_patterns.named(pattern);
    Node *n = m_g.find(anchor);
    if (!p || !n || !m_history.unskip(*p, *n))
        return false;
    enqueue(n); // the driver may have passed the anchor already: visit it again
    return true;
}

void Session::moved(const Step &s, bool undone)
{
    for (const auto &e : s.edits) {
        enqueue(e.node);
        for (Node *in : e.node->inputNodes())
            enqueue(in);
        for (Node *u : e.node->users())
            enqueue(u);
    }
    for (auto *l : m_listeners) {
        if (undone)
            l->notifyUndone(m_history.version());
        else
            l->notifyRedone(m_history.version());
    }
}

bool Session::tryPatterns(Node *n, RunResult *stats, bool respectBreakpoints, bool &hitBreakpoint)
{
    for (const Pattern *p : m_patterns.at(*n)) {
        if (p->phase > m_phase || m_history.isSkipped(*p, *n))
            continue;
        Match m;
        MatchFailure why;
        ++stats->attempts;
        for (auto *l : m_listeners)
            l->notifyPatternBegin(p->name, n);
        if (!matches(*p, n, m, why)) {
            for (auto *l : m_listeners) {
                l->notifyMatchFailure(p->name, n, why);
                l->notifyPatternEnd(p->name, false);
            }
            continue;
        }
        for (auto *l : m_listeners)
            l->notifyMatchFound(m);
        if (respectBreakpoints && breaksAt(*p, m)) {
            hitBreakpoint = true;
            stats->message = "breakpoint before '" + p->name + "' at '" + n->name() + "'";
            for (auto *l : m_listeners)
                l->notifyPatternEnd(p->name, false);
            return false;
        }
        if (m_cfg.decide && !m_cfg.decide(*p, m)) {
            m_history.skip(*p, *n);
            for (auto *l : m_listeners)
                l->notifyPatternEnd(p->name, false);
            continue;
        }
        if (applyMatch(*p, m)) {
            ++stats->rewritesByPattern[p->name];
            return true;
        }
        stats->message = m_lastError;
        if (m_cfg.stopOnRollback)
            return false;
    }
    return false;
}

bool Session::nextPhase()
{
    if (m_phase >= m_patterns.maxPhase())
        return false;
    ++m_phase;
    m_sweeping = true;
    for (Node *n = m_g.first(); n; n = n->next())
        enqueue(n);
    m_sweeping = false;
    return true;
}

RunResult Session::run()
{
    RunResult r;
    m_rollbacks = &r.rollbacks;
    auto t0 = std::chrono::steady_clock::now();
    size_t iter = 0;
    while (!m_sweep.empty() || !m_revisit.empty() || nextPhase()) {
        if (m_sweep.empty() && m_revisit.empty())
            continue; // a phase with no anchor in the graph (e.g. horizontal patterns, no call left)
        if (r.steps >= m_cfg.maxSteps) {
            r.reason = StopReason::StepLimit;
            break;
        }
        if (m_stopRequested.load()) {
            r.reason = StopReason::Stopped;
            break;
        }
        if ((++iter & 255) == 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > m_cfg.maxSeconds) {
            r.reason = StopReason::TimeLimit;
            break;
        }
        const bool fromSweep = !m_sweep.empty();
        Node *n;
        if (fromSweep) {
            n = m_sweep.back();
            m_sweep.pop_back();
        } else {
            n = m_revisit.front();
            m_revisit.pop_front();
        }
        m_queued[n->id()] = 0; // also for erased nodes, so that an undo that restores one re-queues it
        if (n->isErased())
            continue;
        bool hit = false;
        bool respect = !m_resumeFromBreakpoint;
        m_resumeFromBreakpoint = false;
        const auto s0 = std::chrono::steady_clock::now();
        const size_t rolledBack = r.rollbacks.size();
        if (tryPatterns(n, &r, respect, hit)) {
            ++r.steps;
            const Step &s = m_history.steps().back();
            r.records.push_back(
                {s.pattern, s.anchor, s.edits.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count()});
            enqueue(n); // the anchor may match again (e.g. another run of the same cat)
        } else if (m_cfg.stopOnRollback && r.rollbacks.size() > rolledBack) {
            enqueue(n); // other patterns may still apply at this anchor when the run goes on
            r.reason = StopReason::RolledBack;
            break;
        } else if (hit) {
            if (fromSweep)
                m_sweep.push_back(n);
            else
                m_revisit.push_front(n);
            m_queued[n->id()] = 1;
            m_resumeFromBreakpoint = true;
            r.reason = StopReason::Breakpoint;
            break;
        }
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m_rollbacks = nullptr;
    m_stopRequested.store(false);
    return r;
}

} // namespace fxlens::rewrite
