// SPDX-License-Identifier: MIT
// The profile panel (see ProfilePanel.h).
#include "ProfilePanel.h"
#include "Count.h"

#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "KernelTimeline.h"
#include "ProfileChart.h"
#include "ProfileStore.h"
#include "ProfileTableModel.h"
#include "ProfilingJob.h"
#include "TimelinePane.h"
#include "TuneJob.h"
#include "rewrite/VersionList.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

namespace fxlens::views {

namespace {

QString count(double v)
{
    return std::fabs(v - std::round(v)) < 1e-9 ? QString::number(qlonglong(std::llround(v))) : QString::number(v, 'f', 1);
}

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

ProfilePanel::ProfilePanel(GraphDocument &doc, QWidget *parent) : QWidget(parent), m_doc(doc)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    auto *choices = new QHBoxLayout;
    m_choice = new QComboBox(this);
    m_choice->setObjectName(QStringLiteral("profileChoice"));
    m_choice->setToolTip(tr("The profile shown (A): by default the one recorded on the version on screen"));
    m_compareChoice = new QComboBox(this);
    m_compareChoice->setObjectName(QStringLiteral("compareChoice"));
    m_compareChoice->setToolTip(tr("A second profile to compare with (B): its time and the change per node"));
    choices->addWidget(new QLabel(tr("A"), this));
    choices->addWidget(m_choice, 3);
    choices->addWidget(new QLabel(tr("B"), this));
    choices->addWidget(m_compareChoice, 2);
    layout->addLayout(choices);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("profileTabs"));
    m_tabs->addTab(buildNodesTab(), tr("Nodes"));
    m_timelinePane = new TimelinePane(m_tabs);
    m_tabs->addTab(m_timelinePane, tr("Timeline"));
    m_chart = new ProfileChart(m_tabs);
    m_chart->setObjectName(QStringLiteral("profileChart"));
    m_tabs->addTab(m_chart, tr("Versions"));
    layout->addWidget(m_tabs, 1);
    layout->addWidget(buildJobRow());
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex &current) {
        if (current.isValid())
            Q_EMIT nodeRequested(current.siblingAtColumn(ProfileTableModel::NodeCol).data().toString());
    });
    connect(timeline(), &KernelTimeline::nodeRequested, this, &ProfilePanel::nodeRequested);
    connect(timeline(), &KernelTimeline::kernelSelected, this,
            [this](int k) { Q_EMIT kernelGroupSelected(k < 0 ? -1 : groupOfKernel(m_groups, uint32_t(k))); });
    connect(m_chart, &ProfileChart::showRequested, this, &ProfilePanel::showProfile);
    connect(m_chart, &ProfileChart::compareRequested, this, &ProfilePanel::compareWith);
    connect(m_choice, &QComboBox::activated, this, [this](int i) { showProfile(m_choice->itemData(i).toInt()); });
    connect(m_compareChoice, &QComboBox::activated, this, [this](int i) { compareWith(m_compareChoice->itemData(i).toInt()); });
    // The document says when its profiles, its graph or the version on screen change.
    connect(&m_doc.profiles(), &ProfileStore::changed, this, &ProfilePanel::documentChanged);
    connect(&m_doc, &GraphDocument::replaced, this, [this] {
        m_followVersion = true;
        m_compare = -1;
        documentChanged();
    });
    connect(&m_doc, &GraphDocument::aboutToReplace, this, [this] {
        m_shown = m_compare = -1;
        fill(); // drops the tint's node pointers
    });
    connect(m_doc.history(), &RewriteHistory::versionChanged, this, &ProfilePanel::documentChanged);
    connect(&m_doc.tuning(), &TuneJob::resultChanged, this, &ProfilePanel::fill); // the Versions chart shows the search
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        showSummary();
        askTimelineRoom();
    });
    documentChanged();
}

ProfilePanel::~ProfilePanel() = default;

void ProfilePanel::showEvent(QShowEvent *e)
{
    QWidget::showEvent(e);
    askTimelineRoom();
}

void ProfilePanel::askTimelineRoom()
{
    if (!isVisible() || m_tabs->currentWidget() != m_timelinePane)
        return;
    layout()->activate(); // the summary's lines as they are now
    Q_EMIT timelineRoomWanted(height() - m_timelinePane->height() + m_timelinePane->sizeHint().height());
}

