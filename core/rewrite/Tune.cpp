// SPDX-License-Identifier: MIT
#include "rewrite/Tune.h"

#include "ir/GraphInfo.h"
#include "rewrite/Matcher.h"
#include "rewrite/Session.h"
#include "rewrite/StepDiff.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace fxlens::rewrite {

namespace {

struct Fnv {
    uint64_t h = 1469598103934665603ull;
    void add(const std::string &s)
    {
        for (unsigned char c : s) {
            h ^= c;
            h *= 1099511628211ull;
        }
        h ^= 0xff;
        h *= 1099511628211ull;
    }
};

std::string hex16(uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string joined(const std::set<std::string> &s)
{
    std::string out;
    for (const auto &x : s)
        out += (out.empty() ? "" : ", ") + x;
    return out;
}

} // namespace

std::string TunePlan::describe() const
{
    if (applyNothing)
        return "the original (no rewrite)";
    std::string out;
    if (order.size() == 1 && order[0].empty())
        out = "greedy order";
    else {
        out = "families in order ";
        for (size_t i = 0; i < order.size(); ++i)
            out += (i ? " > " : "") + order[i];
    }
    if (!droppedPatterns.empty())
        out += "; without " + joined(droppedPatterns);
    if (!droppedGroups.empty())
        out += "; " + std::to_string(droppedGroups.size()) + " match group(s) left out";
    return out;
}

std::string patternFamily(const Pattern &p) { return p.labels.empty() ? std::string("other") : p.labels.front(); }

std::string matchFingerprint(const Match &m)
{
    Fnv f;
    std::unordered_map<const Node *, size_t> index;
    for (size_t i = 0; i < m.nodes.size(); ++i)
        index.emplace(m.nodes[i], i);
    for (const Node *n : m.nodes) {
        f.add(std::to_string(int(n->op())) + n->target() + " " + n->meta().val.toString());
        for (const Node *in : n->inputNodes()) {
            auto it = index.find(in);
            f.add(it != index.end() ? "@" + std::to_string(it->second) : "ext " + in->meta().val.toString());
        }
    }
    for (int64_t v : m.ints)
        f.add(std::to_string(v));
    return hex16(f.h);
}

namespace {

/// Keeps the diff of each step as it is applied (diffStep reads the nodes as they are then).
class DiffKeeper : public RewriteListener {
public:
    const Session *session = nullptr;
    std::vector<std::string> diffs;
    void notifyPatternEnd(const std::string &, bool applied) override
    {
        if (applied && session && !session->history().empty())
            diffs.push_back(diffStep(session->history().back().edits).toString());
    }
};

} // namespace

Replay replayPlan(const ir::Graph &original, const std::vector<const Pattern *> &patterns, const TunePlan &plan, bool checked, bool diffs)
{
    Replay r{original.clone(), {}};
    if (plan.applyNothing)
        return r;
    std::map<std::pair<std::string, std::string>, std::string> groupOf; // (pattern, anchor) -> group
    std::set<std::string> families;
    for (const std::string &stage : plan.order) {
        families.insert(stage);
        std::vector<const Pattern *> active;
        for (const Pattern *p : patterns)
            if (!plan.droppedPatterns.count(p->name) && (stage.empty() || families.count(patternFamily(*p))))
                active.push_back(p);
        SessionConfig cfg;
        cfg.checked = checked;
        cfg.decide = [&](const Pattern &p, const Match &m) {
            std::string group = p.name + "#" + matchFingerprint(m);
            if (plan.droppedGroups.count(group))
                return false;
            groupOf[{p.name, m.anchor->name()}] = std::move(group);
            return true;
        };
        Session s(*r.graph, active, cfg);
        DiffKeeper keeper;
        if (diffs) {
            keeper.session = &s;
            s.addListener(&keeper);
        }
        s.run();
        for (size_t i = 0; i < s.history().size(); ++i) {
            const Step &step = s.history()[i];
            r.steps.push_back(
                {step.pattern, step.anchor, groupOf[{step.pattern, step.anchor}], i < keeper.diffs.size() ? keeper.diffs[i] : ""});
        }
    }
    return r;
}

namespace {

/// The search's state: measurements cached by the version's fingerprint, the trace, the budget.
class Search {
public:
    Search(const ir::Graph &g, const std::vector<const Pattern *> &patterns, CostModel &cost, const TuneConfig &cfg, TuneResult &out)
        : m_g(g), m_patterns(patterns), m_cost(cost), m_cfg(cfg), m_out(out), m_t0(std::chrono::steady_clock::now())
    {
    }

