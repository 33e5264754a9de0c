// SPDX-License-Identifier: MIT
// Item models of the rewrite debugger's lists, filled from the history's values: the candidates
// (live matches, then the skipped ones greyed) and the versions of the current line (the one on
// screen bold, those ahead greyed) with a row per branch kept beside it.
#pragma once

#include "rewrite/Pattern.h"
#include "rewrite/Session.h"

#include <QAbstractListModel>
#include <QColor>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fxlens::views {

class CandidateModel : public QAbstractListModel {
    Q_OBJECT
public:
    /// A skipped candidate's (pattern, anchor) as a QStringList; invalid for a live one.
    static constexpr int SkippedRole = Qt::UserRole;

    using QAbstractListModel::QAbstractListModel;
    /// `reasons`: why a skipped one was skipped when not by the user ("left out for cost (+0.5 ms)"),
    /// parallel to `skipped` (empty: none).
    void setCandidates(std::vector<rewrite::Match> matches, std::vector<std::pair<std::string, std::string>> skipped,
                       std::vector<QString> reasons = {});
    /// The foreground of greyed rows (the palette's disabled text).
    void setGreyed(const QColor &c) { m_greyed = c; }
    const std::vector<rewrite::Match> &matches() const { return m_matches; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;

private:
    std::vector<rewrite::Match> m_matches;
    std::vector<std::pair<std::string, std::string>> m_skipped;
    std::vector<QString> m_reasons;
    QColor m_greyed;
};

class HistoryModel : public QAbstractListModel {
    Q_OBJECT
public:
    /// A branch row's index in RewriteHistory::branches(); invalid for a version.
    static constexpr int BranchRole = Qt::UserRole;

    using QAbstractListModel::QAbstractListModel;
    /// Versions 0 .. steps.size(), `at` on screen, then the branches.
    /// `skips`: lines under a version's row, one per candidate skipped there ("skipped pattern @
    /// anchor", "left out for cost (+0.5 ms): pattern @ anchor"); `notes`: what a version's row says
    /// after its step (its measured time, its step's measured Δ).
    void setHistory(std::vector<rewrite::Step> steps, std::vector<rewrite::Branch> branches, int at, std::map<int, QStringList> skips = {},
                    std::map<int, QString> notes = {});
    void setGreyed(const QColor &c) { m_greyed = c; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;

private:
    QVariant versionData(int row, int role) const;
    QVariant branchData(size_t b, int role) const;

    std::vector<rewrite::Step> m_steps;
    std::vector<rewrite::Branch> m_branches;
    int m_at = 0;
    std::map<int, QStringList> m_skips;
    std::map<int, QString> m_notes;
    QColor m_greyed;
};

} // namespace fxlens::views
