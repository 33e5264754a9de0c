// SPDX-License-Identifier: MIT
// The profile panel's Timeline tab (see TimelinePane.h).
#include "TimelinePane.h"

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
    m_table->setTextElideMode(Qt::ElideMiddle);
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
    // When the tracks change, the timeline gets the height they ask for and the table the rest (a
    // splitter moved by the user stays while they do not).
    const int total = m_split->height(), want = m_timeline->sizeHint().height();
    if (total > 0 && want != m_trackHeight)
        m_split->setSizes({std::min(want, total * 2 / 3), total - std::min(want, total * 2 / 3)});
    m_trackHeight = want;
    refresh();
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
}

} // namespace fxlens::views
