// SPDX-License-Identifier: MIT
// Rewrite ▸ Tune (see TuneJob.h).
#include "TuneJob.h"
#include "Count.h"

#include "GraphDocument.h"
#include "RewriteHistory.h"
#include "io/GraphJson.h"
#include "ir/GraphInfo.h"
#include "report/TuneReport.h"

#include <QFileInfo>

#include <atomic>
#include <chrono>
#include <cmath>

namespace fxlens::views {

/// One search: what it works on (its own copies), its stop flag and its result. Shared by the
/// search's thread and the job until the thread is done.
struct TuneJob::State {
    std::unique_ptr<ir::Graph> original;
    std::vector<const rewrite::Pattern *> patterns;
    CostModelRequest request;
    TuneSettings settings;
    std::atomic<bool> stop{false};
    rewrite::TuneResult result;
    std::string note, error;
    QString file;
};

QString TuneJob::msText(double seconds) { return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'f', 3); }

QString TuneJob::deltaText(double seconds)
{
    return QStringLiteral("%1%2 ms").arg(seconds >= 0 ? QStringLiteral("+") : QStringLiteral("−")).arg(std::abs(seconds) * 1e3, 0, 'f', 3);
}

TuneJob::TuneJob(GraphDocument &doc, CostModelFactory factory) : QObject(&doc), m_doc(doc), m_factory(std::move(factory))
{
    qRegisterMetaType<fxlens::views::TuneProgress>("fxlens::views::TuneProgress");
    qRegisterMetaType<fxlens::views::TuneSettings>("fxlens::views::TuneSettings");
}

TuneJob::~TuneJob() { abandon(); }

QString TuneJob::unavailableReason()
{
    return tr("This build cannot run graphs (no LibTorch executor), so it cannot measure versions to tune; "
              "`fxlens-cli tune` in a build with LibTorch can");
}

bool TuneJob::start(const TuneSettings &settings, QString *error)
{
    RewriteHistory *history = m_doc.history();
    if (!m_factory) {
        *error = unavailableReason();
        return false;
    }
    if (m_thread) {
        *error = tr("A search is running; wait for it or stop it");
        return false;
    }
    if (!m_doc.graph() || !history->live()) {
        *error = tr("No graph to tune");
        return false;
    }
    if (history->isRunning()) {
        *error = tr("A rewrite run is in progress; tune when it has stopped");
        return false;
    }
    auto state = std::make_shared<State>();
    state->patterns = history->presetPatterns();
    if (state->patterns.empty()) {
        *error = tr("Preset '%1' has no pattern to tune").arg(history->preset());
        return false;
    }
    auto copies = history->copyVersions({0}, error); // the session's original, as the search's own copy
    if (copies.empty())
        return false;
    state->original = std::move(copies.front().graph);
    state->settings = settings;
    state->request.iterations = settings.iterations;
    state->request.freezeWeights = settings.freezeWeights;
    state->file = m_doc.file();
    if (!state->file.isEmpty())
        state->request.graphDir = QFileInfo(state->file).absolutePath().toStdString();
    const uint64_t generation = ++m_generation;
    QPointer<TuneJob> self(this);
    const CostModelFactory factory = m_factory;
    QThread *thread = QThread::create([state, factory, self, generation] {
        std::string error;
        auto cost = factory(*state->original, state->request, state->note, error);
        if (!cost) {
            state->error = error.empty() ? std::string("the cost model could not be made") : error;
            return;
        }
        rewrite::TuneConfig cfg;
        cfg.budgetSeconds = state->settings.budgetSeconds;
        cfg.checked = true; // the app's session checks every step: the search replays the same way
        cfg.stop = &state->stop;
        const auto t0 = std::chrono::steady_clock::now();
        TuneProgress p;
        p.budgetSeconds = state->settings.budgetSeconds;
        cfg.onTrial = [&](const rewrite::TuneTrial &t) {
            ++p.measurements;
            if (t.error.empty()) {
                if (t.kind == "original")
                    p.originalSeconds = t.seconds;
                else if (t.kind == "greedy")
                    p.greedySeconds = t.seconds;
                if (p.bestSeconds == 0 || t.seconds < p.bestSeconds)
                    p.bestSeconds = t.seconds;
            }
            p.elapsedSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            p.last = QString::fromStdString(t.kind + ": " + t.decision);
            QMetaObject::invokeMethod(
                self, // the job lives on the GUI thread: the signal is queued there
                [self, generation, p] {
                    if (self && self->m_generation == generation)
                        Q_EMIT self->progress(p);
                },
                Qt::QueuedConnection);
        };
        state->result = rewrite::tune(*state->original, state->patterns, *cost, cfg);
    });
    thread->setParent(this);
    m_thread = thread;
    m_running = state;
    connect(thread, &QThread::finished, this, [this, thread, state, generation] {
        thread->deleteLater();
        if (m_thread == thread) {
            m_thread = nullptr;
            m_running.reset();
        }
        if (generation == m_generation)
            finish(*state);
    });
    thread->start();
    Q_EMIT started(settings);
    return true;
}

void TuneJob::requestStop()
{
    if (m_running)
        m_running->stop.store(true);
}

