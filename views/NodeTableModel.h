// SPDX-License-Identifier: MIT
// NodeTableModel: the nodes of a graph as a table (name, op, target, shape, users, module).
#pragma once

#include "ir/Graph.h"

#include <QAbstractTableModel>

#include <vector>

namespace fxlens::views {

class NodeTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { NameColumn, OpColumn, TargetColumn, ValueColumn, UsersColumn, ModuleColumn, ColumnCount };
    enum Roles { NodeNameRole = Qt::UserRole };

    explicit NodeTableModel(QObject *parent = nullptr);
    /// Shows `g` (not owned; must outlive the model or be replaced first). nullptr clears.
    void setGraph(const ir::Graph *g);
    const ir::Node *nodeAt(int row) const;
    int rowOf(const QString &nodeName) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<const ir::Node *> m_nodes;
};

} // namespace fxlens::views
