// SPDX-License-Identifier: MIT
// Node table model.
#include "NodeTableModel.h"

namespace fxlens::views {

NodeTableModel::NodeTableModel(QObject *parent) : QAbstractTableModel(parent) {}

void NodeTableModel::setGraph(const ir::Graph *g)
{
    beginResetModel();
    m_nodes.clear();
    if (g) {
        m_nodes.reserve(g->size());
        for (const ir::Node *n = g->first(); n; n = n->next())
            m_nodes.push_back(n);
    }
    endResetModel();
}

const ir::Node *NodeTableModel::nodeAt(int row) const { return row >= 0 && size_t(row) < m_nodes.size() ? m_nodes[size_t(row)] : nullptr; }

int NodeTableModel::rowOf(const QString &nodeName) const
{
    std::string n = nodeName.toStdString();
    for (size_t i = 0; i < m_nodes.size(); ++i)
        if (m_nodes[i]->name() == n)
            return int(i);
    return -1;
}

int NodeTableModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_nodes.size()); }

int NodeTableModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant NodeTableModel::data(const QModelIndex &index, int role) const
{
    const ir::Node *n = nodeAt(index.row());
    if (!n)
        return {};
    if (role == NodeNameRole)
        return QString::fromStdString(n->name());
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case NameColumn: return QString::fromStdString(n->name());
    case OpColumn: return QString::fromLatin1(ir::opKindName(n->op()));
    case TargetColumn: return QString::fromStdString(n->target());
    case ValueColumn:
        return n->meta().val.kind == ir::ValueMeta::Kind::Unknown ? QString() : QString::fromStdString(n->meta().val.toString());
    case UsersColumn: return int(n->users().size());
    case ModuleColumn: return QString::fromStdString(n->meta().modulePath());
    }
    return {};
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char *names[] = {"Name", "Op", "Target", "Value", "Users", "Module"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

} // namespace fxlens::views
