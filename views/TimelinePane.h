// SPDX-License-Identifier: MIT
// TimelinePane: the profile panel's Timeline tab. The kernel timeline (A, and B under it when the
// panel compares), and under a splitter the measured range's readout and a table of kernels: those
// of the measured range, else those of the selected node, else (no node selected) those of the first
// timed iteration, filtered by name. Clicking a row selects the kernel on the timeline (and so its
// node) and zooms onto it.
#pragma once

#include "profile/Profile.h"

#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;

namespace fxlens::views {

class KernelTableModel;
class KernelTimeline;

class TimelinePane : public QWidget {
    Q_OBJECT
public:
    explicit TimelinePane(QWidget *parent = nullptr);
    ~TimelinePane() override;

    /// Shows profile `a` with `b` under it (null: none); a new A drops the name filter.
    void setProfiles(std::shared_ptr<const prof::Profile> a, std::shared_ptr<const prof::Profile> b);
    /// Selects node `node` of A (-1: none) on the timeline and lists its kernels (without a range).
    void selectNode(int node);

    KernelTimeline *timeline() const { return m_timeline; }
    QTableView *table() const { return m_table; }
    KernelTableModel *tableModel() const { return m_model; }
    QSortFilterProxyModel *filterModel() const { return m_filtered; }
    QLineEdit *filter() const { return m_filter; }
    /// What the table lists ("12 kernels of node addmm_3 ...", "250 kernels in the range ...",
    /// "All 2202 kernels of iteration 0 ...").
    QString caption() const;
    /// The measured range's readout ("" without a range).
    QString readout() const;
    /// Room for every track of A and B, a range's readout and kTableRows rows of the table.
    QSize sizeHint() const override;
    /// The table's rows that the pane keeps in view (the timeline's rows shrink first).
    static constexpr int kTableRows = 6;

protected:
    void resizeEvent(QResizeEvent *e) override;

private:
    void refresh();
    void fitReadout();
    void placeSplit();
    int tableRowsHeight(int rows) const;

    std::shared_ptr<const prof::Profile> m_a;
    QSplitter *m_split = nullptr;
    KernelTimeline *m_timeline = nullptr;
    QLabel *m_readout = nullptr, *m_caption = nullptr;
    QLineEdit *m_filter = nullptr;
    KernelTableModel *m_model = nullptr;
    QSortFilterProxyModel *m_filtered = nullptr;
    QTableView *m_table = nullptr;
    int m_trackHeight = 0;    ///< the timeline's height for its tracks when they last changed
    bool m_userSplit = false; ///< the user moved the splitter (kept until the tracks change)
};

} // namespace fxlens::views