void TuneJob::abandon()
{
    if (!m_thread)
        return;
    ++m_generation; // its finish reports nothing
    m_running->stop.store(true);
    m_thread->wait();
    m_thread = nullptr;
    m_running.reset();
    Q_EMIT finished(false, QString()); // nothing to say: the window is closing or another file comes
}

void TuneJob::clear()
{
    const bool had = m_result != nullptr;
    m_result.reset();
    m_original.reset();
    m_note.clear();
    m_originalId = m_tunedId = 0;
    m_stepDelta.clear();
    m_leftOut.clear();
    if (had)
        Q_EMIT resultChanged();
}

void TuneJob::finish(State &s)
{
    const std::string error = !s.error.empty() ? s.error : s.result.error;
    if (!error.empty()) {
        Q_EMIT finished(false, tr("Tune failed: %1").arg(QString::fromStdString(error)));
        return;
    }
    RewriteHistory *history = m_doc.history();
    auto result = std::make_shared<rewrite::TuneResult>(std::move(s.result));
    PlanApplied applied;
    if (!history->applyPlan(result->best, s.patterns, applied)) {
        Q_EMIT finished(false, tr("Tune finished, but its plan could not be applied: a rewrite run is in progress"));
        return;
    }
    clear();
    m_result = result;
    m_original = std::shared_ptr<const ir::Graph>(std::move(s.original));
    m_note = s.note;
    m_originalId = history->versionId(0);
    m_tunedId = history->currentId();
    // A step's Δ: the measurement that left its group (or its whole pattern) out, against the best then.
    std::map<std::string, double> measured;
    for (const auto &t : result->trials)
        if (!t.dropped.empty() && t.error.empty() && t.baseSeconds > 0)
            measured[t.dropped] = t.baseSeconds - t.seconds;
    for (size_t i = 0; i < applied.groups.size(); ++i) {
        auto it = measured.find(applied.groups[i]);
        if (it == measured.end())
            it = measured.find(history->steps()[i].pattern);
        if (it != measured.end())
            m_stepDelta[history->versionId(int(i) + 1)] = it->second;
    }
    std::map<std::string, double> cost;
    for (const auto &l : result->leftOut)
        cost[l.what] = l.deltaSeconds;
    for (const auto &k : applied.skips)
        m_leftOut.push_back({k.pattern, k.anchor, history->versionId(k.version), cost[k.leftOut]});

    const rewrite::TuneResult &r = *result;
    QString message = tr("Tuned in %1 s (%2%3): %4, %5 against greedy %6 and original %7")
                          .arg(r.seconds, 0, 'f', 1)
                          .arg(counted(qint64(r.trials.size()), "measurement"))
                          .arg(r.stopped             ? tr(", stopped")
                                   : r.budgetReached ? tr(", budget reached")
                                                     : QString())
                          .arg(counted(qint64(applied.groups.size()), "step"), msText(r.tuned.seconds), msText(r.greedy.seconds),
                               msText(r.original.seconds));
    for (const auto &l : r.leftOut)
        message += tr("; left out for cost: %1 (%2)").arg(QString::fromStdString(l.what), deltaText(l.deltaSeconds));
    if (r.graph && m_doc.graph() && ir::fingerprint(*r.graph) != ir::fingerprint(*m_doc.graph()))
        message += tr(". The session's version differs from the search's (a step was rolled back when applied)");
    Q_EMIT resultChanged();
    Q_EMIT finished(true, message);
}

std::optional<double> TuneJob::measuredSeconds(uint64_t versionId) const
{
    if (!m_result || versionId == 0)
        return std::nullopt;
    if (versionId == m_tunedId)
        return m_result->tuned.seconds;
    if (versionId == m_originalId)
        return m_result->original.seconds;
    return std::nullopt;
}

std::optional<double> TuneJob::stepDelta(uint64_t versionId) const
{
    const auto it = m_stepDelta.find(versionId);
    return it == m_stepDelta.end() ? std::nullopt : std::optional<double>(it->second);
}

QString TuneJob::leftOutReason(const std::string &pattern, const std::string &anchor) const
{
    for (const auto &l : m_leftOut)
        if (l.pattern == pattern && l.anchor == anchor)
            return tr("left out for cost (%1)").arg(deltaText(l.deltaSeconds));
    return {};
}

bool TuneJob::exportReport(const QString &path, QString *message) const
{
    if (!m_result || !m_original) {
        *message = tr("No tune result to report: Rewrite ▸ Tune… first");
        return false;
    }
    report::ReportInfo info;
    info.graphFile = QFileInfo(m_doc.file()).fileName().toStdString();
    info.costNote = m_note;
    info.device = m_note.substr(0, m_note.find(',')); // the note starts with the device ("cuda:0, ...")
    if (auto w = io::writeTextFile(path.toStdString(), report::tuneReportHtml(*m_original, *m_result, info)); !w) {
        *message = tr("Cannot write the report: %1").arg(QString::fromStdString(w.error().toString()));
        return false;
    }
    *message = tr("Wrote the tune report %1").arg(path);
    return true;
}

} // namespace fxlens::views
