// SPDX-License-Identifier: MIT
// The profile panel (see ProfilePanel.h).
#include "ProfilePanel.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace fxlens::views {

namespace {

// Columns (the target is the node name's tooltip, so that the table fits a side panel): with a
// comparison, B's time and the change take the host time's place.
enum Column { NodeCol, CountCol, TimeCol, ShareCol, HostCol, BTimeCol = HostCol, DeltaCol };

/// A cell showing `text` that sorts by `value`.
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(const QString &text, double value) : QTableWidgetItem(text)
    {
        setData(Qt::UserRole, value);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem &o) const override { return data(Qt::UserRole).toDouble() < o.data(Qt::UserRole).toDouble(); }
};

QString count(double v) { return std::fabs(v - std::round(v)) < 1e-9 ? QString::number(qlonglong(std::llround(v))) : QString::number(v, 'f', 1); }

} // namespace

QString ProfilePanel::formatTime(double us)
{
    const double a = std::fabs(us);
    if (a >= 1e6)
        return QStringLiteral("%1 s").arg(us / 1e6, 0, 'f', 2);
    if (a >= 1e3)
        return QStringLiteral("%1 ms").arg(us / 1e3, 0, 'f', a >= 1e5 ? 1 : 2);
    return QStringLiteral("%1 µs").arg(us, 0, 'f', a >= 100 ? 0 : 1);
}

ProfilePanel::ProfilePanel(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_summary = new QLabel(tr("No profile. File ▸ Open Profile… reads one that `fxlens-cli profile -o p.json` saved."), this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    layout->addWidget(m_caption);
    m_table = new QTableWidget(this);
    m_table->setObjectName(QStringLiteral("profileTable"));
    m_table->setTextElideMode(Qt::ElideMiddle); // "blocks_3_linear" reads as "blo…inear", not "blocks…"
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);
    m_scale = new QLabel(this);
    m_scale->setObjectName(QStringLiteral("heatScale"));
    m_scale->setWordWrap(true);
    layout->addWidget(m_scale);
    connect(m_table, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (row >= 0 && m_table->item(row, 0))
            Q_EMIT nodeRequested(m_table->item(row, 0)->text());
    });
}

ProfilePanel::~ProfilePanel() = default;

static Result<prof::Profile> readNamed(const QString &path)
{
    auto r = prof::readProfile(path.toStdString());
    if (!r) {
        Diagnostic d = r.error();
        if (d.file.empty())
            d.file = path.toStdString();
        return d;
    }
    return r;
}

