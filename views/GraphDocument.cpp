// SPDX-License-Identifier: MIT
#include "GraphDocument.h"
#include "Count.h"

#include "Autosave.h"
#include "BuiltinPatterns.h"
#include "ProfileStore.h"
#include "ProfilingJob.h"
#include "TuneJob.h"
#include "UserPatterns.h"
#include "io/GraphJson.h"
#include "io/PythonWriter.h"
#include "ir/GraphInfo.h"
#include "layout/Layered.h"
#include "rewrite/Matcher.h"
#include "rewrite/Session.h"

#include <QSaveFile>

#include <algorithm>
#include <unordered_map>

namespace fxlens::views {

GraphDocument::GraphDocument(const Services &services, QObject *parent) : QObject(parent)
{
    qRegisterMetaType<fxlens::views::MatchCounts>("fxlens::views::MatchCounts");
    m_registryError = QString::fromStdString(patterns::registerBuiltinPatterns(m_registry, services.patternDir));
    m_history = new RewriteHistory(*this, m_registry, services);
    m_profiles = new ProfileStore(*this);
    m_profiling = new ProfilingJob(*this, services.profile);
    m_tuning = new TuneJob(*this, services.makeCostModel);
    m_userPatterns = new UserPatterns(*this);
}

GraphDocument::~GraphDocument()
{
    m_profiling->stop();
    m_tuning->abandon();
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
    m_tuning->abandon(); // a search and its result belong to the file they were made on
    Q_EMIT aboutToReplace();
    m_history->attach(nullptr);
    m_tuning->clear();
    m_history->forgetFile();
    m_graph = std::move(r.value());
    m_file = path;
    m_profiles->reset(); // profiles belong to the graph they were recorded on
    setModified(false);
    Q_EMIT replaced(m_graph.get());
    m_history->attach(m_graph.get());
    m_profiles->loadBeside(path);
    countMatches();
    return true;
}

void GraphDocument::replaceGraph(std::unique_ptr<ir::Graph> g)
{
    waitForCopies();
    m_tuning->abandon();
    Q_EMIT aboutToReplace();
    m_history->attach(nullptr);
    m_tuning->clear();
    m_graph = std::move(g);
    setModified(true);
    Q_EMIT replaced(m_graph.get());
    m_history->attach(m_graph.get());
    m_profiles->rebind(); // the recovered graph is another version
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
    // The profiles go beside the graph, and come back with it.
    if (QString why; !m_profiles->saveBeside(path, &why)) {
        if (error)
            *error = tr("Saved the graph, but not its profiles: %1").arg(why);
        return false;
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
    // As the module boxes and the Inspector count: the ops drawn, the weights hidden with them.
    const layout::NodeCount split = layout::graphNodeCount(*m_graph);
    const QString nodes =
        split.weights ? tr("%1 (%2)").arg(counted(info.nodes, "node"), QString::fromStdString(split.text())) : counted(info.nodes, "node");
    return tr("%1 · %2 · depth %3 · %4 IR")
        .arg(nodes, counted(info.edges, "edge"))
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
    *message = py.unsupported.empty() ? tr("Wrote %1").arg(path)
                                      : tr("Wrote %1; %2 of unknown types raise NotImplementedError")
                                            .arg(path, counted(qint64(py.unsupported.size()), "call_module node"));
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

void GraphDocument::aboutToChangePatterns()
{
    m_tuning->abandon(); // a search reads the patterns
    waitForWorkers();
}

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

} // namespace fxlens::views
