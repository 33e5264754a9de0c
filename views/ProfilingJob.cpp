// SPDX-License-Identifier: MIT
#include "ProfilingJob.h"
#include "Count.h"

#include "GraphDocument.h"
#include "ProfileStore.h"

#include <QFileInfo>

namespace fxlens::views {

ProfilingJob::ProfilingJob(GraphDocument &doc, ProfileService service) : QObject(&doc), m_doc(doc), m_service(std::move(service)) {}

ProfilingJob::~ProfilingJob() { stop(); }

void ProfilingJob::stop()
{
    if (m_thread) { // it profiles copies: stop it after the version it is on
        cancel();
        m_thread->wait();
    }
}

void ProfilingJob::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
}

bool ProfilingJob::start(const std::vector<int> &versions, const ProfileRequest &settings, QString *error)
{
    RewriteHistory *history = m_doc.history();
    if (!m_service) {
        *error = tr("This build cannot run graphs (no LibTorch executor), so it cannot profile; open a saved profile instead");
        return false;
    }
    if (m_thread) {
        *error = tr("A profiling job is running; wait for it or cancel it");
        return false;
    }
    if (!m_doc.graph() || versions.empty()) {
        *error = tr("No version to profile");
        return false;
    }
    if (history->isRunning()) {
        *error = tr("A rewrite run is in progress; profile when it has stopped");
        return false;
    }
    // Copies of each version, made now on the GUI thread (the history walks there and back); the
    // job owns them.
    auto copies = std::make_shared<std::vector<rewrite::VersionCopy>>(history->copyVersions(versions, error));
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
        ids.push_back(history->versionId(int(c.version)));
    }
    const QString file = m_doc.file();
    if (request->graphName.empty())
        request->graphName = QFileInfo(file).fileName().toStdString();
    if (request->graphDir.empty() && !file.isEmpty())
        request->graphDir = QFileInfo(file).absolutePath().toStdString();
    auto outcome = std::make_shared<ProfileOutcome>();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancel;
    QPointer<ProfilingJob> self(this);
    const ProfileService service = m_service;
    m_thread = QThread::create([copies, request, outcome, cancel, service, self] {
        *outcome = service(*request, [&](size_t done, size_t total) {
            if (self) // the job lives on the GUI thread: the signal is queued there
                QMetaObject::invokeMethod(
                    self,
                    [self, done, total] {
                        if (self)
                            Q_EMIT self->progress(int(done), int(total));
                    },
                    Qt::QueuedConnection);
            return !cancel->load();
        });
    });
    connect(m_thread, &QThread::finished, this, [this, outcome, ids] {
        m_thread->deleteLater();
        m_thread = nullptr;
        const int added = int(outcome->profiles.size());
        if (added > 0)
            m_doc.profiles().add(std::move(outcome->profiles), std::vector<uint64_t>(ids.begin(), ids.begin() + added));
        QString message;
        const bool ok = outcome->error.empty();
        if (!ok)
            message = tr("Profiling failed: %1").arg(QString::fromStdString(outcome->error));
        else
            message = tr("Profiled %1 on %2").arg(counted(added, "version"), QString::fromStdString(outcome->device));
        if (outcome->cancelled)
            message += tr(" (cancelled: %1 of %2 done)").arg(added).arg(ids.size());
        if (!outcome->note.empty())
            message += QStringLiteral(". ") + QString::fromStdString(outcome->note);
        Q_EMIT finished(added, message, ok);
    });
    m_thread->start();
    Q_EMIT progress(0, int(copies->size()));
    return true;
}

} // namespace fxlens::views
