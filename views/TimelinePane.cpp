// SPDX-License-Identifier: MIT
// The profile panel's Timeline tab (see TimelinePane.h).
#include "TimelinePane.h"

#include "Count.h"
#include "KernelTableModel.h"
#include "KernelTimeline.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace fxlens::views {

TimelinePane::TimelinePane(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_split = new QSplitter(Qt::Vertical, this);
    m_timeline = new KernelTimeline(m_split);
    m_timeline->setObjectName(QStringLiteral("kernelTimeline"));
    auto *below = new QWidget(m_split);
    auto *belowLayout = new QVBoxLayout(below);
    belowLayout->setContentsMargins(2, 2, 2, 0);
    m_readout = new QLabel(below);
    m_readout->setObjectName(QStringLiteral("rangeReadout"));
    m_readout->setWordWrap(true);
    m_readout->setTextInteractionFlags(Qt::TextSelectableByMouse);
    belowLayout->addWidget(m_readout);
    auto *row = new QHBoxLayout;
    m_filter = new QLineEdit(below);
    m_filter->setObjectName(QStringLiteral("kernelFilter"));
    m_filter->setPlaceholderText(tr("Filter kernels by name…"));
    m_filter->setClearButtonEnabled(true);
    m_caption = new QLabel(below);
    m_caption->setWordWrap(true);
    row->addWidget(m_filter, 1);
    row->addWidget(m_caption, 2);
    belowLayout->addLayout(row);
    m_model = new KernelTableModel(this);
    m_filtered = new QSortFilterProxyModel(this);
    m_filtered->setSourceModel(m_model);
    m_filtered->setSortRole(KernelTableModel::SortRole);
    m_filtered->setFilterRole(KernelTableModel::FilterRole);
    m_filtered->setFilterKeyColumn(KernelTableModel::NameCol);
    m_filtered->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_table = new QTableView(below);
    m_table->setObjectName(QStringLiteral("kernelTable"));
    m_table->setModel(m_filtered);
    m_table->setTextElideMode(Qt::ElideRight); // a kernel's name keeps its start; the whole name is its tooltip
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setMinimumSectionSize(fontMetrics().height() + 4);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4); // one line a row
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(KernelTableModel::NameCol, QHeaderView::Stretch);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(KernelTableModel::StartCol, Qt::AscendingOrder);
    belowLayout->addWidget(m_table, 1);
    m_split->addWidget(m_timeline);
    m_split->addWidget(below);
    m_split->setStretchFactor(0, 0); // the timeline at the height its tracks need, the table the rest
    m_split->setStretchFactor(1, 1);
    m_split->setChildrenCollapsible(false);
    layout->addWidget(m_split);
    connect(m_split, &QSplitter::splitterMoved, this, [this] { m_userSplit = true; });
    connect(m_filter, &QLineEdit::textChanged, m_filtered, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_filter, &QLineEdit::textChanged, this, &TimelinePane::refresh);
    connect(m_timeline, &KernelTimeline::rangeChanged, this, &TimelinePane::refresh);
    connect(m_timeline, &KernelTimeline::nodeRequested, this, &TimelinePane::refresh);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex &current) {
        if (!current.isValid())
            return;
        const int k = current.data(KernelTableModel::KernelRole).toInt();
        m_timeline->selectKernel(k);
        if (!m_timeline->hasRange())
            m_timeline->showKernel(k);
    });
    refresh();
}

TimelinePane::~TimelinePane() = default;

void TimelinePane::setProfiles(std::shared_ptr<const prof::Profile> a, std::shared_ptr<const prof::Profile> b)
{
    if (a != m_a)
        m_filter->clear();
    m_a = a;
    m_timeline->setProfile(std::move(a));
    m_timeline->setComparison(std::move(b));
    // When the tracks change, the split is placed again (one moved by the user stays while they do not).
    if (m_timeline->sizeHint().height() != m_trackHeight)
        m_userSplit = false;
    m_trackHeight = m_timeline->sizeHint().height();
    refresh();
}

int TimelinePane::tableRowsHeight(int rows) const
{
    return m_table->horizontalHeader()->sizeHint().height() + rows * m_table->verticalHeader()->defaultSectionSize() +
        2 * m_table->frameWidth() + 2;
}

