// SPDX-License-Identifier: MIT
#include "RewriteModels.h"
#include "Count.h"

#include <QFont>

namespace fxlens::views {

void CandidateModel::setCandidates(std::vector<rewrite::Match> matches, std::vector<std::pair<std::string, std::string>> skipped,
                                   std::vector<QString> reasons)
{
    beginResetModel();
    m_matches = std::move(matches);
    m_skipped = std::move(skipped);
    m_reasons = std::move(reasons);
    endResetModel();
}

int CandidateModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_matches.size() + m_skipped.size()); }

QVariant CandidateModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const size_t row = size_t(index.row());
    if (row < m_matches.size()) {
        const auto &m = m_matches[row];
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole) // the whole description where the panel cuts it
            return QStringLiteral("%1 @ %2 — %3")
                .arg(QString::fromStdString(m.pattern), QString::fromStdString(m.anchor->name()), QString::fromStdString(m.summary));
        return {};
    }
    // Skipped (and rolled-back) candidates stay visible, greyed, after the live ones.
    const size_t k = row - m_matches.size();
    const auto &[pattern, anchor] = m_skipped[k];
    if (role == Qt::DisplayRole)
        return tr("%1: %2 @ %3 (double-click to propose it again)")
            .arg(k < m_reasons.size() && !m_reasons[k].isEmpty() ? m_reasons[k] : tr("skipped"), QString::fromStdString(pattern),
                 QString::fromStdString(anchor));
    if (role == SkippedRole)
        return QStringList{QString::fromStdString(pattern), QString::fromStdString(anchor)};
    if (role == Qt::ForegroundRole && m_greyed.isValid())
        return m_greyed;
    return {};
}

void HistoryModel::setHistory(std::vector<rewrite::Step> steps, std::vector<rewrite::Branch> branches, int at,
                              std::map<int, QStringList> skips, std::map<int, QString> notes)
{
    beginResetModel();
    m_skips = std::move(skips);
    m_notes = std::move(notes);
    m_steps = std::move(steps);
    m_branches = std::move(branches);
    m_at = at;
    endResetModel();
}

int HistoryModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(1 + m_steps.size() + m_branches.size()); }

QVariant HistoryModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const size_t row = size_t(index.row());
    return row <= m_steps.size() ? versionData(int(row), role) : branchData(row - m_steps.size() - 1, role);
}

QVariant HistoryModel::versionData(int row, int role) const
{
    switch (role) {
    case Qt::DisplayRole: {
        QString text;
        if (row == 0) {
            text = tr("0  original");
        } else {
            const auto &s = m_steps[size_t(row - 1)];
            const QString badge = s.verified ? QStringLiteral("  ✓ verified") : QString();
            text = QStringLiteral("%1  %2 @ %3%4").arg(row).arg(QString::fromStdString(s.pattern), QString::fromStdString(s.anchor), badge);
        }
        if (const auto it = m_notes.find(row); it != m_notes.end())
            text += QStringLiteral("  ·  ") + it->second;
        if (const auto it = m_skips.find(row); it != m_skips.end()) // Undo takes the last skip back first
            for (const QString &skip : it->second)
                text += QStringLiteral("\n    ") + skip;
        return text;
    }
    case Qt::ToolTipRole:
        return row == 0 ? tr("Click to go back to the graph as the session found it")
                        : QString::fromStdString(m_steps[size_t(row - 1)].summary);
    case Qt::FontRole: {
        QFont f;
        f.setBold(row == m_at);
        return f;
    }
    case Qt::ForegroundRole: return row > m_at && m_greyed.isValid() ? QVariant(m_greyed) : QVariant();
    default: return {};
    }
}

QVariant HistoryModel::branchData(size_t b, int role) const
{
    const auto &br = m_branches[b];
    switch (role) {
    case Qt::DisplayRole:
        return tr("↳ branch from version %1: %2, last %3 @ %4")
            .arg(br.fork)
            .arg(counted(qint64(br.steps.size()), "step"))
            .arg(br.steps.empty() ? QString() : QString::fromStdString(br.steps.back().pattern),
                 br.steps.empty() ? QString() : QString::fromStdString(br.steps.back().anchor));
    case Qt::ToolTipRole: return tr("Click to make this line current (its last version); the current line is kept as a branch");
    case Qt::FontRole: {
        QFont f;
        f.setItalic(true);
        return f;
    }
    case BranchRole: return int(b);
    default: return {};
    }
}

} // namespace fxlens::views