    struct Candidate {
        TunePlan plan;
        std::string kind, decision;
        std::string dropped = {};
    };

    bool outOfTime()
    {
        if (m_cfg.stop && m_cfg.stop->load()) {
            m_out.stopped = true;
            return true;
        }
        if (elapsed() > m_cfg.budgetSeconds) {
            m_out.budgetReached = true;
            return true;
        }
        return false;
    }
    double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_t0).count(); }

    /// Replays and measures each candidate (versions measured before come from the cache); the
    /// trials, in order. Candidates past the budget are not measured (left out of the result)
    /// unless `evenPastBudget` (the original: the search needs it).
    std::vector<TuneTrial> measure(const std::vector<Candidate> &cands, bool evenPastBudget = false)
    {
        std::vector<TuneTrial> done;
        size_t chunk = std::max<size_t>(1, m_cost.parallelism());
        for (size_t i = 0; i < cands.size() && (evenPastBudget || !outOfTime()); i += chunk) {
            std::vector<Replay> replays;
            std::vector<const ir::Graph *> fresh;
            std::vector<size_t> freshOf; // replay index per fresh version
            size_t end = std::min(cands.size(), i + chunk);
            for (size_t k = i; k < end; ++k) {
                replays.push_back(replayPlan(m_g, m_patterns, cands[k].plan, m_cfg.checked));
                if (!m_cache.count(ir::fingerprint(*replays.back().graph))) {
                    fresh.push_back(replays.back().graph.get());
                    freshOf.push_back(k - i);
                }
            }
            auto results = fresh.empty() ? std::vector<Result<Measurement>>{} : m_cost.measure(fresh);
            for (size_t f = 0; f < fresh.size() && f < results.size(); ++f)
                m_cache.emplace(ir::fingerprint(*fresh[f]), results[f]);
            for (size_t k = i; k < end; ++k)
                done.push_back(record(cands[k], replays[k - i]));
        }
        return done;
    }

    /// The same version measured `n` times (no cache): the noise band's samples.
    std::vector<Result<Measurement>> repeat(const TunePlan &plan, size_t n, Replay &replay)
    {
        replay = replayPlan(m_g, m_patterns, plan, m_cfg.checked);
        std::vector<const ir::Graph *> same(n, replay.graph.get());
        return m_cost.measure(same);
    }

    TuneTrial record(const Candidate &c, const Replay &r)
    {
        TuneTrial t;
        t.index = m_out.trials.size();
        t.kind = c.kind;
        t.decision = c.decision;
        t.dropped = c.dropped;
        t.plan = c.plan;
        t.nodes = r.graph->size();
        t.steps = r.steps.size();
        Result<Measurement> m = m_cache.at(ir::fingerprint(*r.graph));
        if (m.ok()) {
            t.seconds = m->seconds;
            t.spread = m->spread;
        } else
            t.error = m.error().toString();
        m_out.trials.push_back(t);
        if (m_cfg.onTrial)
            m_cfg.onTrial(t);
        return t;
    }

    void remember(const ir::Graph &g, Measurement m) { m_cache.insert_or_assign(ir::fingerprint(g), Result<Measurement>(std::move(m))); }
    void accept(size_t trialIndex) { m_out.trials[trialIndex].accepted = true; }

private:
    const ir::Graph &m_g;
    const std::vector<const Pattern *> &m_patterns;
    CostModel &m_cost;
    const TuneConfig &m_cfg;
    TuneResult &m_out;
    std::chrono::steady_clock::time_point m_t0;
    std::map<uint64_t, Result<Measurement>> m_cache;
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// The family orders to try: permutations of the families that match the original or applied in
/// the greedy run, in lexicographic order.
std::vector<std::vector<std::string>> familyOrders(const ir::Graph &original, const Replay &greedy,
                                                   const std::vector<const Pattern *> &patterns, size_t limit)
{
    std::set<std::string> used;
    for (const auto &s : greedy.steps)
        used.insert(s.pattern);
    for (const Match &m : findMatches(original, patterns))
        used.insert(m.pattern);
    std::set<std::string> families;
    for (const Pattern *p : patterns)
        if (used.count(p->name))
            families.insert(patternFamily(*p));
    std::vector<std::string> perm(families.begin(), families.end());
    std::vector<std::vector<std::string>> out;
    if (perm.size() < 2)
        return out;
    do
        out.push_back(perm);
    while (out.size() < limit && std::next_permutation(perm.begin(), perm.end()));
    return out;
}

} // namespace