KernelTimeline *ProfilePanel::timeline() const { return m_timelinePane->timeline(); }

QWidget *ProfilePanel::buildNodesTab()
{
    auto *nodes = new QWidget(m_tabs);
    auto *nodesLayout = new QVBoxLayout(nodes);
    nodesLayout->setContentsMargins(0, 0, 0, 0);
    m_caption = new QLabel(nodes);
    m_caption->setWordWrap(true);
    nodesLayout->addWidget(m_caption);
    m_model = new ProfileTableModel(this);
    m_sorted = new QSortFilterProxyModel(this);
    m_sorted->setSortRole(ProfileTableModel::SortRole); // numbers by value, not by their text
    m_sorted->setSourceModel(m_model);
    m_table = new QTableView(nodes);
    m_table->setModel(m_sorted);
    m_table->setObjectName(QStringLiteral("profileTable"));
    m_table->setTextElideMode(Qt::ElideMiddle); // "blocks_3_linear" reads as "blo…inear", not "blocks…"
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6); // one line per row, as in the node table
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSortingEnabled(true); // a header click sorts; every fill sorts by device time again
    nodesLayout->addWidget(m_table, 1);
    m_scale = new QLabel(nodes);
    m_scale->setObjectName(QStringLiteral("heatScale"));
    m_scale->setWordWrap(true);
    nodesLayout->addWidget(m_scale);
    return nodes;
}

// The profiling job: progress and Cancel, shown while it runs.
QWidget *ProfilePanel::buildJobRow()
{
    m_jobRow = new QWidget(this);
    auto *jobLayout = new QHBoxLayout(m_jobRow);
    jobLayout->setContentsMargins(0, 0, 0, 0);
    m_jobProgress = new QProgressBar(m_jobRow);
    m_jobProgress->setObjectName(QStringLiteral("profileProgress"));
    auto *cancel = new QPushButton(tr("Cancel"), m_jobRow);
    cancel->setObjectName(QStringLiteral("cancelProfiling"));
    jobLayout->addWidget(m_jobProgress, 1);
    jobLayout->addWidget(cancel);
    m_jobRow->hide();
    connect(cancel, &QPushButton::clicked, &m_doc.profiling(), &ProfilingJob::cancel);
    connect(&m_doc.profiling(), &ProfilingJob::progress, this, [this](int done, int total) {
        m_jobRow->show();
        m_jobProgress->setRange(0, total);
        m_jobProgress->setValue(done);
        m_jobProgress->setFormat(tr("Profiling version %1 of %2…").arg(std::min(done + 1, total)).arg(total));
    });
    connect(&m_doc.profiling(), &ProfilingJob::finished, this, [this](int added, const QString &message, bool ok) {
        m_jobRow->hide();
        m_status = message;
        if (added > 0) // the new profiles: the version on screen's, else the first of the job
            showProfile(m_doc.profiles().current() >= int(m_doc.profiles().size()) - added ? -1 : int(m_doc.profiles().size()) - added);
        Q_EMIT jobFinished(ok, message);
    });
    return m_jobRow;
}

const prof::Profile *ProfilePanel::profile() const
{
    return m_shown >= 0 && size_t(m_shown) < m_doc.profiles().size() ? m_doc.profiles()[size_t(m_shown)].profile.get() : nullptr;
}

const prof::Profile *ProfilePanel::comparison() const
{
    return m_compare >= 0 && size_t(m_compare) < m_doc.profiles().size() ? m_doc.profiles()[size_t(m_compare)].profile.get() : nullptr;
}

void ProfilePanel::documentChanged()
{
    const int n = int(m_doc.profiles().size());
    if (m_shown >= n)
        m_shown = -1;
    if (m_compare >= n)
        m_compare = -1;
    if (m_followVersion || m_shown < 0) {
        // The version on screen's own profile; else the latest, shown marked.
        const int current = m_doc.profiles().current();
        m_shown = current >= 0 ? current : n - 1;
    }
    if (m_compare == m_shown)
        m_compare = -1;
    fill();
}

void ProfilePanel::showProfile(int index)
{
    m_followVersion = index < 0;
    m_shown = index;
    if (m_compare == index)
        m_compare = -1;
    documentChanged();
}

