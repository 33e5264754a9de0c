// SPDX-License-Identifier: MIT
#include "NodeList.h"

#include "GraphDocument.h"
#include "Selection.h"

#include "NodeTableModel.h"
#include "layout/Layered.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QRegularExpression>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace fxlens::views {

namespace {
/// Matches a row if the name, target or module column contains the pattern. Without a search,
/// parameters and constants are left out (as on the canvas) unless they are shown.
class NodeFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    const ir::Graph *graph = nullptr;
    std::vector<uint8_t> constants; ///< layout::constantNodes of the graph (what the canvas hides)
    bool showConstants = false;
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        const auto re = filterRegularExpression();
        if (re.pattern().isEmpty()) {
            if (showConstants || !graph)
                return true;
            const ir::Node *n = static_cast<const NodeTableModel *>(sourceModel())->nodeAt(row);
            return !n || !(n->id() < constants.size() ? constants[n->id()] != 0 : layout::isConstant(n, *graph));
        }
        for (int col : {NodeTableModel::NameColumn, NodeTableModel::TargetColumn, NodeTableModel::ModuleColumn})
            if (re.match(sourceModel()->index(row, col, parent).data().toString()).hasMatch())
                return true;
        return false;
    }
};
} // namespace

NodeList::NodeList(QWidget *parent) : QWidget(parent)
{
    m_model = new NodeTableModel(this);
    m_proxy = new NodeFilter(this);
    m_proxy->setSourceModel(m_model);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_search = new QLineEdit(this);
    m_search->setPlaceholderText(tr("Search name, target or module (/regex/)"));
    m_search->setClearButtonEnabled(true);
    m_search->setObjectName(QStringLiteral("search"));
    layout->addWidget(m_search);
    m_table = new QTableView(this);
    m_table->setModel(m_proxy);
    m_table->setObjectName(QStringLiteral("nodeTable"));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table);
    connect(m_search, &QLineEdit::textChanged, this, &NodeList::setSearch);
    // Enter jumps to the first match.
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        if (m_proxy->rowCount() > 0)
            Q_EMIT nodeActivated(select(m_proxy->index(0, 0).data().toString()));
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &cur) {
        const ir::Node *n = cur.isValid() ? m_model->nodeAt(m_proxy->mapToSource(cur).row()) : nullptr;
        m_current = n ? QString::fromStdString(n->name()) : QString();
        if (!m_following)
            Q_EMIT nodeActivated(n);
    });
}

void NodeList::setGraph(const ir::Graph *g)
{
    auto *filter = static_cast<NodeFilter *>(m_proxy);
    filter->graph = g;
    filter->constants = g ? layout::constantNodes(*g) : std::vector<uint8_t>{};
    m_model->setGraph(g);
    m_proxy->invalidate();
}

void NodeList::setDocument(GraphDocument *doc)
{
    connect(doc, &GraphDocument::aboutToReplace, this, [this] { setGraph(nullptr); });
    connect(doc, &GraphDocument::replaced, this, [this](const ir::Graph *g) {
        setGraph(g);
        setSearch(QString());
        m_table->scrollToTop(); // a new file opens at its first node, not where the last one was left
        m_table->horizontalScrollBar()->setValue(0);
    });
    connect(doc, &GraphDocument::changed, this, [this](const ir::Graph *g) {
        // An edit: the current row again where its node is still there, else the table's top (not
        // a row in the middle with nothing selected).
        const QString current = m_current;
        setGraph(g);
        if (current.isEmpty() || !follow(current)) {
            m_current.clear();
            m_table->scrollToTop();
        }
    });
}

void NodeList::setShowConstants(bool on)
{
    static_cast<NodeFilter *>(m_proxy)->showConstants = on;
    m_proxy->invalidate();
}

int NodeList::setSearch(const QString &text)
{
    if (m_search->text() != text) {
        QSignalBlocker block(m_search);
        m_search->setText(text);
    }
    QRegularExpression re;
    if (text.size() > 2 && text.startsWith(QLatin1Char('/')) && text.endsWith(QLatin1Char('/')))
        re = QRegularExpression(text.mid(1, text.size() - 2));
    else
        re = QRegularExpression(QRegularExpression::escape(text), QRegularExpression::CaseInsensitiveOption);
    m_proxy->setFilterRegularExpression(re);
    Q_EMIT searchChanged(text, m_proxy->rowCount());
    return m_proxy->rowCount();
}

int NodeList::visibleCount() const { return m_proxy->rowCount(); }

std::vector<const ir::Node *> NodeList::matchedNodes() const
{
    std::vector<const ir::Node *> out;
    if (m_search->text().isEmpty())
        return out;
    for (int r = 0; r < m_proxy->rowCount(); ++r)
        if (const ir::Node *n = m_model->nodeAt(m_proxy->mapToSource(m_proxy->index(r, 0)).row()))
            out.push_back(n);
    return out;
}

const ir::Node *NodeList::select(const QString &name)
{
    const int row = m_model->rowOf(name);
    if (row < 0)
        return nullptr;
    QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
    if (!idx.isValid()) { // filtered out: clear the search so the node can be shown
        setSearch(QString());
        idx = m_proxy->mapFromSource(m_model->index(row, 0));
    }
    const QScopedValueRollback following(m_following, true);
    m_table->setCurrentIndex(idx);
    m_table->scrollTo(idx);
    return m_model->nodeAt(row);
}

void NodeList::clearSelection()
{
    const QScopedValueRollback following(m_following, true);
    m_table->selectionModel()->clear();
    m_current.clear();
}

const ir::Node *NodeList::follow(const QString &name)
{
    const int row = m_model->rowOf(name);
    if (row < 0)
        return nullptr;
    const QModelIndex idx = m_proxy->mapFromSource(m_model->index(row, 0));
    const QScopedValueRollback following(m_following, true);
    if (idx.isValid()) {
        m_table->setCurrentIndex(idx);
        m_table->scrollTo(idx);
    } else {
        m_table->clearSelection(); // one selection only: the hidden row is not shown as another
    }
    return m_model->nodeAt(row);
}

void NodeList::setSelection(Selection *selection)
{
    connect(this, &NodeList::nodeActivated, selection, [this, selection](const ir::Node *n) { selection->setCurrentNode(n, this); });
    connect(selection, &Selection::currentNodeChanged, this, [this](const ir::Node *n, QObject *origin, bool reveal) {
        if (origin == this)
            return;
        if (!n) { // nothing selected (a click on empty canvas): no row stays highlighted
            clearSelection();
            return;
        }
        const QString name = QString::fromStdString(n->name());
        if (reveal)
            select(name); // a search that hides it is cleared
        else
            follow(name);
    });
    connect(selection, &Selection::moduleSelected, this, &NodeList::clearSelection); // no node row stays selected beside the module
}

} // namespace fxlens::views
