// SPDX-License-Identifier: MIT
#include "ProfileTableModel.h"

namespace fxlens::views {

void ProfileTableModel::setTable(QStringList headers, std::vector<Row> rows)
{
    beginResetModel();
    m_headers = std::move(headers);
    m_rows = std::move(rows);
    endResetModel();
}

int ProfileTableModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int ProfileTableModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_headers.size()); }

QVariant ProfileTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows[size_t(index.row())];
    if (index.column() == 0) {
        switch (role) {
        case Qt::DisplayRole:
        case SortRole: return row.node;
        case Qt::ToolTipRole: return row.toolTip;
        default: return {};
        }
    }
    const size_t k = size_t(index.column() - 1);
    if (k >= row.numbers.size())
        return {};
    switch (role) {
    case Qt::DisplayRole: return row.numbers[k].text;
    case SortRole: return row.numbers[k].value;
    case Qt::TextAlignmentRole: return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    default: return {};
    }
}

QVariant ProfileTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 && section < m_headers.size())
        return m_headers[section];
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace fxlens::views
