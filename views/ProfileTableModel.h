// SPDX-License-Identifier: MIT
// ProfileTableModel: the profile panel's node table as a model: one row per profiled node, a
// column per figure, each cell a text (with its unit) and the number it sorts by (SortRole), so a
// QSortFilterProxyModel sorting on SortRole orders "9.5 µs" before "12 ms". The panel computes the
// rows; the model only shows them.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <vector>

namespace fxlens::views {

class ProfileTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    /// The number a numeric cell sorts by (the node column: its name).
    static constexpr int SortRole = Qt::UserRole;
    /// The panel's columns (the target is the node name's tooltip, so that the table fits a side
    /// panel): with a comparison, B's time and the change take the host time's place.
    enum Column { NodeCol, CountCol, TimeCol, ShareCol, HostCol, BTimeCol = HostCol, DeltaCol };

    struct Cell {
        QString text;
        double value = 0;
    };
    struct Row {
        QString node;
        QString toolTip;           ///< the node's target (and whether it is on the version on screen)
        std::vector<Cell> numbers; ///< the columns after the node's, one per header after the first
    };

    using QAbstractTableModel::QAbstractTableModel;

    /// Replaces the table: `headers` names every column, the node's first.
    void setTable(QStringList headers, std::vector<Row> rows);
    /// No rows; the columns stay.
    void clearRows() { setTable(m_headers, {}); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QStringList m_headers;
    std::vector<Row> m_rows;
};

} // namespace fxlens::views
