// SPDX-License-Identifier: MIT
// The profile panel (see ProfilePanel.h).
#include "ProfilePanel.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace fxlens::views {

namespace {

/// A table cell that sorts by number.
QTableWidgetItem *number(double v, int decimals)
{
    auto *item = new QTableWidgetItem;
    item->setData(Qt::DisplayRole,
                  decimals ? QVariant(QString::number(v, 'f', decimals).toDouble()) : QVariant(qlonglong(std::llround(v))));
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

} // namespace

ProfilePanel::ProfilePanel(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_summary = new QLabel(tr("No profile. File ▸ Open Profile… reads one that `fxlens-cli profile -o p.json` saved."), this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_table = new QTableWidget(this);
    m_table->setObjectName(QStringLiteral("profileTable"));
    m_table->setColumnCount(5);
    m_table->setHorizontalHeaderLabels({tr("Node"), tr("Target"), tr("Kernels/iter"), tr("GPU µs/iter"), tr("Host µs/iter")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);
    connect(m_table, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (row >= 0 && m_table->item(row, 0))
            Q_EMIT nodeRequested(m_table->item(row, 0)->text());
    });
}

ProfilePanel::~ProfilePanel() = default;

bool ProfilePanel::openProfile(const QString &path)
{
    auto r = prof::readProfile(path.toStdString());
    if (!r) {
        Diagnostic d = r.error();
        if (d.file.empty())
            d.file = path.toStdString();
        m_status = QString::fromStdString(d.toString());
        return false;
    }
    m_profile = std::make_unique<prof::Profile>(std::move(r.value()));
    m_index.clear();
    for (size_t i = 0; i < m_profile->nodes.size(); ++i)
        m_index.emplace(m_profile->nodes[i].name, i);
    m_status = tr("Opened profile %1").arg(QFileInfo(path).fileName());
    fill();
    return true;
}

void ProfilePanel::closeProfile()
{
    m_profile.reset();
    m_index.clear();
    m_bound = false;
    m_summary->setText(tr("No profile open (File → Open Profile, or drop a profile file on the window)."));
    m_status = tr("Profile closed");
    fill();
}

void ProfilePanel::setGraph(const ir::Graph *g)
{
    m_graph = g;
    fill();
}

QString ProfilePanel::summary() const { return m_summary->text(); }

QString ProfilePanel::statsFor(const std::string &node) const
{
    if (!m_profile)
        return {};
    auto it = m_index.find(node);
    if (it == m_index.end() || it->second >= m_profile->nodeStats.size())
        return {};
    const auto &s = m_profile->nodeStats[it->second];
    const bool cpu = m_profile->mode == "cpu";
    return tr("%1 %2/iter · %3 µs %4 · %5 µs host")
        .arg(s.kernels, 0, 'g', 4)
        .arg(cpu ? tr("ops") : tr("kernels"))
        .arg(s.gpuUs, 0, 'f', 2)
        .arg(cpu ? tr("in ops") : tr("GPU"))
        .arg(s.cpuUs, 0, 'f', 2);
}

void ProfilePanel::fill()
{
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);
    std::vector<std::pair<const ir::Node *, double>> heat;
    if (!m_profile) {
        Q_EMIT heatChanged(heat);
        return;
    }
    const auto &p = *m_profile;
    const auto &s = p.summary;
    // Bound by identity: every node the profile recorded is in the open graph with the same op and
    // target. Otherwise it was recorded on another graph or version, and nothing is tinted.
    size_t mismatched = 0;
    for (const auto &pn : p.nodes) {
        const ir::Node *n = m_graph ? m_graph->find(pn.name) : nullptr;
        mismatched += !n || n->target() != pn.target || std::string(ir::opKindName(n->op())) != pn.op;
    }
    m_bound = m_graph && mismatched == 0;
    size_t found = 0, profiled = 0;
    for (size_t i = 0; i < p.nodes.size() && i < p.nodeStats.size(); ++i) {
        const auto &st = p.nodeStats[i];
        if (st.kernels <= 0 && st.gpuUs <= 0)
            continue;
        ++profiled;
        const ir::Node *n = m_graph ? m_graph->find(p.nodes[i].name) : nullptr;
        if (n) {
            ++found;
            if (m_bound)
                heat.emplace_back(n, st.gpuUs);
        }
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto *name = new QTableWidgetItem(QString::fromStdString(p.nodes[i].name));
        if (!n)
            name->setToolTip(tr("not in the open graph"));
        m_table->setItem(row, 0, name);
        m_table->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(p.nodes[i].target)));
        m_table->setItem(row, 2, number(st.kernels, 2));
        m_table->setItem(row, 3, number(st.gpuUs, 2));
        m_table->setItem(row, 4, number(st.cpuUs, 2));
    }
    m_table->setSortingEnabled(true);
    m_table->sortItems(3, Qt::DescendingOrder);
    m_table->resizeColumnsToContents();
    const bool cpu = p.mode == "cpu";
    auto esc = [](const std::string &x) { return QString::fromStdString(x).toHtmlEscaped(); };
    QString text = QStringLiteral("<b>%1</b>").arg(p.graph.empty() ? tr("profile") : esc(p.graph));
    if (!p.version.empty())
        text += QStringLiteral(" (%1)").arg(esc(p.version));
    const std::string device = p.deviceName.empty() ? p.device : p.deviceName;
    if (!device.empty())
        text += tr(" on %1").arg(esc(device));
    text += tr(", %1 iterations after %2 warm-ups<br>%3 %4/iter · %5 µs busy · %6 µs wall · %7 µs host per iteration")
                .arg(p.iterations)
                .arg(p.warmup)
                .arg(s.kernelsPerIter, 0, 'g', 6)
                .arg(cpu ? tr("ops") : tr("kernels"))
                .arg(s.gpuBusyUs, 0, 'f', 1)
                .arg(s.wallUs, 0, 'f', 1)
                .arg(s.cpuUs, 0, 'f', 1);
    if (s.peakMemBytes >= 0)
        text += tr(" · peak %1 MiB").arg(double(s.peakMemBytes) / (1 << 20), 0, 'f', 1);
    if (m_graph && !m_bound)
        text += tr("<br><b>Recorded on another graph or version</b>: %1 of its %2 nodes differ from the open graph, so the "
                   "canvas is not tinted (open the graph it was recorded on, or close the profile)")
                    .arg(mismatched)
                    .arg(p.nodes.size());
    m_summary->setText(text);
    Q_EMIT heatChanged(heat);
}

} // namespace fxlens::views