void ProfilePanel::compareWith(int index)
{
    m_compare = index == m_shown ? -1 : index;
    fill();
}

bool ProfilePanel::openProfile(const QString &path)
{
    const int before = int(m_doc.profiles().size());
    QString error;
    const int added = m_doc.profiles().open(path, &error);
    if (added == 0) {
        m_status = error;
        return false;
    }
    // The file's profile of the version on screen, else its first.
    int show = before;
    for (int i = before; i < before + added; ++i)
        if (m_doc.profiles()[size_t(i)].versionId == m_doc.history()->currentId() && m_doc.profiles()[size_t(i)].versionId != 0)
            show = i;
    m_status = added == 1 ? tr("Opened profile %1").arg(QFileInfo(path).fileName())
                          : tr("Opened %1 profiles from %2").arg(added).arg(QFileInfo(path).fileName());
    showProfile(show);
    m_followVersion = m_doc.profiles()[size_t(show)].versionId != 0; // bound: A follows the version on screen
    return true;
}

bool ProfilePanel::openComparison(const QString &path)
{
    if (!profile()) {
        m_status = tr("Open a profile first (version A); then the one to compare with (version B)");
        return false;
    }
    const int before = int(m_doc.profiles().size()), a = m_shown;
    m_followVersion = false; // A stays what it is
    QString error;
    if (m_doc.profiles().open(path, &error) == 0) {
        m_status = error;
        return false;
    }
    m_status = tr("Comparing with %1").arg(QFileInfo(path).fileName());
    m_shown = a;
    compareWith(before);
    return true;
}

void ProfilePanel::closeComparison() { compareWith(-1); }

void ProfilePanel::closeProfile()
{
    m_shown = m_compare = -1;
    m_followVersion = true;
    m_doc.profiles().close();
    m_status = tr("Profile closed");
    fill();
}

void ProfilePanel::fillChoices()
{
    m_choice->clear();
    m_compareChoice->clear();
    m_compareChoice->addItem(tr("(none)"), -1);
    const auto &ps = m_doc.profiles();
    const uint64_t current = m_doc.history()->currentId();
    for (int i = 0; i < int(ps.size()); ++i) {
        const auto &p = *ps[size_t(i)].profile;
        QString text = QString::fromStdString(p.version.empty() ? p.graph : p.version);
        if (text.isEmpty())
            text = tr("profile %1").arg(i + 1);
        if (ps[size_t(i)].versionId != 0 && ps[size_t(i)].versionId == current)
            text += tr(" — on screen");
        m_choice->addItem(text, i);
        m_compareChoice->addItem(text, i);
    }
    m_choice->setCurrentIndex(m_shown);
    m_compareChoice->setCurrentIndex(m_compare + 1);
    m_choice->setEnabled(!ps.empty());
    m_compareChoice->setEnabled(ps.size() > 1);
}

QString ProfilePanel::summary() const { return m_summaryText; }
QString ProfilePanel::scaleText() const { return m_scale->text(); }

QString ProfilePanel::compareText(double a, double b, const QString &less, const QString &more)
{
    if (a <= 0 || b <= 0)
        return QStringLiteral("—");
    const double r = std::max(a, b) / std::min(a, b);
    if (r < 1.005)
        return tr("same");
    const int decimals = r >= 10 ? 0 : r >= 1.1 ? 1 : 2;
    return QStringLiteral("%1× %2").arg(r, 0, 'f', decimals).arg(b < a ? less : more);
}

QString ProfilePanel::statsFor(const std::string &node) const
{
    const prof::Profile *p = profile();
    if (!p || !m_bound)
        return {};
    auto it = m_index.find(node);
    if (it == m_index.end() || it->second >= p->nodeStats.size())
        return {};
    const auto &s = p->nodeStats[it->second];
    if (p->compiled()) { // the kernels that cover the node
        QStringList names;
        for (const auto &k : p->kernels)
            if (k.iteration == 0 && prof::covers(k, int(it->second)))
                names << QString::fromStdString(k.name);
        return tr("%n %1 kernel(s): %2 · %3/iter", nullptr, int(names.size()))
            .arg(QString::fromStdString(p->backend), names.join(QStringLiteral(", ")), formatTime(s.gpuUs));
    }
    const bool cpu = p->mode == "cpu";
    return tr("%1 %2/iter · %3 %4 · %5 host")
        .arg(s.kernels, 0, 'g', 4)
        .arg(cpu ? tr("ops") : tr("kernels"))
        .arg(formatTime(s.gpuUs))
        .arg(cpu ? tr("in ops") : tr("GPU"))
        .arg(formatTime(s.cpuUs));
}

