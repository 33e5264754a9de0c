// SPDX-License-Identifier: MIT
// TuneJob: Rewrite ▸ Tune for a document. rewrite::tune searches, off the GUI thread, which of the
// preset's patterns, family orders and match groups to apply to the session's original version,
// measuring whole versions with the app's cost model (Services::makeCostModel); progress comes after
// every measurement, Stop ends the search with the best version so far. On finish the session goes
// to version 0 and applies the plan as steps (RewriteHistory::applyPlan): the user steps through,
// undoes, verifies and saves it like any run; the line it leaves is kept as a branch. The result stays
// with the document until another file opens: the measured times of the original and the tuned
// version, each step's measured Δ, the matches left out for cost, the search for the Versions chart
// and the HTML report (report::tuneReportHtml).
#pragma once

#include "Services.h"
#include "rewrite/Tune.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fxlens::views {

class GraphDocument;

/// What the Tune dialog asks.
struct TuneSettings {
    double budgetSeconds = 120; ///< no new measurement starts after this
    int iterations = 10;        ///< timed runs per measurement (their median counts)
    bool freezeWeights = false;
};

/// The search between two measurements, by value.
struct TuneProgress {
    size_t measurements = 0;
    double originalSeconds = 0, greedySeconds = 0; ///< 0 until measured
    double bestSeconds = 0;                        ///< the fastest version the search would keep so far
    double elapsedSeconds = 0, budgetSeconds = 0;
    QString last; ///< what the last measurement tried
};

class TuneJob : public QObject {
    Q_OBJECT
public:
    TuneJob(GraphDocument &doc, CostModelFactory factory);
    ~TuneJob() override;

    /// Whether the app can measure versions (Services::makeCostModel).
    bool available() const { return bool(m_factory); }
    /// Why Tune is disabled in this build.
    static QString unavailableReason();
    bool isRunning() const { return m_thread != nullptr; }
    /// Starts the search from a copy of the session's version 0 with the preset's patterns. False
    /// with `error` when it cannot (no cost model, no graph, a run or a search already going).
    bool start(const TuneSettings &settings, QString *error);
    /// Asks the search to stop after the measurement it is on; it finishes with the best so far.
    void requestStop();
    /// Stops a search in progress, waits for it and drops it (a new file, the window closing).
    void abandon();
    /// Forgets the last result (a new file starts without one).
    void clear();

    /// The last search's result, nullptr before one finished on this file.
    const rewrite::TuneResult *result() const { return m_result.get(); }
    /// The version the search started from.
    const ir::Graph *original() const { return m_original.get(); }
    /// How versions were measured ("cuda:0, CUDA graph replay, median of 10 after 3 warm-up").
    QString note() const { return QString::fromStdString(m_note); }
    /// The measured time of a version (by RewriteHistory::versionId): the original and the tuned one.
    std::optional<double> measuredSeconds(uint64_t versionId) const;
    /// For the step that made a version of the tuned line: its group's measured Δ (time with the group
    /// minus without it), when the search measured the group or its pattern.
    std::optional<double> stepDelta(uint64_t versionId) const;
    /// A match the plan left out, as the session skipped it, with the measured cost of keeping it.
    struct LeftOutStep {
        std::string pattern, anchor;
        uint64_t atVersion = 0; ///< the id of the version it was left out at
        double deltaSeconds = 0;
    };
    const std::vector<LeftOutStep> &leftOutSteps() const { return m_leftOut; }
    /// "left out for cost (+0.500 ms)" for a skip of the tuned line ("" for another skip).
    QString leftOutReason(const std::string &pattern, const std::string &anchor) const;
    /// "1.234 ms" and "+0.500 ms" / "−0.120 ms": how the history, the progress and the messages say times.
    static QString msText(double seconds);
    static QString deltaText(double seconds);
    /// Writes the report of the last search (report::tuneReportHtml); `message` says what or why not.
    bool exportReport(const QString &path, QString *message) const;

Q_SIGNALS:
    void started(const fxlens::views::TuneSettings &settings);
    void progress(const fxlens::views::TuneProgress &progress);
    /// The search ended and, when `ok`, the session is at the tuned version; `message` says what
    /// ("" for a search abandoned).
    void finished(bool ok, const QString &message);
    /// A result came (or went, with a new file).
    void resultChanged();

private:
    struct State;
    void finish(State &state);

    GraphDocument &m_doc;
    CostModelFactory m_factory;
    QPointer<QThread> m_thread;
    std::shared_ptr<State> m_running;
    uint64_t m_generation = 0; ///< a search abandoned reports nothing
    std::shared_ptr<const rewrite::TuneResult> m_result;
    std::shared_ptr<const ir::Graph> m_original;
    std::string m_note;
    uint64_t m_originalId = 0, m_tunedId = 0;
    std::map<uint64_t, double> m_stepDelta;
    std::vector<LeftOutStep> m_leftOut;
};

} // namespace fxlens::views
