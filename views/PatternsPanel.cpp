// SPDX-License-Identifier: MIT
#include "PatternsPanel.h"

#include "GraphDocument.h"
#include "Selection.h"
#include "rewrite/Matcher.h"

#include <QListWidget>
#include <QVBoxLayout>

namespace fxlens::views {

PatternsPanel::PatternsPanel(GraphDocument &doc, QWidget *parent) : QWidget(parent), m_doc(doc)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_patterns = new QListWidget(this);
    m_patterns->setObjectName(QStringLiteral("patternList"));
    m_matchList = new QListWidget(this);
    m_matchList->setObjectName(QStringLiteral("matchList"));
    layout->addWidget(m_patterns, 1);
    layout->addWidget(m_matchList, 1);
    connect(m_patterns, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0)
            showMatches(m_patterns->item(row)->data(Qt::UserRole).toString());
    });
    connect(m_matchList, &QListWidget::currentRowChanged, this, &PatternsPanel::showMatch);
    connect(&doc, &GraphDocument::aboutToReplace, this, &PatternsPanel::counting);
    connect(&doc, &GraphDocument::changed, this, &PatternsPanel::counting);
    connect(&doc, &GraphDocument::matchesCounted, this, &PatternsPanel::counted);
}

void PatternsPanel::counting()
{
    m_patterns->clear();
    m_matchList->clear();
    m_matches.clear(); // they point into a graph being replaced or edited
    m_patterns->addItem(tr("counting matches…"));
}

void PatternsPanel::counted(const MatchCounts &c)
{
    const ir::Graph *g = m_doc.graph();
    if (!g)
        return;
    std::vector<const ir::Node *> byPos;
    for (const ir::Node *n = g->first(); n; n = n->next())
        byPos.push_back(n);
    std::vector<const ir::Node *> anchors;
    for (size_t p : c.anchorPositions)
        if (p < byPos.size())
            anchors.push_back(byPos[p]);
    Q_EMIT anchorsCounted(anchors);
    m_patterns->clear();
    for (const auto *p : m_doc.registry().all()) {
        const auto found = c.perPattern.find(p->name);
        const int count = found == c.perPattern.end() ? 0 : found->second;
        auto *item = new QListWidgetItem(QStringLiteral("%1  (%2)").arg(QString::fromStdString(p->name)).arg(count), m_patterns);
        item->setData(Qt::UserRole, QString::fromStdString(p->name));
        item->setToolTip(QString::fromStdString(p->description));
        if (!count)
            item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
    }
}

int PatternsPanel::showMatches(const QString &pattern)
{
    m_matchList->clear();
    m_matches.clear();
    const rewrite::Pattern *p = m_doc.registry().find(pattern.toStdString());
    const ir::Graph *g = m_doc.graph();
    if (!p || !g)
        return 0;
    const rewrite::Pattern *one[] = {p};
    m_matches = rewrite::findMatches(*g, one); // read-only: the engine's rules, no session
    for (const auto &m : m_matches)
        m_matchList->addItem(QStringLiteral("%1: %2").arg(QString::fromStdString(m.anchor->name()), QString::fromStdString(m.summary)));
    if (!m_matches.empty())
        m_matchList->setCurrentRow(0);
    else
        Q_EMIT highlightRequested({}, nullptr);
    return int(m_matches.size());
}

void PatternsPanel::showMatch(int row)
{
    if (row < 0 || size_t(row) >= m_matches.size())
        return;
    const auto &m = m_matches[size_t(row)];
    Q_EMIT highlightRequested(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
}

void PatternsPanel::setSelection(Selection *selection)
{
    connect(this, &PatternsPanel::highlightRequested, selection, &Selection::highlight);
}

} // namespace fxlens::views