void ProfilePanel::fill()
{
    fillChoices();
    std::vector<std::pair<const ir::Node *, double>> heat;
    const prof::Profile *shown = profile(), *b = comparison();
    const auto &ps = m_doc.profiles();
    {
        std::vector<std::shared_ptr<const prof::Profile>> all;
        for (const auto &dp : ps)
            all.push_back(dp.profile);
        m_chart->setBars(ProfileChart::versionBars(all), m_shown, m_compare);
        std::vector<ProfileChart::Trial> trials;
        const rewrite::TuneResult *tuned = m_doc.tuning().result();
        for (const auto &t : tuned ? tuned->trials : std::vector<rewrite::TuneTrial>{})
            trials.push_back({QString::fromStdString(std::to_string(t.index) + " " + t.kind + ": " + t.decision),
                              QString::fromStdString(t.kind), t.seconds, t.accepted, !t.error.empty()});
        m_chart->setSearch(std::move(trials), tuned ? tuned->original.seconds : 0, tuned ? tuned->greedy.seconds : 0,
                           tuned ? tuned->tuned.seconds : 0);
    }
    m_timelinePane->setProfiles(shown ? ps[size_t(m_shown)].profile : nullptr, b ? ps[size_t(m_compare)].profile : nullptr);
    m_index.clear();
    m_bIndex.clear();
    m_bound = shown && ps[size_t(m_shown)].versionId != 0 && ps[size_t(m_shown)].versionId == m_doc.history()->currentId();
    if (!shown) {
        m_model->clearRows();
        m_summaryText = tr("No profile. Profile ▸ Profile This Version runs it on the local GPU; Profile ▸ Open Profile… reads one "
                           "that `fxlens-cli profile -o p.json` saved.");
        m_summaryBrief.clear();
        showSummary();
        m_scale->clear();
        m_caption->clear();
        Q_EMIT heatChanged(heat);
        m_groups.clear();
        Q_EMIT kernelGroupsChanged(m_groups);
        return;
    }
    const auto &p = *shown;
    for (size_t i = 0; i < p.nodes.size(); ++i)
        m_index.emplace(p.nodes[i].name, i);
    if (b)
        for (size_t i = 0; i < b->nodes.size(); ++i)
            m_bIndex.emplace(b->nodes[i].name, i);
    selectNode(m_selectedNode); // selected before this profile was shown: its kernels listed now
    m_caption->setText(tr("Per iteration (medians over the timed iterations); %: share of the busy iteration%1")
                           .arg(b ? tr("; B and Δ: version B's time and the change") : QString()));
    double top = 0;
    std::string topNode;
    fillTable(p, b, heat, top, topNode);
    fillSummary();
    fillScale(top, topNode);
    askTimelineRoom(); // B's tracks (and a longer summary) need room too
    Q_EMIT heatChanged(heat);
    m_groups = m_bound && m_doc.graph() ? views::kernelGroups(p, *m_doc.graph()) : std::vector<KernelGroup>{};
    Q_EMIT kernelGroupsChanged(m_groups);
}

void ProfilePanel::selectKernelGroup(int g)
{
    if (g >= 0 && size_t(g) < m_groups.size() && !m_groups[size_t(g)].kernels.empty())
        timeline()->selectKernel(int(m_groups[size_t(g)].kernels.front()));
}

