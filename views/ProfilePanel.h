// SPDX-License-Identifier: MIT
// ProfilePanel: the document's profiles (ProfileStore) over the open graph. A profile
// recorded on the version on screen is shown and tints the canvas by each node's device time; one
// of another version or graph is shown marked, and tints nothing. Above: the version's summary and
// the choice of profile (A) and of a second one to compare with (B). Tabs: the profiled nodes by
// device time (kernels or ops per iteration, device and host time with units, share of the
// iteration, B's time and the change per node; click a row to select the node), the kernel
// timeline with B under A and a kernel table (TimelinePane), and the per-version chart of every
// profile (ProfileChart).
#pragma once

#include "KernelGroups.h"
#include "ir/Graph.h"
#include "profile/Profile.h"

#include <QWidget>

#include <string>
#include <unordered_map>
#include <vector>

class QComboBox;
class QLabel;
class QProgressBar;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace fxlens::views {

class GraphDocument;
class KernelTimeline;
class ProfileChart;
class ProfileTableModel;
class Selection;
class TimelinePane;

class ProfilePanel : public QWidget {
    Q_OBJECT
public:
    explicit ProfilePanel(GraphDocument &doc, QWidget *parent = nullptr);
    ~ProfilePanel() override;

    /// Reads a saved profile or profile set into the document and shows it; on failure the current
    /// one stays and status() says why.
    bool openProfile(const QString &path);
    /// Drops every profile of the document (table, summary, canvas tint) and a comparison.
    void closeProfile();
    /// A second version to compare with (B): a profile file read into the document.
    bool openComparison(const QString &path);
    void closeComparison();
    /// Shows the document's profile `index` as A (-1: the one of the version on screen).
    void showProfile(int index);
    /// Compares with the document's profile `index` (-1: none).
    void compareWith(int index);
    int shownIndex() const { return m_shown; }
    const prof::Profile *comparison() const;
    /// "12.3 µs", "4.56 ms", "1.20 s".
    static QString formatTime(double us);
    /// B against A as a reader says it: "108× faster", "1.3× slower", "12× fewer kernels", "same"
    /// (`less` when B is smaller, `more` when larger).
    static QString compareText(double a, double b, const QString &less, const QString &more);
    /// The profile shown was recorded on the version on screen.
    bool bound() const { return m_bound; }
    const prof::Profile *profile() const;
    /// The profile's summary (with B: both, and B against A). On the Timeline tab, where the tracks'
    /// header rows give each side's figures, the panel shows only the B against A line.
    QString summary() const;
    QString status() const { return m_status; }
    /// "3 kernels/iter · 12.4 µs GPU · 5.1 µs host" for a node of the profile ("" when not profiled).
    QString statsFor(const std::string &node) const;
    /// The node table: a view of tableModel() sorted by number (ProfileTableModel::SortRole).
    QTableView *table() const { return m_table; }
    ProfileTableModel *tableModel() const { return m_model; }
    KernelTimeline *timeline() const;
    /// The Timeline tab: the timeline (A, and B under it), the range readout and the kernel table.
    TimelinePane *timelinePane() const { return m_timelinePane; }
    ProfileChart *chart() const { return m_chart; }
    QTabWidget *tabs() const { return m_tabs; }
    /// The tint scale under the table ("" when nothing is tinted).
    QString scaleText() const;
    /// A node was selected elsewhere (canvas, table): its kernels and ranges are highlighted.
    void selectNode(const QString &name);
    /// A compiled profile's kernels as groups of the open graph's nodes (empty when the profile
    /// shown is not compiled or not recorded on the version on screen).
    const std::vector<KernelGroup> &kernelGroups() const { return m_groups; }
    /// Selects group `g`'s kernel (its first record) on the timeline, and so its nodes.
    void selectKernelGroup(int g);
    /// Follows the selection (selectNode); a row or kernel picked selects its node.
    void setSelection(Selection *selection);
    /// Profiles versions of the history on the local GPU (ProfilingJob), off
    /// the GUI thread, with a progress bar and Cancel in this panel. `list` as
    /// rewrite::parseVersionList reads it ("current", "0,5,last", "all", "spread:5"). False with
    /// status() saying why when it cannot start.
    bool profileVersions(const QString &list, bool freezeWeights = false);
    /// Writes every profile of the document as one Chrome trace (Perfetto opens it).
    bool exportTrace(const QString &path);

Q_SIGNALS:
    void nodeRequested(const QString &name);
    /// A profiling job ended (`message`: what it did, the device, a CPU fallback or why it failed).
    void jobFinished(bool ok, const QString &message);
    /// Device time (host time in a CPU profile) per node of the open graph.
    void heatChanged(const std::vector<std::pair<const ir::Node *, double>> &heat);
    /// The kernel groups of the profile shown (kernelGroups()) changed.
    void kernelGroupsChanged(const std::vector<KernelGroup> &groups);
    /// The Timeline tab is shown (or its tracks changed) and this panel needs `height` pixels for
    /// every track of A and B, a range's readout and a few rows of the kernel table (a window
    /// gives its dock that room when it can).
    void timelineRoomWanted(int height);
    /// The selected kernel's group (-1: no kernel of a group is selected).
    void kernelGroupSelected(int group);

protected:
    void showEvent(QShowEvent *e) override;

private:
    void askTimelineRoom();   // timelineRoomWanted() when the Timeline tab is shown
    QWidget *buildNodesTab(); // the per-node table, its caption and the heat scale
    QWidget *buildJobRow();   // the profiling job's progress bar and Cancel
    void documentChanged();
    void fillChoices();
    void fill();
    /// The node table's rows for profile `p` (compared with `b`, may be null); `heat`: the device
    /// time of each of the graph's nodes when the profile is bound, `top` the hottest's.
    void fillTable(const prof::Profile &p, const prof::Profile *b, std::vector<std::pair<const ir::Node *, double>> &heat, double &top,
                   std::string &topNode);
    void fillSummary();
    void showSummary(); // the whole summary, or on the Timeline tab with B, its brief form
    void fillScale(double top, const std::string &topNode);

    GraphDocument &m_doc;
    int m_shown = -1;            ///< the document's profile shown as A
    int m_compare = -1;          ///< the document's profile compared with (B)
    bool m_followVersion = true; ///< A follows the version on screen (until a profile is chosen)
    bool m_bound = false;
    std::vector<KernelGroup> m_groups;                         ///< kernelGroups()
    std::unordered_map<std::string, size_t> m_index, m_bIndex; ///< profile node by name (A, B)
    QString m_selectedNode;                                    ///< the selection's node (its kernels are listed)
    QString m_status;
    QString m_summaryText, m_summaryBrief; ///< summary(); its B against A line (A/B only)
    QLabel *m_summary = nullptr, *m_caption = nullptr, *m_scale = nullptr;
    QComboBox *m_choice = nullptr, *m_compareChoice = nullptr;
    QTabWidget *m_tabs = nullptr;
    ProfileTableModel *m_model = nullptr;
    QSortFilterProxyModel *m_sorted = nullptr;
    QTableView *m_table = nullptr;
    QWidget *m_jobRow = nullptr;
    QProgressBar *m_jobProgress = nullptr;
    TimelinePane *m_timelinePane = nullptr;
    ProfileChart *m_chart = nullptr;
};

} // namespace fxlens::views
