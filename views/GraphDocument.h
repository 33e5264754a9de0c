// SPDX-License-Identifier: MIT
// GraphDocument: the open graph and everything bound to it — its file and modified state, the
// pattern registry with the user's patterns (UserPatterns), the rewrite session with its history
// (RewriteHistory), the profiles recorded on its versions (ProfileStore) and the job that records
// them (ProfilingJob), the search that tunes its history and its result (TuneJob), and the worker
// that counts pattern matches. It is the only place that knows
// about worker threads: panels hear about changes through its signals (values and the graph to
// show), never by re-reading a graph while it is being replaced.
//
// Lifetime rules (one class's invariant): the graph is replaced only after aboutToReplace() has
// been emitted (panels drop their pointers) and workers are done copying it; it is edited only
// after aboutToEdit(), which waits for those copies; workers own their copies and report by value.
#pragma once

#include "RewriteHistory.h"
#include "Services.h"
#include "ir/Graph.h"
#include "rewrite/Pattern.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fxlens::views {

/// What the match-counting worker found, by value: candidates per pattern and the anchors
/// (positions in program order of the graph the job was started on).
struct MatchCounts {
    uint64_t job = 0;
    std::map<std::string, int> perPattern;
    std::vector<size_t> anchorPositions;
};

class ProfileStore;
class ProfilingJob;
class TuneJob;
class UserPatterns;

class GraphDocument : public QObject {
    Q_OBJECT
public:
    explicit GraphDocument(const Services &services, QObject *parent = nullptr);
    ~GraphDocument() override;

    const ir::Graph *graph() const { return m_graph.get(); }
    /// The graph to edit: only the rewrite debugger does, between aboutToEdit() and edited().
    ir::Graph *editableGraph() { return m_graph.get(); }
    QString file() const { return m_file; }
    bool isModified() const { return m_modified; }
    rewrite::PatternRegistry &registry() { return m_registry; }
    const rewrite::PatternRegistry &registry() const { return m_registry; }
    /// "552 nodes · 600 edges · depth 90 · aten IR" (the status bar's).
    QString statsText() const;
    /// Why the built-in patterns did not all load ("" when they did).
    QString registryError() const { return m_registryError; }

    /// Reads a graph file; on failure the current graph stays and `error` says why.
    bool open(const QString &path, QString *error);
    /// Replaces the graph (a recovered autosave), keeping the file name; modified.
    void replaceGraph(std::unique_ptr<ir::Graph> g);
    /// Writes the graph as it is now (.json, .json.gz); the file becomes `path`, unmodified.
    bool save(const QString &path, QString *error);
    void setModified(bool modified);
    /// Writes the graph as a runnable Python module (io::writePython), atomically; `message` says
    /// what was written or why not.
    bool exportPython(const QString &path, QString *message) const;

    /// Before an edit: waits until every worker has its own copy of the graph.
    void aboutToEdit();
    /// After an edit (a step, undo, redo): modified, and the matches are counted again.
    void edited();
    /// Before the pattern set changes (the pattern editor): waits for every worker, which reads patterns.
    void aboutToChangePatterns();
    /// Counts every pattern's candidates on a copy of the graph, off the GUI thread; the result
    /// comes as matchesCounted() (a later job supersedes an earlier one).
    void countMatches();

    /// The rewrite session on this graph, with its history.
    RewriteHistory *history() const { return m_history; }

    /// The patterns the user added to the registry (the Pattern Editor), kept across files.
    UserPatterns &userPatterns() { return *m_userPatterns; }
    const UserPatterns &userPatterns() const { return *m_userPatterns; }

    /// The profiles recorded on the graph's versions.
    ProfileStore &profiles() { return *m_profiles; }
    const ProfileStore &profiles() const { return *m_profiles; }
    /// Profiles versions of the history off the GUI thread, into profiles().
    ProfilingJob &profiling() { return *m_profiling; }
    /// Rewrite ▸ Tune: the search off the GUI thread and its last result (none for a new file).
    TuneJob &tuning() { return *m_tuning; }
    const TuneJob &tuning() const { return *m_tuning; }

Q_SIGNALS:
    /// The graph is about to be replaced or freed: drop every pointer into it.
    void aboutToReplace();
    /// A new graph (opened or recovered); nullptr never.
    void replaced(const ir::Graph *graph);
    /// The graph was edited in place (same object).
    void changed(const ir::Graph *graph);
    void modifiedChanged(bool modified);
    void matchesCounted(const fxlens::views::MatchCounts &counts);

private:
    void waitForCopies();
    void waitForWorkers();

    std::shared_ptr<ir::Graph> m_graph; ///< shared with workers until they have copied it
    QString m_file;
    bool m_modified = false;
    rewrite::PatternRegistry m_registry;
    QString m_registryError;
    uint64_t m_job = 0;
    std::vector<QPointer<QThread>> m_workers;
    /// Set by each worker once its copy of the graph is made: an edit waits for that only.
    struct CopyDone {
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
    };
    std::vector<std::shared_ptr<CopyDone>> m_copies;
    RewriteHistory *m_history = nullptr;
    ProfileStore *m_profiles = nullptr;
    ProfilingJob *m_profiling = nullptr;
    TuneJob *m_tuning = nullptr;
    UserPatterns *m_userPatterns = nullptr;
};

} // namespace fxlens::views