void ProfilePanel::fillTable(const prof::Profile &p, const prof::Profile *b, std::vector<std::pair<const ir::Node *, double>> &heat,
                             double &top, std::string &topNode)
{
    const bool cpu = p.mode == "cpu" && !p.compiled(); // ATen ops stand for kernels
    // Short headers (every figure is per iteration, as the caption says), so that the numbers, not
    // their labels, set the columns' widths.
    QStringList headers = {tr("Node"), cpu ? tr("Ops") : tr("Kernels"),
                           cpu                   ? tr("Op time")
                               : p.mode == "cpu" ? tr("Kernel time")
                                                 : tr("GPU time"),
                           tr("%")};
    if (b)
        headers << tr("B time") << tr("Δ B−A");
    else
        headers << tr("Host");
    // Bound by identity (GraphDocument: the version's fingerprint): otherwise it was recorded on
    // another graph or version, and nothing is tinted.
    const ir::Graph *graph = m_doc.graph();
    const double iter = p.summary.gpuBusyUs;
    std::vector<ProfileTableModel::Row> rows;
    for (size_t i = 0; i < p.nodes.size() && i < p.nodeStats.size(); ++i) {
        const auto &st = p.nodeStats[i];
        if (st.kernels <= 0 && st.gpuUs <= 0)
            continue;
        const ir::Node *n = graph && m_bound ? graph->find(p.nodes[i].name) : nullptr;
        if (n) {
            heat.emplace_back(n, st.gpuUs);
            if (st.gpuUs > top)
                top = st.gpuUs, topNode = p.nodes[i].name;
        }
        ProfileTableModel::Row row;
        row.node = QString::fromStdString(p.nodes[i].name);
        row.toolTip = QString::fromStdString(p.nodes[i].target) + (n || !graph ? QString() : tr(" (recorded on another version)"));
        const double share = iter > 0 ? 100.0 * st.gpuUs / iter : 0;
        row.numbers = {
            {count(st.kernels), st.kernels}, {formatTime(st.gpuUs), st.gpuUs}, {QStringLiteral("%1 %").arg(share, 0, 'f', 1), share}};
        if (!b) {
            row.numbers.push_back({formatTime(st.cpuUs), st.cpuUs});
        } else {
            const auto it = m_bIndex.find(p.nodes[i].name);
            const double bt = it != m_bIndex.end() && it->second < b->nodeStats.size() ? b->nodeStats[it->second].gpuUs : 0;
            row.numbers.push_back({it == m_bIndex.end() ? tr("—") : formatTime(bt), bt});
            const double d = bt - st.gpuUs;
            row.numbers.push_back({d == 0 ? QStringLiteral("0") : (d > 0 ? QStringLiteral("+") : QString()) + formatTime(d), d});
        }
        rows.push_back(std::move(row));
    }
    m_model->setTable(headers, std::move(rows));
    m_table->sortByColumn(ProfileTableModel::TimeCol, Qt::DescendingOrder);
    // The node column takes what the numbers leave (names elide; the full name and target are the
    // tooltip), so the table fits the panel.
    auto *h = m_table->horizontalHeader();
    h->setStretchLastSection(false);
    for (int c = 1; c < m_model->columnCount(); ++c)
        h->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(ProfileTableModel::NodeCol, QHeaderView::Stretch);
}

void ProfilePanel::fillSummary()
{
    const auto &p = *profile();
    const prof::Profile *bp = comparison();
    const bool cpu = p.mode == "cpu" && !p.compiled();
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
                    .arg(q.compiled() ? tr("; compiled by %1: its kernels, each on the FX nodes it came from").arg(esc(q.backend))
                             : cpu    ? tr("; a CPU profile: ATen ops stand for kernels")
                                      : QString())
                    .arg(count(s.kernelsPerIter))
                    .arg(cpu ? tr("ops") : tr("kernels"))
                    .arg(formatTime(s.gpuBusyUs))
                    .arg(formatTime(s.wallUs))
                    .arg(formatTime(s.cpuUs));
        if (s.peakMemBytes >= 0)
            text += tr(" · peak %1 MiB").arg(double(s.peakMemBytes) / (1 << 20), 0, 'f', 1);
        return text;
    };
    QString text = line(p, bp ? QStringLiteral("A: ") : QString()), brief;
    if (bp) {
        text += QStringLiteral("<br>") + line(*bp, QStringLiteral("B: "));
        const auto &a = p.summary, &b = bp->summary;
        brief = tr("<b>B vs A</b>: %1 · GPU busy %2 · wall %3")
                    .arg(compareText(a.kernelsPerIter, b.kernelsPerIter, cpu ? tr("fewer ops") : tr("fewer kernels"),
                                     cpu ? tr("more ops") : tr("more kernels")),
                         compareText(a.gpuBusyUs, b.gpuBusyUs, tr("faster"), tr("slower")),
                         compareText(a.wallUs, b.wallUs, tr("faster"), tr("slower")));
        text += QStringLiteral("<br>") + brief;
    }
    if (m_doc.graph() && !m_bound) {
        const QString other = tr("<b>Recorded on another graph or version</b> (%1), so the canvas is not tinted; the version it was "
                                 "recorded on tints it when it is on screen")
                                  .arg(m_doc.profiles().boundText(m_shown));
        text += QStringLiteral("<br>") + other;
        brief += (brief.isEmpty() ? QString() : QStringLiteral("<br>")) + other;
    }
    m_summaryText = text;
    m_summaryBrief = bp ? brief : QString(); // A/B: each side's figures are the timeline's header rows
    showSummary();
}