QSize TimelinePane::sizeHint() const
{
    // Every track (at its smallest row height), the readout of a range (a line, then one per
    // profile, wrapped at the pane's width), the filter row and kTableRows rows of kernels.
    const QFontMetrics fm = m_readout->fontMetrics();
    const int sides = m_timeline->comparison() ? 2 : 1, width = std::max(100, m_split->width() - 4);
    const int perSide = fm.horizontalAdvance(tr("A: GPU busy 10.000 ms (10.0 %) · 1000 kernels · idle waiting for launches 10.000 ms"));
    const int readout = fm.lineSpacing() * (1 + sides * (1 + perSide / width)) + 4;
    const int row = std::max(m_filter->sizeHint().height(), m_caption->fontMetrics().lineSpacing());
    return {m_timeline->sizeHint().width(),
            m_timeline->minimumSizeHint().height() + m_split->handleWidth() + readout + row + tableRowsHeight(kTableRows) + 12};
}

void TimelinePane::resizeEvent(QResizeEvent *e)
{
    QWidget::resizeEvent(e);
    fitReadout();
    placeSplit();
}

void TimelinePane::fitReadout()
{
    // The readout's lines wrap at the pane's width; it is as tall as they are (never clipped).
    if (m_readout->text().isEmpty())
        return;
    const int h = m_readout->heightForWidth(std::max(1, m_split->width() - 4)); // the layout's margins: 2 + 2
    if (h != m_readout->minimumHeight())
        m_readout->setFixedHeight(h);
}

void TimelinePane::placeSplit()
{
    // The timeline at the height its tracks ask for, less down to its smallest rows when the table
    // would have fewer than kTableRows rows; the table the rest.
    const int total = m_split->height() - m_split->handleWidth();
    if (m_userSplit || total <= 0)
        return;
    const int below = m_split->widget(1)->minimumSizeHint().height() - m_table->minimumSizeHint().height() + tableRowsHeight(kTableRows);
    const int lo = m_timeline->minimumSizeHint().height(), want = m_timeline->sizeHint().height();
    const int top = std::clamp(total - below, lo, std::max(lo, want));
    m_split->setSizes({top, std::max(1, total - top)});
}

void TimelinePane::selectNode(int node)
{
    m_timeline->selectNode(node);
    refresh();
}

QString TimelinePane::caption() const { return m_caption->text(); }
QString TimelinePane::readout() const { return m_readout->text(); }

void TimelinePane::refresh()
{
    const prof::Profile *p = m_a.get();
    std::vector<uint32_t> kernels;
    QString what;
    const int node = m_timeline->selectedNode();
    if (p && m_timeline->hasRange()) {
        const auto [from, to] = m_timeline->range();
        kernels = m_timeline->kernelsIn(0, from, to);
        what = tr("%n kernel(s) in the measured range", nullptr, int(kernels.size()));
    } else if (p && node >= 0) {
        for (uint32_t i = 0; i < p->kernels.size(); ++i)
            if (prof::covers(p->kernels[i], node))
                kernels.push_back(i);
        what = tr("%n kernel(s) of %1", nullptr, int(kernels.size())).arg(QString::fromStdString(p->nodes[size_t(node)].name));
    } else if (p && !p->iters.empty()) {
        // No node selected (or none of the graph on screen): the first timed iteration, whole.
        const int first =
            std::min_element(p->iters.begin(), p->iters.end(), [](const auto &a, const auto &b) { return a.startUs < b.startUs; })->index;
        for (uint32_t i = 0; i < p->kernels.size(); ++i)
            if (p->kernels[i].iteration == first)
                kernels.push_back(i);
        what = tr("All %1 of iteration %2 (no node selected: select one, or drag across the timeline for a range)")
                   .arg(counted(qint64(kernels.size()), "kernel"))
                   .arg(first);
    }
    // The same list keeps its rows (and the row being clicked).
    if (kernels != m_model->kernels() || (m_model->rowCount() == 0 && p))
        m_model->setKernels(m_a, std::move(kernels), p ? -m_timeline->displayTime(0, 0) : 0);
    if (!p)
        m_caption->setText(tr("No profile"));
    else if (what.isEmpty())
        m_caption->setText(tr("Select a node, or drag across the timeline to measure a range and list its kernels"));
    else if (!m_filter->text().isEmpty())
        m_caption->setText(tr("%1 · %2 match the filter").arg(what).arg(m_filtered->rowCount()));
    else
        m_caption->setText(what);
    m_readout->setText(m_timeline->rangeText());
    m_readout->setVisible(m_timeline->hasRange());
    fitReadout();
    placeSplit();
}

} // namespace fxlens::views
