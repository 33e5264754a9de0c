// SPDX-License-Identifier: MIT
// Greedy worklist driver and stepping API.
#include "rewrite/Session.h"

#include <algorithm>
#include <atomic>

namespace fxlens::rewrite {

namespace {
/// One clock for all sessions, so that an edit count never repeats (caches keyed on it stay valid
/// across sessions that reuse an address).
std::atomic<uint64_t> g_editClock{0};
} // namespace

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
    : m_g(g), m_patterns(std::move(patterns)), m_cfg(cfg), m_edits(++g_editClock)
{
    for (const Node *a : outputAliases(g))
        if (a)
            m_startAliases.push_back(aliasKey(a));
    // A pattern written for one IR level never runs on a graph of the other.
    const bool aten = g.irLevel == "aten";
    m_patterns.erase(std::remove_if(m_patterns.begin(), m_patterns.end(),
                                    [aten](const Pattern *p) { return p->level != IrLevel::Both && (p->level == IrLevel::Aten) != aten; }),
                     m_patterns.end());
    std::stable_sort(m_patterns.begin(), m_patterns.end(), [](const Pattern *a, const Pattern *b) { return a->benefit > b->benefit; });
    for (const Pattern *p : m_patterns)
        m_maxPhase = std::max(m_maxPhase, p->phase);
    for (const Pattern *p : m_patterns)
        for (const auto &k : p->anchors)
            (k.target.empty() ? m_anyTarget[k.op] : m_byKey[k]).push_back(p);
    for (auto &kv : m_byKey) {
        m_index[kv.first];
        mergeAnyTarget(kv.first, kv.second);
    }
    // The first sweep visits every anchor once, in reverse program order (consumers before producers,
    // as Inductor's pattern passes do); nodes touched by rewrites are re-visited afterwards, in the
    // order they were touched, each once however often it was touched meanwhile.
    for (Node *n = g.first(); n; n = n->next()) {
        reindex(n);
        trackMutation(n);
        enqueue(n);
    }
    m_sweeping = false;
    g.addObserver(this);
}

Session::~Session() { m_g.removeObserver(this); }

const std::unordered_set<Node *> &Session::nodesWithKey(const AnchorKey &k) const
{
    static const std::unordered_set<Node *> empty;
    auto it = m_index.find(k);
    return it == m_index.end() ? empty : it->second;
}

void Session::reindex(Node *n)
{
    if (m_entryOf.size() <= n->id())
        m_entryOf.resize(size_t(m_g.idBound()) + 1024, nullptr);
    IndexEntry *&entry = m_entryOf[n->id()];
    if (entry && !n->isErased() && entry->first.op == n->op() && entry->first.target == n->target())
        return; // the common case: args changed, the key did not
    if (entry)
        entry->second.erase(n);
    entry = nullptr;
    if (n->isErased())
        return;
    auto it = m_index.find({n->op(), n->target()});
    if (it != m_index.end()) {
        it->second.insert(n);
        entry = &*it;
    }
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

bool Session::mutationSafe(const Pattern &p, const Match &m, MatchFailure &why)
{
    if (p.mutationAware || m_mutators.empty())
        return true;
    if (!m_alias || m_aliasEdits != m_edits) {
        m_alias = std::make_unique<AliasInfo>(m_g);
        m_aliasEdits = m_edits;
    }
    if (rewrite::mutationSafe(*m_alias, m.nodes, why))
        return true;
    if (m.anchor)
        m_refusedForMutation.insert(m.anchor);
    return false;
}

bool Session::matches(const Pattern &p, Node *n, Match &m, MatchFailure &why) { return p.match(n, m, why) && mutationSafe(p, m, why); }

void Session::notifyNodeInserted(Node *n)
{
    m_edits = ++g_editClock;
    reindex(n);
    trackMutation(n);
    enqueue(n);
}

void Session::notifyNodeErased(Node *n)
{
    m_edits = ++g_editClock;
    forgetMutator(n);
    // Called before the node is unlinked: drop it from its key by hand.
    if (n->id() < m_entryOf.size() && m_entryOf[n->id()]) {
        m_entryOf[n->id()]->second.erase(n);
        m_entryOf[n->id()] = nullptr;
    }
}

void Session::notifyNodeChanged(Node *n)
{
    m_edits = ++g_editClock;
    reindex(n); // the target may have changed
    trackMutation(n);
    enqueue(n);
}

const Pattern *Session::patternNamed(const std::string &name) const
{
    for (const Pattern *p : m_patterns)
        if (p->name == name)
            return p;
    return nullptr;
}

void Session::mergeAnyTarget(const AnchorKey &k, std::vector<const Pattern *> &list) const
{
    auto it = m_anyTarget.find(k.op);
    if (it == m_anyTarget.end())
        return;
    list.insert(list.end(), it->second.begin(), it->second.end());
    // Keep the driver's order: benefit first, then the order patterns were given in.
    std::stable_sort(list.begin(), list.end(), [this](const Pattern *a, const Pattern *b) {
        if (a->benefit != b->benefit)
            return a->benefit > b->benefit;
        return std::find(m_patterns.begin(), m_patterns.end(), a) < std::find(m_patterns.begin(), m_patterns.end(), b);
    });
}

const std::vector<const Pattern *> &Session::patternsFor(Node *n) const
{
    static const std::vector<const Pattern *> none;
    AnchorKey k{n->op(), n->target()};
    auto it = m_byKey.find(k);
    if (it != m_byKey.end())
        return it->second;
    if (!m_anyTarget.count(n->op()))
        return none;
    // A target no pattern names: only the patterns anchored on any target of this op kind apply.
    auto &list = m_byKey[k];
    mergeAnyTarget(k, list);
    return list;
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
    if (patternsFor(n).empty())
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
        for (const Pattern *p : patternsFor(n)) {
            if (p->phase > m_phase)
                continue;
            Match m;
            m.context = this;
            MatchFailure why;
            if (!m_skipped.count({p, n->id()}) && matches(*p, n, m, why)) {
                m.pattern = p->name;
                m.anchor = n;
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
    // What a fresh session on this version would list: phase by phase, anchors consumers first
    // (reverse program order, the first sweep's), the patterns of an anchor by benefit.
    std::vector<Match> out;
    std::vector<Node *> nodes;
    for (Node *n = m_g.first(); n; n = n->next())
        nodes.push_back(n);
    for (int phase = 0; phase <= m_maxPhase && out.size() < limit; ++phase) {
        for (auto it = nodes.rbegin(); it != nodes.rend() && out.size() < limit; ++it) {
            Node *n = *it;
            for (const Pattern *p : patternsFor(n)) {
                if (p->phase != phase || m_skipped.count({p, n->id()}))
                    continue;
                Match m;
                m.context = this;
                MatchFailure why;
                if (!matches(*p, n, m, why))
                    continue;
                m.pattern = p->name;
                m.anchor = n;
                out.push_back(std::move(m));
                if (out.size() >= limit)
                    break;
            }
        }
    }
    return out;
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
    FXLENS_ASSERT(m_cursor <= m_history.size(), "the version is inside the history");
    Rewriter rw(m_g);
    rw.setListeners(m_listeners);
    rw.setContext(p.name, int64_t(m_cursor) + 1);
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
        m_skipped.insert({&p, m.anchor->id()});
        m_lastError = "pattern '" + p.name + "' at '" + step.anchor + "' rolled back: " + problem;
        if (m_rollbacks)
            m_rollbacks->push_back({p.name, step.anchor, problem});
        for (auto *l : m_listeners) {
            l->notifyRolledBack(p.name, m.anchor, problem);
            l->notifyPatternEnd(p.name, false);
        }
        return false;
    }
    // A new step after going back: the steps it replaces are kept as a branch.
    if (m_cursor < m_history.size()) {
        m_branches.push_back(
            {m_cursor, {std::make_move_iterator(m_history.begin() + long(m_cursor)), std::make_move_iterator(m_history.end())}});
        m_history.resize(m_cursor);
    }
    m_history.push_back(std::move(step));
    ++m_cursor;
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
    const Pattern *p = patternNamed(m.pattern);
    if (!p || !m.anchor || m.anchor->isErased())
        return false;
    // Re-match on the current graph: the caller's match may be stale.
    Match fresh;
    fresh.context = this;
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
    fresh.pattern = p->name;
    fresh.anchor = m.anchor;
    for (auto *l : m_listeners)
        l->notifyMatchFound(fresh);
    return applyMatch(*p, fresh);
}

void Session::skip(const Match &m)
{
    if (const Pattern *p = patternNamed(m.pattern))
        m_skipped.insert({p, m.anchor->id()});
}

std::vector<std::pair<std::string, std::string>> Session::skipped() const
{
    std::vector<std::pair<const Pattern *, Node *>> live;
    for (const auto &[p, id] : m_skipped)
        if (Node *n = m_g.byId(id); n && !n->isErased())
            live.emplace_back(p, n);
    m_g.renumber();
    std::sort(live.begin(), live.end(), [](const auto &a, const auto &b) {
        return a.first->name != b.first->name ? a.first->name < b.first->name : a.second->order() < b.second->order();
    });
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto &[p, n] : live)
        out.emplace_back(p->name, n->name());
    return out;
}

bool Session::unskip(const std::string &pattern, const std::string &anchor)
{
    const Pattern *p = patternNamed(pattern);
    Node *n = m_g.find(anchor);
    if (!p || !n || !m_skipped.erase({p, n->id()}))
        return false;
    enqueue(n); // the driver may have passed the anchor already: visit it again

    return true;
}

static void enqueueEdits(const std::vector<Edit> &edits, const std::function<void(Node *)> &enq)
{
    for (const auto &e : edits) {
        enq(e.node);
        for (Node *in : e.node->inputNodes())
            enq(in);
        for (Node *u : e.node->users())
            enq(u);
    }
}

bool Session::undo()
{
    if (m_cursor == 0)
        return false;
    FXLENS_ASSERT(m_cursor <= m_history.size(), "the version is inside the history");
    Rewriter::undo(m_g, m_history[m_cursor - 1].edits);
    --m_cursor;
    enqueueEdits(m_history[m_cursor].edits, [this](Node *n) { enqueue(n); });
    for (auto *l : m_listeners)
        l->notifyUndone(m_cursor);
    return true;
}

bool Session::redo()
{
    if (m_cursor >= m_history.size())
        return false;
    Rewriter::redo(m_g, m_history[m_cursor].edits);
    enqueueEdits(m_history[m_cursor].edits, [this](Node *n) { enqueue(n); });
    ++m_cursor;
    for (auto *l : m_listeners)
        l->notifyRedone(m_cursor);
    return true;
}

bool Session::checkout(size_t v)
{
    if (v > m_history.size())
        return false;
    while (m_cursor > v)
        undo();
    while (m_cursor < v)
        redo();
    return true;
}

bool Session::switchBranch(size_t index)
{
    if (index >= m_branches.size())
        return false;
    Branch b = std::move(m_branches[index]);
    m_branches.erase(m_branches.begin() + long(index));
    checkout(b.fork);
    if (m_cursor < m_history.size()) {
        m_branches.push_back(
            {m_cursor, {std::make_move_iterator(m_history.begin() + long(m_cursor)), std::make_move_iterator(m_history.end())}});
        m_history.resize(m_cursor);
    }
    // The branch's steps were recorded from this very version (undo restores nodes as they were).
    for (auto &step : b.steps)
        m_history.push_back(std::move(step));
    return checkout(m_history.size());
}

bool Session::tryPatterns(Node *n, RunResult *stats, bool respectBreakpoints, bool &hitBreakpoint)
{
    for (const Pattern *p : patternsFor(n)) {
        if (p->phase > m_phase || m_skipped.count({p, n->id()}))
            continue;
        Match m;
        m.context = this;
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
        m.pattern = p->name;
        m.anchor = n;
        for (auto *l : m_listeners)
            l->notifyMatchFound(m);
        if (respectBreakpoints && breaksAt(*p, m)) {
            hitBreakpoint = true;
            stats->message = "breakpoint before '" + p->name + "' at '" + n->name() + "'";
            for (auto *l : m_listeners)
                l->notifyPatternEnd(p->name, false);
            return false;
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
    if (m_phase >= m_maxPhase)
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
            const Step &s = m_history.back();
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