void ProfilePanel::showSummary()
{
    const bool brief = m_tabs->currentWidget() == m_timelinePane && !m_summaryBrief.isEmpty();
    m_summary->setText(brief ? m_summaryBrief : m_summaryText);
}

void ProfilePanel::fillScale(double top, const std::string &topNode)
{
    if (!m_bound || top <= 0) {
        m_scale->clear();
        return;
    }
    // The canvas' tint (GraphCanvas::heatTint) from 0 to the hottest node's time.
    const QColor base = GraphCanvas::tintBase(palette().color(QPalette::Base).lightness() < 128);
    const auto tint = [&](double h) { return GraphCanvas::heatTint(base, h).name(); };
    m_scale->setText(tr("Tint: <span style=\"background:%1\">&nbsp;0&nbsp;</span><span style=\"background:%2\">&nbsp;&nbsp;&nbsp;&nbsp;"
                        "</span><span style=\"background:%3;color:white\">&nbsp;%4&nbsp;</span> (%5; device time per iteration)")
                         .arg(tint(0), tint(0.5), tint(1), formatTime(top), QString::fromStdString(topNode).toHtmlEscaped()));
}

void ProfilePanel::setSelection(Selection *selection)
{
    connect(selection, &Selection::currentNodeChanged, this,
            [this](const ir::Node *n) { selectNode(n ? QString::fromStdString(n->name()) : QString()); });
    connect(this, &ProfilePanel::nodeRequested, selection, &Selection::selectNode);
}

void ProfilePanel::selectNode(const QString &name)
{
    m_selectedNode = name;
    // A node of the graph on screen only: one that a step has removed since (still in the profile
    // of an earlier version) is selected nowhere, and its kernels are not listed.
    const ir::Graph *graph = m_doc.graph();
    const bool onScreen = !name.isEmpty() && (!graph || graph->find(name.toStdString()));
    const auto it = onScreen ? m_index.find(name.toStdString()) : m_index.end();
    m_timelinePane->selectNode(it == m_index.end() ? -1 : int(it->second));
}

bool ProfilePanel::profileVersions(const QString &list, bool freezeWeights)
{
    const auto *h = m_doc.history();
    auto versions = rewrite::parseVersionList(list.toStdString(), size_t(h->historySize()), size_t(h->version()));
    if (!versions) {
        m_status = QString::fromStdString(versions.error().message);
        return false;
    }
    ProfileRequest settings;
    settings.freezeWeights = freezeWeights;
    QString error;
    if (!m_doc.profiling().start(std::vector<int>(versions.value().begin(), versions.value().end()), settings, &error)) {
        m_status = error;
        return false;
    }
    m_status = tr("Profiling %1…").arg(counted(qint64(versions.value().size()), "version"));
    return true;
}

bool ProfilePanel::exportTrace(const QString &path)
{
    std::vector<const prof::Profile *> ps;
    for (const auto &p : m_doc.profiles())
        ps.push_back(p.profile.get());
    if (ps.empty()) {
        m_status = tr("No profile to export");
        return false;
    }
    if (auto w = prof::writeChromeTrace(ps, path.toStdString()); !w) {
        m_status = QString::fromStdString(w.error().toString());
        return false;
    }
    m_status = tr("Wrote a Chrome trace of %1 to %2 (open it in Perfetto)").arg(counted(qint64(ps.size()), "profile"), path);
    return true;
}

} // namespace fxlens::views
