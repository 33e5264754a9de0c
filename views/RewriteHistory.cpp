// SPDX-License-Identifier: MIT
// The document's rewrite session (see RewriteHistory.h).
#include "RewriteHistory.h"
#include "Count.h"

#include "GraphDocument.h"
#include "rewrite/Matcher.h"
#include "rewrite/StepDiff.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <climits>
#include <map>
#include <set>

namespace fxlens::views {

/// Gives every step the session applies (a run applies many) an id and its diff, written right
/// after the step (so nodes print as the step left them); the infos of steps a new step replaced go
/// with the branch the session keeps them in.
class RewriteHistory::Recorder : public rewrite::RewriteListener {
public:
    explicit Recorder(RewriteHistory &h) : m_h(h) {}
    void notifyPatternEnd(const std::string &, bool applied) override
    {
        if (!applied)
            return;
        const auto &history = m_h.m_session->history();
        const auto &branches = m_h.m_session->branches();
        auto &infos = m_h.m_infos;
        if (branches.size() > m_h.m_branchInfos.size()) { // this step left a line: its infos go with it
            const size_t fork = branches.back().fork;
            m_h.m_branchInfos.emplace_back(infos.begin() + long(std::min(fork, infos.size())), infos.end());
        }
        infos.resize(history.size());
        infos.back().id = m_h.m_nextId++;
        infos.back().diff = QString::fromStdString(rewrite::diffStep(history.back().edits).toString());
    }

private:
    RewriteHistory &m_h;
};

RewriteHistory::RewriteHistory(GraphDocument &doc, const rewrite::PatternRegistry &registry, Services services)
    : QObject(&doc), m_doc(doc), m_registry(registry), m_services(std::move(services))
{
    qRegisterMetaType<fxlens::views::VersionInfo>("fxlens::views::VersionInfo");
    qRegisterMetaType<fxlens::views::StepSummary>("fxlens::views::StepSummary");
    qRegisterMetaType<fxlens::views::RunProgress>("fxlens::views::RunProgress");
}

RewriteHistory::~RewriteHistory() = default;

void RewriteHistory::attach(ir::Graph *g)
{
    m_session.reset(); // it refers to the previous graph
    m_recorder.reset();
    m_graph = g;
    m_verifier = nullptr;
    m_baseId = g ? m_nextId++ : 0;
    if (g && m_verify) { // a new reference: this graph's outputs
        QString why;
        if (!setVerify(true, &why))
            m_lastError = why;
    }
    restart();
}

void RewriteHistory::restart()
{
    if (m_session) // a new session starts from the version on screen, which keeps its id
        m_baseId = currentId();
    m_session.reset();
    m_recorder.reset();
    m_infos.clear();
    m_branchInfos.clear();
    if (m_graph) {
        std::string error;
        auto patterns = m_registry.preset(m_preset.toStdString(), error);
        rewrite::SessionConfig cfg;
        cfg.checked = true; // it lints each step's neighbourhood, not the graph
        if (m_verify && m_verifier)
            cfg.verify = m_verifier;
        m_session = std::make_unique<rewrite::Session>(*m_graph, patterns, cfg);
        m_recorder = std::make_unique<Recorder>(*this);
        m_session->addListener(m_recorder.get());
        for (const auto &b : m_breakpoints)
            m_session->addBreakpoint(b);
        m_lastError = QString::fromStdString(error);
    }
    Q_EMIT candidatesChanged();
    Q_EMIT versionChanged(info());
}

void RewriteHistory::setPreset(const QString &preset)
{
    if (preset == m_preset)
        return;
    m_preset = preset;
    replan();
}

void RewriteHistory::reloadPatterns() { replan(); }

void RewriteHistory::replan()
{
    if (!m_session) {
        restart();
        return;
    }
    std::string error;
    m_session->setPatterns(m_registry.preset(m_preset.toStdString(), error));
    m_lastError = QString::fromStdString(error);
    Q_EMIT candidatesChanged();
    Q_EMIT versionChanged(info());
}

void RewriteHistory::forgetFile()
{
    std::erase_if(m_breakpoints, [](const rewrite::Breakpoint &b) { return b.kind != rewrite::Breakpoint::Kind::Pattern; });
    m_lastError.clear();
}

QString RewriteHistory::noCandidatesReason()
{
    if (!m_session || !m_graph || !stableCandidates(1).empty())
        return {};
    std::string error;
    const auto patterns = m_registry.preset(m_preset.toStdString(), error);
    std::set<std::string> anchors;
    // The running patterns' anchor keys, once each, by the name the reason gives them (an op kind
    // covers every node of that kind).
    std::map<std::string, rewrite::AnchorKey> keys;
    QStringList elsewhere; ///< patterns of the preset for another IR
    size_t running = 0, anchorNodes = 0;
    for (const rewrite::Pattern *p : patterns) {
        if (!rewrite::runsOn(*p, *m_graph)) { // the preset's own family first, then its normalizations
            const QString name = QString::fromStdString(p->name);
            if (p->hasLabel(m_preset.toStdString()))
                elsewhere.prepend(name);
            else
                elsewhere << name;
            continue;
        }
        ++running;
        for (const auto &k : p->anchors) {
            anchors.insert(k.target.empty() ? std::string(ir::opKindName(k.op)) : k.target);
            keys.emplace(k.target.empty() ? "any " + std::string(ir::opKindName(k.op)) : k.target, k);
        }
    }
    // The anchors this graph has, with how many of its nodes each covers: the reason names what is
    // here, not every anchor of the preset.
    std::vector<std::pair<const std::string *, const rewrite::AnchorKey *>> byName;
    for (const auto &[name, k] : keys)
        byName.emplace_back(&name, &k);
    std::vector<size_t> covered(byName.size(), 0);
    for (const ir::Node *n = m_graph->first(); n; n = n->next()) {
        bool any = false;
        for (size_t i = 0; i < byName.size(); ++i)
            if (byName[i].second->covers(*n))
                ++covered[i], any = true;
        anchorNodes += any ? 1 : 0;
    }
    const QString preset = tr("Preset '%1'").arg(m_preset);
    const QString ir = QString::fromStdString(m_graph->irLevel);
    if (running == 0)
        return tr("%1: no candidates in this graph — none of its %2 runs on %3 IR.")
            .arg(preset, counted(qint64(patterns.size()), "pattern"), ir);
    constexpr int kNamed = 4;
    const QString other = elsewhere.isEmpty()
        ? QString()
        : tr(" Not for %1 IR: %2%3.")
              .arg(ir, elsewhere.mid(0, kNamed).join(QStringLiteral(", ")),
                   elsewhere.size() > kNamed ? tr(" and %1 more").arg(elsewhere.size() - kNamed) : QString());
    QStringList names;
    for (const auto &a : anchors)
        if (names.size() < kNamed)
            names << QString::fromStdString(a);
    if (anchors.size() > size_t(kNamed))
        names << tr("%1 more").arg(anchors.size() - kNamed);
    const QString on = names.join(QStringLiteral(", "));
    const QString where = version() == 0 ? tr("in this graph") : tr("at version %1").arg(version());
    if (anchorNodes == 0)
        return tr("%1: no candidates %2 — its patterns anchor on %3, and no node here is one of those.%4").arg(preset, where, on, other);
    std::vector<std::pair<size_t, std::string>> byCount; // most nodes first
    for (size_t i = 0; i < byName.size(); ++i)
        if (covered[i] > 0)
            byCount.emplace_back(covered[i], *byName[i].first);
    std::sort(byCount.begin(), byCount.end(),
              [](const auto &a, const auto &b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    QStringList found;
    for (size_t i = 0; i < byCount.size() && i < size_t(kNamed); ++i)
        found << QStringLiteral("%1 ×%2").arg(QString::fromStdString(byCount[i].second)).arg(byCount[i].first);
    if (byCount.size() > size_t(kNamed))
        found << tr("%1 more").arg(byCount.size() - kNamed);
    const size_t skips = skipped().size();
    return tr("%1: no candidates %2 — %3 here %4 anchors of its patterns (%5), but none matches.%6%7")
        .arg(preset, where, counted(qint64(anchorNodes), "node"), anchorNodes == 1 ? tr("is one of the") : tr("are"),
             found.join(QStringLiteral(", ")), skips ? QStringLiteral(" %1 skipped.").arg(counted(qint64(skips), "candidate")) : QString(),
             other);
}

bool RewriteHistory::setVerify(bool on, QString *error)
{
    m_verify = false;
    m_verifier = nullptr;
    if (on) {
        if (!verifyAvailable()) {
            *error = tr("Cannot verify: this build has no LibTorch executor");
            return false;
        }
        if (m_graph) { // the reference is this version as it is now: later steps must keep its outputs
            std::string why;
            m_verifier = m_services.makeVerifier(*m_graph, why);
            if (!m_verifier) {
                *error = tr("Cannot verify: the graph does not run: %1").arg(QString::fromStdString(why));
                return false;
            }
        }
        m_verify = true;
    }
    if (m_session) // the history stays: only later steps are checked
        m_session->setVerifier(m_verify ? m_verifier : nullptr);
    return true;
}

bool RewriteHistory::addBreakpoint(const QString &kind, const QString &value, QString *error)
{
    const QString v = value.trimmed();
    if (v.isEmpty())
        return false;
    rewrite::Breakpoint b;
    if (kind == QLatin1String("pattern")) {
        if (!m_registry.find(v.toStdString())) {
            *error = tr("No pattern named '%1'").arg(v);
            return false;
        }
        b.kind = rewrite::Breakpoint::Kind::Pattern;
    } else if (kind == QLatin1String("node")) {
        b.kind = rewrite::Breakpoint::Kind::Node;
    } else if (kind == QLatin1String("module")) {
        b.kind = rewrite::Breakpoint::Kind::Module;
    } else {
        *error = tr("A breakpoint is on a pattern, a node or a module, not '%1'").arg(kind);
        return false;
    }
    b.value = v.toStdString();
    m_breakpoints.push_back(b);
    if (m_session)
        m_session->addBreakpoint(b);
    Q_EMIT candidatesChanged();
    return true;
}

void RewriteHistory::clearBreakpoints()
{
    m_breakpoints.clear();
    if (m_session)
        m_session->clearBreakpoints();
    Q_EMIT candidatesChanged();
}

QList<QPair<QString, QString>> RewriteHistory::breakpointList() const
{
    QList<QPair<QString, QString>> out;
    for (const auto &b : m_breakpoints)
        out.append({b.kind == rewrite::Breakpoint::Kind::Pattern    ? QStringLiteral("pattern")
                        : b.kind == rewrite::Breakpoint::Kind::Node ? QStringLiteral("node")
                                                                    : QStringLiteral("module"),
                    QString::fromStdString(b.value)});
    return out;
}

std::vector<rewrite::Match> RewriteHistory::stableCandidates(size_t limit)
{
    return m_session ? m_session->stableCandidates(limit) : std::vector<rewrite::Match>{};
}

std::vector<rewrite::Match> RewriteHistory::driverCandidates(size_t limit)
{
    return m_session ? m_session->candidates(limit) : std::vector<rewrite::Match>{};
}

std::vector<std::pair<std::string, std::string>> RewriteHistory::skipped() const
{
    return m_session ? m_session->skipped() : std::vector<std::pair<std::string, std::string>>{};
}

const std::vector<rewrite::Step> &RewriteHistory::steps() const
{
    static const std::vector<rewrite::Step> none;
    return m_session ? m_session->history() : none;
}

const std::vector<rewrite::Branch> &RewriteHistory::branches() const
{
    static const std::vector<rewrite::Branch> none;
    return m_session ? m_session->branches() : none;
}

uint64_t RewriteHistory::versionId(int v) const
{
    if (v == 0)
        return m_baseId;
    if (v < 0 || size_t(v) > m_infos.size())
        return 0;
    return m_infos[size_t(v) - 1].id;
}

QString RewriteHistory::versionLabel(int v) const
{
    return v < 0 ? QString() : QString::fromStdString(rewrite::versionLabel(steps(), size_t(v)));
}

VersionInfo RewriteHistory::info() const
{
    VersionInfo i;
    i.version = version();
    i.id = currentId();
    i.steps = historySize();
    i.branches = int(branches().size());
    i.label = versionLabel(i.version);
    return i;
}

QString RewriteHistory::diffText(int step) const
{
    if (step <= 0 || size_t(step) > m_infos.size())
        return {};
    return m_infos[size_t(step) - 1].diff;
}

QStringList RewriteHistory::stepRecord() const
{
    QStringList out;
    for (const auto &s : steps())
        out << QString::fromStdString(s.pattern) + QLatin1Char('\t') + QString::fromStdString(s.anchor);
    return out;
}

void RewriteHistory::announce()
{
    m_doc.edited();
    Q_EMIT versionChanged(info());
}

bool RewriteHistory::apply(const rewrite::Match &m)
{
    if (!m_session || m_running)
        return false;
    m_doc.aboutToEdit();
    if (!m_session->apply(m)) {
        m_lastError = QString::fromStdString(m_session->lastError());
        Q_EMIT candidatesChanged(); // a refused step skips its anchor
        return false;
    }
    const auto &s = m_session->history().back();
    StepSummary sum;
    sum.version = version();
    sum.id = currentId();
    sum.pattern = QString::fromStdString(s.pattern);
    sum.anchor = QString::fromStdString(s.anchor);
    sum.summary = QString::fromStdString(s.summary);
    sum.edits = s.edits.size();
    sum.verified = s.verified;
    m_doc.edited();
    Q_EMIT stepApplied(sum);
    Q_EMIT versionChanged(info());
    return true;
}

bool RewriteHistory::skip(const rewrite::Match &m)
{
    if (!m_session || m_running)
        return false;
    m_session->skip(m);
    Q_EMIT candidatesChanged();
    return true;
}

bool RewriteHistory::unskip(const QString &pattern, const QString &anchor)
{
    if (!m_session || m_running || !m_session->unskip(pattern.toStdString(), anchor.toStdString()))
        return false;
    Q_EMIT candidatesChanged();
    return true;
}

bool RewriteHistory::checkout(int v)
{
    if (!m_session || m_running || v < 0 || size_t(v) > m_session->history().size())
        return false;
    if (size_t(v) == m_session->version())
        return true;
    m_doc.aboutToEdit();
    if (!m_session->checkout(size_t(v)))
        return false;
    announce();
    return true;
}

bool RewriteHistory::switchBranch(int index)
{
    if (!m_session || m_running || index < 0 || size_t(index) >= m_session->branches().size())
        return false;
    m_doc.aboutToEdit();
    const size_t fork = m_session->branches()[size_t(index)].fork;
    std::vector<StepInfo> theirs = std::move(m_branchInfos[size_t(index)]);
    m_branchInfos.erase(m_branchInfos.begin() + index);
    const size_t had = m_session->branches().size();
    if (!m_session->switchBranch(size_t(index)))
        return false;
    // The session keeps the line it left as a branch (when it had steps after the fork).
    if (m_session->branches().size() == had)
        m_branchInfos.emplace_back(m_infos.begin() + long(std::min(fork, m_infos.size())), m_infos.end());
    m_infos.resize(std::min(fork, m_infos.size()));
    m_infos.insert(m_infos.end(), theirs.begin(), theirs.end());
    announce();
    return true;
}

bool RewriteHistory::replay(const QStringList &recorded)
{
    if (!m_session)
        return recorded.isEmpty();
    m_doc.aboutToEdit();
    std::string presetError;
    std::set<std::string> inPreset;
    for (const auto *p : m_registry.preset(m_preset.toStdString(), presetError))
        inPreset.insert(p->name);
    // Each step is applied at its anchor by name: the session matches the pattern there again (no
    // list of every candidate per step), and a step that does not apply says why.
    bool ok = true;
    for (qsizetype i = 0; i < recorded.size(); ++i) {
        const QStringList parts = recorded[i].split(QLatin1Char('\t'));
        const QString pattern = parts.value(0), anchor = parts.value(1);
        QString why;
        ir::Node *node = parts.size() == 2 ? m_graph->find(anchor.toStdString()) : nullptr;
        if (parts.size() != 2)
            why = tr("not a \"pattern<TAB>anchor\" record");
        else if (!m_registry.find(pattern.toStdString()))
            why = tr("no pattern named '%1' is loaded").arg(pattern);
        else if (!inPreset.count(pattern.toStdString()))
            why = tr("pattern '%1' is not in preset '%2'").arg(pattern, m_preset);
        else if (!node)
            why = tr("version %1 has no node '%2'").arg(version()).arg(anchor);
        else {
            rewrite::Match m;
            m.pattern = pattern.toStdString();
            m.anchor = node;
            if (!m_session->apply(m))
                why = m_session->lastError().empty() ? tr("it does not apply") : QString::fromStdString(m_session->lastError());
        }
        if (!why.isEmpty()) {
            m_lastError = tr("Could not replay step %1 of %2 (%3 at %4): %5").arg(i + 1).arg(recorded.size()).arg(pattern, anchor, why);
            ok = false;
            break;
        }
    }
    announce();
    return ok;
}

std::vector<const rewrite::Pattern *> RewriteHistory::presetPatterns() const
{
    std::string error;
    return m_registry.preset(m_preset.toStdString(), error);
}

bool RewriteHistory::applyPlan(const rewrite::TunePlan &plan, const std::vector<const rewrite::Pattern *> &patterns, PlanApplied &out)
{
    if (!m_session || m_running)
        return false;
    m_doc.aboutToEdit();
    m_session->checkout(0);
    for (const auto &[pattern, anchor] : m_session->skipped()) // the search started from the original as given
        m_session->unskip(pattern, anchor);
    m_session->clearBreakpoints();
    m_session->setMaxSteps(SIZE_MAX);
    std::map<std::pair<std::string, std::string>, std::string> groupOf;
    m_session->setDecide([&](const rewrite::Pattern &p, const rewrite::Match &m) {
        const std::string group = p.name + "#" + rewrite::matchFingerprint(m);
        const int at = int(m_session->version());
        if (plan.droppedPatterns.count(p.name) || plan.droppedGroups.count(group)) {
            out.skips.push_back(
                {p.name, m.anchor->name(), plan.droppedPatterns.count(p.name) ? "pattern " + p.name : "group " + group, at});
            return false;
        }
        groupOf[{p.name, m.anchor->name()}] = group;
        return true;
    });
    // As replayPlan: each stage runs to its fixpoint with the families of the stages so far; a left-out
    // pattern stays in (the driver asks about its matches, so they become skips). replayPlan starts
    // each stage with a fresh session, which asks about every match again: so does this one.
    std::set<std::string> families;
    const auto stages = plan.applyNothing ? std::vector<std::string>{} : plan.order;
    for (size_t i = 0; i < stages.size(); ++i) {
        families.insert(stages[i]);
        std::vector<const rewrite::Pattern *> active;
        for (const rewrite::Pattern *p : patterns)
            if (stages[i].empty() || families.count(rewrite::patternFamily(*p)))
                active.push_back(p);
        if (i > 0)
            for (const auto &k : out.skips)
                m_session->unskip(k.pattern, k.anchor);
        m_session->setPatterns(active);
        m_session->run();
    }
    m_session->setDecide(nullptr);
    m_session->setPatterns(presetPatterns());
    for (const auto &b : m_breakpoints)
        m_session->addBreakpoint(b);
    for (size_t i = 0; i < m_session->version(); ++i) // no step applied: the line left is still there, ahead
        out.groups.push_back(groupOf[{m_session->history()[i].pattern, m_session->history()[i].anchor}]);
    Q_EMIT candidatesChanged();
    announce();
    return true;
}

rewrite::RunResult RewriteHistory::run(size_t limit)
{
    rewrite::RunResult total;
    if (!m_session || m_running)
        return total;
    m_doc.aboutToEdit();
    m_running = true;
    Q_EMIT busyChanged(true);
    const size_t before = m_session->version();
    // Slices of steps, with the events in between (progress, Stop); verified steps run the graph
    // each, so their slices are short.
    const size_t slice = m_verify ? 5 : 500;
    QElapsedTimer clock;
    clock.start();
    for (;;) {
        m_session->setMaxSteps(std::min(slice, limit - (m_session->version() - before)));
        rewrite::RunResult r = m_session->run();
        total.reason = r.reason;
        total.message = r.message;
        total.seconds += r.seconds;
        total.attempts += r.attempts;
        total.records.insert(total.records.end(), r.records.begin(), r.records.end());
        total.rollbacks.insert(total.rollbacks.end(), r.rollbacks.begin(), r.rollbacks.end());
        for (const auto &[p, n] : r.rewritesByPattern)
            total.rewritesByPattern[p] += n;
        if (r.reason != rewrite::StopReason::StepLimit || m_session->version() - before >= limit)
            break;
        // The candidates left are a lower bound of the steps to come (a step may make new ones).
        constexpr size_t kCount = 1000;
        RunProgress p;
        p.done = m_session->version() - before;
        p.left = m_session->candidates(kCount).size();
        p.leftCapped = p.left == kCount;
        p.seconds = double(clock.elapsed()) / 1000.0;
        p.etaSeconds = p.done ? p.seconds / double(p.done) * double(p.left) : 0;
        p.text = tr("%1 of ≥%2 steps, %3 s; about %4 s left")
                     .arg(p.done)
                     .arg(p.done + p.left)
                     .arg(p.seconds, 0, 'f', 1)
                     .arg(p.etaSeconds, 0, 'f', 0);
        if (p.leftCapped)
            p.text += tr(" (over %1 candidates)").arg(kCount);
        Q_EMIT runProgress(p);
        QCoreApplication::processEvents(); // Stop sets the session's stop request: the next slice returns Stopped
    }
    m_session->setMaxSteps(SIZE_MAX);
    total.steps = m_session->version() - before;
    if (total.reason == rewrite::StopReason::StepLimit && m_session->candidates(1).empty())
        total.reason = rewrite::StopReason::Fixpoint; // the limit fell on the last step
    m_running = false;
    Q_EMIT busyChanged(false);
    announce();
    return total;
}

void RewriteHistory::requestStop()
{
    if (m_session)
        m_session->requestStop();
}

std::vector<rewrite::VersionCopy> RewriteHistory::copyVersions(const std::vector<int> &versions, QString *error)
{
    if (!m_session || m_running) {
        *error = m_running ? tr("A rewrite run is in progress") : tr("No graph");
        return {};
    }
    std::vector<size_t> vs;
    for (int v : versions) {
        if (v < 0 || v > historySize()) {
            *error = tr("Version %1 is not in the history (0 to %2)").arg(v).arg(historySize());
            return {};
        }
        vs.push_back(size_t(v));
    }
    // Undo/redo keep erased nodes alive and put them back: after the walk the graph is the very
    // version it was, node for node, so nothing needs redrawing.
    m_doc.aboutToEdit();
    return rewrite::copyVersions(*m_session, vs);
}

std::vector<rewrite::VersionCopy> RewriteHistory::copyBranchTip(int index, QString *error)
{
    if (!m_session || m_running || index < 0 || size_t(index) >= branches().size()) {
        *error = m_running ? tr("A rewrite run is in progress") : tr("No branch %1 in the history").arg(index);
        return {};
    }
    const int back = version();
    const size_t had = branches().size();
    const int fork = int(branches()[size_t(index)].fork);
    if (!switchBranch(index))
        return {};
    std::vector<rewrite::VersionCopy> out;
    out.push_back({size_t(version()), tr("branch from version %1: %2").arg(fork).arg(versionLabel(version())).toStdString(),
                   m_session->graph().clone()});
    // The line left is kept as the last branch when it had steps after the fork: back onto it.
    if (branches().size() == had)
        switchBranch(int(had) - 1);
    checkout(back);
    return out;
}

} // namespace fxlens::views
