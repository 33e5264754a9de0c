// SPDX-License-Identifier: MIT
// ProfilingJob: profiles versions of a document's history off the GUI thread (Services::profile).
// The graphs are copied when it starts; the results go to the document's ProfileStore, bound to
// their versions. One job at a time; cancel stops it after the version it is on.
#pragma once

#include "Services.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>

#include <atomic>
#include <memory>
#include <vector>

namespace fxlens::views {

class GraphDocument;

class ProfilingJob : public QObject {
    Q_OBJECT
public:
    ProfilingJob(GraphDocument &doc, ProfileService service);
    ~ProfilingJob() override;

    /// Whether the app can profile (Services::profile).
    bool available() const { return bool(m_service); }
    bool isRunning() const { return m_thread != nullptr; }
    /// Profiles versions of the history (numbers on the current line) on the local GPU: the graphs
    /// are copied now, and the results are added bound to their versions (finished). False with
    /// `error` when it cannot start (no profiler in this build, a job already running, a bad version).
    bool start(const std::vector<int> &versions, const ProfileRequest &settings, QString *error);
    /// Asks the job to stop after the version it is on (the ones done are kept).
    void cancel();
    /// Cancels and waits for the thread (the document is going away).
    void stop();

Q_SIGNALS:
    /// `done` of `total` versions profiled.
    void progress(int done, int total);
    /// The job ended: how many profiles it added and what to tell the user (device, CPU fallback,
    /// cancel or error).
    void finished(int added, const QString &message, bool ok);

private:
    GraphDocument &m_doc;
    ProfileService m_service;
    QPointer<QThread> m_thread;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

} // namespace fxlens::views