bool ProfilePanel::openProfile(const QString &path)
{
    auto r = readNamed(path);
    if (!r) {
        m_status = QString::fromStdString(r.error().toString());
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

bool ProfilePanel::openComparison(const QString &path)
{
    if (!m_profile) {
        m_status = tr("Open a profile first (version A); then the one to compare with (version B)");
        return false;
    }
    auto r = readNamed(path);
    if (!r) {
        m_status = QString::fromStdString(r.error().toString());
        return false;
    }
    m_b = std::make_unique<prof::Profile>(std::move(r.value()));
    m_bIndex.clear();
    for (size_t i = 0; i < m_b->nodes.size(); ++i)
        m_bIndex.emplace(m_b->nodes[i].name, i);
    m_status = tr("Comparing with %1").arg(QFileInfo(path).fileName());
    fill();
    return true;
}

void ProfilePanel::closeComparison()
{
    m_b.reset();
    m_bIndex.clear();
    fill();
}

void ProfilePanel::closeProfile()
{
    m_profile.reset();
    m_b.reset();
    m_index.clear();
    m_bIndex.clear();
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
QString ProfilePanel::scaleText() const { return m_scale->text(); }

QString ProfilePanel::statsFor(const std::string &node) const
{
    if (!m_profile)
        return {};
    auto it = m_index.find(node);
    if (it == m_index.end() || it->second >= m_profile->nodeStats.size())
        return {};
    const auto &s = m_profile->nodeStats[it->second];
    const bool cpu = m_profile->mode == "cpu";
    return tr("%1 %2/iter · %3 %4 · %5 host")
        .arg(s.kernels, 0, 'g', 4)
        .arg(cpu ? tr("ops") : tr("kernels"))
        .arg(formatTime(s.gpuUs))
        .arg(cpu ? tr("in ops") : tr("GPU"))
        .arg(formatTime(s.cpuUs));
}

void ProfilePanel::fill()
{
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);
    std::vector<std::pair<const ir::Node *, double>> heat;
    if (!m_profile) {
        m_scale->clear();
        m_caption->clear();
        Q_EMIT heatChanged(heat);
        return;
    }
    const auto &p = *m_profile;
    const bool cpu = p.mode == "cpu";
    // Short headers (every figure is per iteration, as the caption says), so that the numbers, not
    // their labels, set the columns' widths.
    QStringList headers = {tr("Node"), cpu ? tr("Ops") : tr("Kernels"), cpu ? tr("Op time") : tr("GPU time"), tr("%")};
    if (m_b)
        headers << tr("B time") << tr("Δ B−A");
    else
        headers << tr("Host");
    m_caption->setText(tr("Per iteration (medians over the timed iterations); %: share of the busy iteration%1")
                           .arg(m_b ? tr("; B and Δ: version B's time and the change") : QString()));
    m_table->setColumnCount(int(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    // Bound by identity: every node the profile recorded is in the open graph with the same op and
    // target. Otherwise it was recorded on another graph or version, and nothing is tinted.
    size_t mismatched = 0;
    for (const auto &pn : p.nodes) {
        const ir::Node *n = m_graph ? m_graph->find(pn.name) : nullptr;
        mismatched += !n || n->target() != pn.target || std::string(ir::opKindName(n->op())) != pn.op;
    }
    m_bound = m_graph && mismatched == 0;
    const double iter = p.summary.gpuBusyUs;
    double top = 0;
    std::string topNode;
    for (size_t i = 0; i < p.nodes.size() && i < p.nodeStats.size(); ++i) {
        const auto &st = p.nodeStats[i];
        if (st.kernels <= 0 && st.gpuUs <= 0)
            continue;
        const ir::Node *n = m_graph ? m_graph->find(p.nodes[i].name) : nullptr;
        if (n && m_bound) {
            heat.emplace_back(n, st.gpuUs);
            if (st.gpuUs > top)
                top = st.gpuUs, topNode = p.nodes[i].name;
        }
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto *name = new QTableWidgetItem(QString::fromStdString(p.nodes[i].name));
        name->setToolTip(QString::fromStdString(p.nodes[i].target) + (n ? QString() : tr(" (not in the open graph)")));
        m_table->setItem(row, NodeCol, name);
        m_table->setItem(row, CountCol, new NumberItem(count(st.kernels), st.kernels));
        m_table->setItem(row, TimeCol, new NumberItem(formatTime(st.gpuUs), st.gpuUs));
        const double share = iter > 0 ? 100.0 * st.gpuUs / iter : 0;
        m_table->setItem(row, ShareCol, new NumberItem(QStringLiteral("%1 %").arg(share, 0, 'f', 1), share));
        if (!m_b)
            m_table->setItem(row, HostCol, new NumberItem(formatTime(st.cpuUs), st.cpuUs));
        if (m_b) {
            const auto b = m_bIndex.find(p.nodes[i].name);
            const double bt = b != m_bIndex.end() && b->second < m_b->nodeStats.size() ? m_b->nodeStats[b->second].gpuUs : 0;
            m_table->setItem(row, BTimeCol, new NumberItem(b == m_bIndex.end() ? tr("—") : formatTime(bt), bt));
            const double d = bt - st.gpuUs;
            m_table->setItem(row, DeltaCol, new NumberItem(d == 0 ? QStringLiteral("0") : (d > 0 ? QStringLiteral("+") : QString()) + formatTime(d), d));
        }
    }
    m_table->setSortingEnabled(true);
    m_table->sortItems(TimeCol, Qt::DescendingOrder);
    // The node column takes what the numbers leave (names elide; the full name and target are the
    // tooltip), so the table fits the panel.
    auto *h = m_table->horizontalHeader();
    h->setStretchLastSection(false);
    for (int c = 1; c < m_table->columnCount(); ++c)
        h->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(NodeCol, QHeaderView::Stretch);
    fillSummary(mismatched);
    fillScale(top, topNode);
    Q_EMIT heatChanged(heat);
}

void ProfilePanel::fillSummary(size_t mismatched)
{
    const auto &p = *m_profile;
    const bool cpu = p.mode == "cpu";
    auto esc = [](const std::string &x) { return QString::fromStdString(x).toHtmlEscaped(); };
    auto line = [&](const prof::Profile &q, const QString &tag) {
        const auto &s = q.summary;
        QString text = tag + QStringLiteral("<b>%1</b>").arg(q.graph.empty() ? tr("profile") : esc(q.graph));
        if (!q.version.empty())
            text += QStringLiteral(" (%1)").arg(esc(q.version));
        const std::string device = q.deviceName.empty() ? q.device : q.deviceName;
        if (!device.empty())
            text += tr(" on %1").arg(esc(device));
        text += tr(", %1 iterations after %2 warm-ups%3<br>%4 %5/iter · %6 busy · %7 wall · %8 host per iteration (medians)")
                    .arg(q.iterations)
                    .arg(q.warmup)
                    .arg(cpu ? tr("; a CPU profile: ATen ops stand for kernels") : QString())
                    .arg(count(s.kernelsPerIter))
                    .arg(cpu ? tr("ops") : tr("kernels"))
                    .arg(formatTime(s.gpuBusyUs))
                    .arg(formatTime(s.wallUs))
                    .arg(formatTime(s.cpuUs));
        if (s.peakMemBytes >= 0)
            text += tr(" · peak %1 MiB").arg(double(s.peakMemBytes) / (1 << 20), 0, 'f', 1);
        return text;
    };
    QString text = line(p, m_b ? QStringLiteral("A: ") : QString());
    if (m_b) {
        text += QStringLiteral("<br>") + line(*m_b, QStringLiteral("B: "));
        const auto &a = p.summary, &b = m_b->summary;
        auto ratio = [](double x, double y) { return y > 0 ? QStringLiteral("%1×").arg(x / y, 0, 'f', 3) : QStringLiteral("—"); };
        text += tr("<br><b>B/A</b>: %1 %2 · busy %3 · wall %4")
                    .arg(ratio(b.kernelsPerIter, a.kernelsPerIter))
                    .arg(cpu ? tr("ops") : tr("kernels"))
                    .arg(ratio(b.gpuBusyUs, a.gpuBusyUs))
                    .arg(ratio(b.wallUs, a.wallUs));
    }
    if (m_graph && !m_bound)
        text += tr("<br><b>Recorded on another graph or version</b>: %1 of its %2 nodes differ from the open graph, so the "
                   "canvas is not tinted (open the graph it was recorded on, or close the profile)")
                    .arg(mismatched)
                    .arg(p.nodes.size());
    m_summary->setText(text);
}

void ProfilePanel::fillScale(double top, const std::string &topNode)
{
    if (!m_bound || top <= 0) {
        m_scale->clear();
        return;
    }
    // The canvas' tint (GraphCanvas: heatTint) from 0 to the hottest node's time.
    m_scale->setText(tr("Tint: <span style=\"background:#f4efee\">&nbsp;0&nbsp;</span><span "
                        "style=\"background:#eb9f92\">&nbsp;&nbsp;&nbsp;&nbsp;</span><span "
                        "style=\"background:#e6503a;color:white\">&nbsp;%1&nbsp;</span> (%2; device time per iteration)")
                         .arg(formatTime(top), QString::fromStdString(topNode).toHtmlEscaped()));
}

} // namespace fxlens::views
