// SPDX-License-Identifier: MIT
#include "GraphDocument.h"

#include "Autosave.h"
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "io/PythonWriter.h"
#include "ir/GraphInfo.h"
#include "profile/Profile.h"
#include "rewrite/Matcher.h"
#include "rewrite/Session.h"

#include <QFileInfo>
#include <QSaveFile>

#include <algorithm>
#include <unordered_map>

namespace fxlens::views {

GraphDocument::GraphDocument(const Services &services, QObject *parent) : QObject(parent), m_services(services)
{
    qRegisterMetaType<fxlens::views::MatchCounts>("fxlens::views::MatchCounts");
    m_registryError = QString::fromStdString(patterns::registerBuiltinPatterns(m_registry, services.patternDir));
    m_history = new RewriteHistory(*this, m_registry, services);
    // A version on screen that a profile was recorded on binds it (a profile set opened first, the
    // history walked later).
    connect(m_history, &RewriteHistory::versionChanged, this, [this] {
        if (bindProfiles())
            Q_EMIT profilesChanged();
    });
}

GraphDocument::~GraphDocument()
{
    if (m_profiler) { // it profiles copies: stop it after the version it is on
        cancelProfiling();
        m_profiler->wait();
    }
    waitForWorkers();
    m_history->attach(nullptr); // the session observes the graph: it goes first
}

bool GraphDocument::open(const QString &path, QString *error)
{
    waitForCopies();
    auto r = io::readGraphFile(path.toStdString());
    if (!r) {
        if (error)
            *error = QString::fromStdString(r.error().toString());
        return false;
    }
    Q_EMIT aboutToReplace();
    m_history->attach(nullptr);
    m_graph = std::move(r.value());
    m_file = path;
    m_profiles.clear(); // profiles belong to the graph they were recorded on
    setModified(false);
    Q_EMIT replaced(m_graph.get());
    m_history->attach(m_graph.get());
    loadProfilesBeside(path);
    Q_EMIT profilesChanged();
    countMatches();
    return true;
}

void GraphDocument::replaceGraph(std::unique_ptr<ir::Graph> g)
{
    waitForCopies();
    Q_EMIT aboutToReplace();
    m_history->attach(nullptr);
    m_graph = std::move(g);
    setModified(true);
    Q_EMIT replaced(m_graph.get());
    m_history->attach(m_graph.get());
    for (auto &p : m_profiles) // the recovered graph is another version
        p.versionId = 0;
    bindProfiles();
    Q_EMIT profilesChanged();
    countMatches();
}

bool GraphDocument::save(const QString &path, QString *error)
{
    if (!m_graph)
        return false;
    auto r = io::writeGraphFile(*m_graph, path.toStdString());
    if (!r) {
        if (error)
            *error = QString::fromStdString(r.error().toString());
        return false;
    }
    if (!m_profiles.empty()) { // the profiles go beside the graph, and come back with it
        std::vector<const prof::Profile *> ps;
        for (const auto &p : m_profiles)
            ps.push_back(p.profile.get());
        if (auto w = prof::writeProfiles(ps, profilesFileFor(path).toStdString()); !w) {
            if (error)
                *error = tr("Saved the graph, but not its profiles: %1").arg(QString::fromStdString(w.error().toString()));
            return false;
        }
    }
    Autosave::remove(m_file); // saved: nothing left to recover
    m_file = path;
    Autosave::remove(m_file);
    setModified(false);
    return true;
}

QString GraphDocument::statsText() const
{
    if (!m_graph)
        return {};
    const auto info = ir::computeGraphInfo(*m_graph);
    return tr("%1 · %2 · depth %3 · %4 IR")
        .arg(info.nodes == 1 ? tr("1 node") : tr("%1 nodes").arg(info.nodes))
        .arg(info.edges == 1 ? tr("1 edge") : tr("%1 edges").arg(info.edges))
        .arg(info.depth)
        .arg(QString::fromStdString(m_graph->irLevel));
}

bool GraphDocument::exportPython(const QString &path, QString *message) const
{
    if (!m_graph)
        return false;
    auto py = io::writePython(*m_graph);
    if (!py.error.empty()) {
        *message = tr("Cannot export as Python: %1").arg(QString::fromStdString(py.error));
        return false;
    }
    QSaveFile f(path); // atomic: the previous file stays until the new one is complete
    if (!f.open(QIODevice::WriteOnly) || f.write(QByteArray::fromStdString(py.code)) < 0 || !f.commit()) {
        *message = tr("Cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    *message = py.unsupported.empty()
        ? tr("Wrote %1").arg(path)
        : tr("Wrote %1; %2 call_module node(s) of unknown types raise NotImplementedError").arg(path).arg(py.unsupported.size());
    return true;
}

void GraphDocument::setModified(bool modified)
{
    if (modified == m_modified)
        return;
    m_modified = modified;
    Q_EMIT modifiedChanged(modified);
}

void GraphDocument::aboutToEdit() { waitForCopies(); }

void GraphDocument::edited()
{
    if (!m_graph)
        return;
    setModified(true);
    Q_EMIT changed(m_graph.get());
    countMatches();
}

void GraphDocument::aboutToChangePatterns() { waitForWorkers(); }

void GraphDocument::waitForCopies()
{
    // The workers count on their own copies: only the copying reads the document's graph.
    for (const auto &c : m_copies) {
        std::unique_lock<std::mutex> lock(c->mutex);
        c->cv.wait(lock, [&] { return c->done; });
    }
    m_copies.clear();
}

void GraphDocument::waitForWorkers()
{
    for (const auto &t : m_workers)
        if (t)
            t->wait();
    m_workers.clear();
    m_copies.clear();
}

void GraphDocument::countMatches()
{
    if (!m_graph)
        return;
    // The matches of every pattern the Patterns panel lists (rewrite::findMatches, the engine's
    // rules, nothing applied), counted on a copy of the graph that the worker makes and owns: the
    // document's graph may be edited meanwhile. Seconds for a 100k-node graph, and the window stays
    // live. The worker shares the graph until it has copied it.
    std::shared_ptr<const ir::Graph> source = m_graph;
    auto result = std::make_shared<MatchCounts>();
    result->job = ++m_job;
    auto patterns = m_registry.all();
    auto copied = std::make_shared<CopyDone>();
    m_copies.push_back(copied);
    QThread *t = QThread::create([source, result, patterns, copied] {
        auto copy = source->clone();
        {
            std::lock_guard<std::mutex> lock(copied->mutex);
            copied->done = true;
        }
        copied->cv.notify_all();
        std::unordered_map<const ir::Node *, size_t> pos;
        size_t i = 0;
        for (ir::Node *n = copy->first(); n; n = n->next())
            pos[n] = i++;
        for (const auto &m : rewrite::findMatches(*copy, patterns)) {
            ++result->perPattern[m.pattern];
            result->anchorPositions.push_back(pos[m.anchor]);
        }
    });
    connect(t, &QThread::finished, t, &QObject::deleteLater);
    m_workers.erase(std::remove_if(m_workers.begin(), m_workers.end(), [](const QPointer<QThread> &w) { return w.isNull(); }),
                    m_workers.end());
    m_workers.push_back(t);
    connect(t, &QThread::finished, this, [this, result] {
        if (result->job == m_job) // else another graph or version since
            Q_EMIT matchesCounted(*result);
    });
    t->start();
}

// --- profiles ------------------------------------------------------------------------------------

QString GraphDocument::profilesFileFor(const QString &graphFile)
{
    QString stem = graphFile;
    for (const QString &ext : {QStringLiteral(".json.gz"), QStringLiteral(".json")})
        if (stem.endsWith(ext)) {
            stem.chop(ext.size());
            break;
        }
    return stem + QStringLiteral(".fxprof.json.gz");
}

void GraphDocument::loadProfilesBeside(const QString &graphFile)
{
    m_profileError.clear();
    const QString beside = profilesFileFor(graphFile);
    if (!QFileInfo::exists(beside))
        return;
    QString error;
    if (!openProfiles(beside, &error))
        m_profileError = error;
}

/// The profile was recorded on `g` as it is: the same fingerprint, or (older files without one)
/// every node by name, op and target in program order.
static bool recordedOn(const prof::Profile &p, const ir::Graph &g, const std::string &hash)
{
    if (!p.graphHash.empty())
        return p.graphHash == hash;
    if (p.nodes.size() != g.size())
        return false;
    size_t i = 0;
    for (const ir::Node *n = g.first(); n; n = n->next(), ++i) {
        const auto &info = p.nodes[i];
        if (info.name != n->name() || info.op != ir::opKindName(n->op()) || info.target != n->target())
            return false;
    }
    return true;
}

bool GraphDocument::bindProfiles()
{
    // The fingerprint (every node printed) is taken only when an unbound profile has as many nodes
    // as the graph: walking the history with a profile set open stays cheap.
    if (!m_graph || std::none_of(m_profiles.begin(), m_profiles.end(), [&](const DocProfile &p) {
            return p.versionId == 0 && p.profile->nodes.size() == m_graph->size();
        }))
        return false;
    const std::string hash = ir::fingerprintHex(*m_graph);
    bool bound = false;
    for (auto &p : m_profiles)
        if (p.versionId == 0 && recordedOn(*p.profile, *m_graph, hash)) {
            p.versionId = m_history->currentId();
            bound = true;
        }
    return bound;
}

int GraphDocument::openProfiles(const QString &path, QString *error)
{
    auto r = prof::readProfiles(path.toStdString());
    if (!r) {
        Diagnostic d = r.error();
        if (d.file.empty())
            d.file = path.toStdString();
        *error = QString::fromStdString(d.toString());
        return 0;
    }
    for (auto &p : r.value())
        m_profiles.push_back({std::make_shared<const prof::Profile>(std::move(p)), path, 0});
    bindProfiles();
    Q_EMIT profilesChanged();
    return int(r.value().size());
}

int GraphDocument::addProfiles(std::vector<prof::Profile> profiles, const std::vector<uint64_t> &versionIds)
{
    const int first = int(m_profiles.size());
    for (size_t i = 0; i < profiles.size(); ++i)
        m_profiles.push_back({std::make_shared<const prof::Profile>(std::move(profiles[i])), QString(), i < versionIds.size() ? versionIds[i] : 0});
    if (!profiles.empty()) {
        setModified(true); // profiles are saved with the document
        Q_EMIT profilesChanged();
    }
    return first;
}

void GraphDocument::closeProfiles()
{
    if (m_profiles.empty())
        return;
    m_profiles.clear();
    Q_EMIT profilesChanged();
}

int GraphDocument::currentProfile() const
{
    const uint64_t id = m_history->currentId();
    for (int i = int(m_profiles.size()) - 1; i >= 0; --i)
        if (m_profiles[size_t(i)].versionId == id && id != 0)
            return i;
    return -1;
}

QString GraphDocument::boundText(int index) const
{
    if (index < 0 || size_t(index) >= m_profiles.size())
        return {};
    const auto &p = m_profiles[size_t(index)];
    if (p.versionId == 0)
        return tr("not recorded on this graph as it is now (another graph, or a version not on screen yet)");
    if (p.versionId == m_history->currentId())
        return tr("recorded on the version on screen");
    for (int v = 0; v <= m_history->historySize(); ++v)
        if (m_history->versionId(v) == p.versionId)
            return tr("recorded on version %1, not the one on screen").arg(v);
    return tr("recorded on a version of another branch");
}

// --- profiling job ---------------------------------------------------------------------------------

bool GraphDocument::profileVersions(const std::vector<int> &versions, const ProfileRequest &settings, QString *error)
{
    if (!m_services.profile) {
        *error = tr("This build cannot run graphs (no LibTorch executor), so it cannot profile; open a saved profile instead");
        return false;
    }
    if (m_profiler) {
        *error = tr("A profiling job is running; wait for it or cancel it");
        return false;
    }
    if (!m_graph || versions.empty()) {
        *error = tr("No version to profile");
        return false;
    }
    if (m_history->isRunning()) {
        *error = tr("A rewrite run is in progress; profile when it has stopped");
        return false;
    }
    // Copies of each version, made now on the GUI thread (the history walks there and back); the
    // job owns them.
    auto copies = std::make_shared<std::vector<rewrite::VersionCopy>>(m_history->copyVersions(versions, error));
    if (copies->empty())
        return false;
    auto request = std::make_shared<ProfileRequest>(settings);
    std::vector<uint64_t> ids;
    request->graphs.clear();
    request->labels.clear();
    request->versionIds.clear();
    for (const auto &c : *copies) {
        request->graphs.push_back(c.graph.get());
        request->labels.push_back(c.label);
        request->versionIds.push_back(int(c.version));
        ids.push_back(m_history->versionId(int(c.version)));
    }
    if (request->graphName.empty())
        request->graphName = QFileInfo(m_file).fileName().toStdString();
    if (request->graphDir.empty() && !m_file.isEmpty())
        request->graphDir = QFileInfo(m_file).absolutePath().toStdString();
    auto outcome = std::make_shared<ProfileOutcome>();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_cancelProfiling = cancel;
    QPointer<GraphDocument> self(this);
    const ProfileService service = m_services.profile;
    m_profiler = QThread::create([copies, request, outcome, cancel, service, self] {
        *outcome = service(*request, [&](size_t done, size_t total) {
            if (self) // the document lives on the GUI thread: the signal is queued there
                QMetaObject::invokeMethod(self, [self, done, total] {
                    if (self)
                        Q_EMIT self->profilingProgress(int(done), int(total));
                }, Qt::QueuedConnection);
            return !cancel->load();
        });
    });
    connect(m_profiler, &QThread::finished, this, [this, outcome, ids] {
        m_profiler->deleteLater();
        m_profiler = nullptr;
        const int added = int(outcome->profiles.size());
        if (added > 0)
            addProfiles(std::move(outcome->profiles), std::vector<uint64_t>(ids.begin(), ids.begin() + added));
        QString message;
        const bool ok = outcome->error.empty();
        if (!ok)
            message = tr("Profiling failed: %1").arg(QString::fromStdString(outcome->error));
        else
            message = tr("Profiled %n version(s) on %1", nullptr, added).arg(QString::fromStdString(outcome->device));
        if (outcome->cancelled)
            message += tr(" (cancelled: %1 of %2 done)").arg(added).arg(ids.size());
        if (!outcome->note.empty())
            message += QStringLiteral(". ") + QString::fromStdString(outcome->note);
        Q_EMIT profilingFinished(added, message, ok);
    });
    m_profiler->start();
    Q_EMIT profilingProgress(0, int(copies->size()));
    return true;
}

void GraphDocument::cancelProfiling()
{
    if (m_cancelProfiling)
        m_cancelProfiling->store(true);
}

} // namespace fxlens::views