namespace {

/// Measures each candidate (each leaves one more thing out: `what`, aligned with `cands`); takes the
/// fastest when it beats `curSeconds` by more than the band; then, when more than one did, all of
/// them together (`merge` adds one plan's drops to another) if that is faster still.
void takeDrops(Search &search, TuneResult &out, TunePlan &cur, double &curSeconds, const std::vector<Search::Candidate> &cands,
               const std::vector<LeftOut> &what, const std::function<void(TunePlan &, const TunePlan &)> &merge)
{
    auto trials = search.measure(cands);
    for (const auto &t : trials)
        out.trials[t.index].baseSeconds = curSeconds;
    std::vector<size_t> better;
    for (size_t i = 0; i < trials.size(); ++i)
        if (trials[i].error.empty() && trials[i].seconds < curSeconds - out.band)
            better.push_back(i);
    if (better.empty())
        return;
    std::sort(better.begin(), better.end(), [&](size_t a, size_t b) { return trials[a].seconds < trials[b].seconds; });
    const double before = curSeconds;
    auto leave = [&](size_t i) {
        out.leftOut.push_back(what[i]);
        out.leftOut.back().deltaSeconds = before - trials[i].seconds;
    };
    cur = trials[better[0]].plan;
    curSeconds = trials[better[0]].seconds;
    search.accept(trials[better[0]].index);
    leave(better[0]);
    if (better.size() < 2)
        return;
    TunePlan all = cur;
    for (size_t i = 1; i < better.size(); ++i)
        merge(all, trials[better[i]].plan);
    auto combined = search.measure({{all, "combined", "the " + std::to_string(better.size()) + " faster choices together"}});
    if (combined.empty() || !combined[0].error.empty() || combined[0].seconds >= curSeconds - out.band)
        return;
    search.accept(combined[0].index);
    for (size_t i = 1; i < better.size(); ++i)
        leave(better[i]);
    cur = all;
    curSeconds = combined[0].seconds;
}

} // namespace

namespace {

/// The greedy version measured `cfg.noiseRepeats` times: its median, and the noise band from the
/// spread of those medians (at least cfg.minBandFraction of the time). False when it cannot run.
bool measureGreedy(Search &search, TuneResult &out, const TuneConfig &cfg, Replay &greedy)
{
    auto reps = search.repeat(TunePlan{}, std::max<size_t>(1, cfg.noiseRepeats), greedy);
    std::vector<double> medians;
    for (auto &r : reps) {
        if (!r.ok()) {
            out.error = "the greedy version: " + r.error().toString();
            return false;
        }
        medians.push_back(r->seconds);
    }
    const double seconds = median(medians);
    out.greedy = {seconds, reps[0]->spread, reps.size(), reps[0]->note};
    out.greedySteps = greedy.steps.size();
    out.band = std::max(*std::max_element(medians.begin(), medians.end()) - *std::min_element(medians.begin(), medians.end()),
                        cfg.minBandFraction * seconds);
    search.remember(*greedy.graph, out.greedy);
    TuneTrial t;
    t.index = out.trials.size();
    t.kind = "greedy";
    t.decision = "every match, greedy order (" + std::to_string(reps.size()) + " measurements; noise band " +
        std::to_string(out.band * 1e3) + " ms)";
    t.seconds = seconds;
    t.spread = out.band;
    t.nodes = greedy.graph->size();
    t.steps = greedy.steps.size();
    t.accepted = true;
    out.trials.push_back(t);
    if (cfg.onTrial)
        cfg.onTrial(t);
    return true;
}

/// Each applied pattern left out, then each match group of the patterns still in (the largest
/// first; a pattern's only group was measured as that pattern).
void searchDrops(Search &search, TuneResult &out, const Replay &now, const TuneConfig &cfg, TunePlan &cur, double &curSeconds)
{
    std::map<std::string, size_t> perPattern, perGroup, groupsOfPattern;
    for (const auto &s : now.steps) {
        ++perPattern[s.pattern];
        if (perGroup[s.group]++ == 0)
            ++groupsOfPattern[s.pattern];
    }
    std::vector<Search::Candidate> drops;
    std::vector<LeftOut> dropped;
    for (const auto &[name, n] : perPattern) {
        TunePlan p = cur;
        p.droppedPatterns.insert(name);
        drops.push_back({p, "pattern", "without " + name + " (" + std::to_string(n) + " step(s))", name});
        dropped.push_back({"pattern " + name, name, n, 0});
    }
    takeDrops(search, out, cur, curSeconds, drops, dropped,
              [](TunePlan &into, const TunePlan &p) { into.droppedPatterns.insert(p.droppedPatterns.begin(), p.droppedPatterns.end()); });

    std::vector<std::pair<size_t, std::string>> groups;
    for (const auto &[g, n] : perGroup) {
        std::string pattern = g.substr(0, g.find('#'));
        if (!cur.droppedPatterns.count(pattern) && groupsOfPattern[pattern] > 1)
            groups.emplace_back(n, g);
    }
    std::stable_sort(groups.begin(), groups.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    if (groups.size() > cfg.maxGroups)
        groups.resize(cfg.maxGroups);
    drops.clear();
    dropped.clear();
    for (const auto &[n, g] : groups) {
        std::string pattern = g.substr(0, g.find('#'));
        TunePlan p = cur;
        p.droppedGroups.insert(g);
        drops.push_back({p, "group", "without " + std::to_string(n) + " " + pattern + " step(s) of one structure (" + g + ")", g});
        dropped.push_back({"group " + g, pattern, n, 0});
    }
    takeDrops(search, out, cur, curSeconds, drops, dropped,
              [](TunePlan &into, const TunePlan &p) { into.droppedGroups.insert(p.droppedGroups.begin(), p.droppedGroups.end()); });
}

} // namespace

TuneResult tune(const ir::Graph &original, const std::vector<const Pattern *> &patterns, CostModel &cost, const TuneConfig &cfg)
{
    TuneResult out;
    Search search(original, patterns, cost, cfg, out);
    auto finish = [&]() -> TuneResult {
        out.seconds = search.elapsed();
        return std::move(out);
    };
    TunePlan none;
    none.applyNothing = true;
    auto first = search.measure({{none, "original", "as given"}}, true);
    if (!first[0].error.empty()) {
        out.error = "the original: " + first[0].error;
        return finish();
    }
    out.original = {first[0].seconds, first[0].spread, 0, ""};
    Replay greedy;
    if (!measureGreedy(search, out, cfg, greedy))
        return finish();
    TunePlan cur;
    double curSeconds = out.greedy.seconds;

    std::vector<Search::Candidate> orders;
    for (auto &o : familyOrders(original, greedy, patterns, cfg.maxOrders)) {
        TunePlan p = cur;
        p.order = o;
        orders.push_back({p, "order", p.describe()});
    }
    for (const auto &t : search.measure(orders))
        if (t.error.empty() && t.seconds < curSeconds - out.band) {
            cur = t.plan;
            curSeconds = t.seconds;
            search.accept(t.index);
        }
    searchDrops(search, out, replayPlan(original, patterns, cur, cfg.checked), cfg, cur, curSeconds);

    // Never slower than the original as measured.
    if (out.original.seconds < curSeconds) {
        cur = none;
        curSeconds = out.original.seconds;
        out.leftOut.clear();
    }
    out.best = cur;
    Replay tuned = replayPlan(original, patterns, cur, cfg.checked, true);
    out.tuned = {curSeconds, 0, 0, out.greedy.note};
    out.graph = std::move(tuned.graph);
    out.steps = std::move(tuned.steps);
    return finish();
}

} // namespace fxlens::rewrite
