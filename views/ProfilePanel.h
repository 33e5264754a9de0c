// SPDX-License-Identifier: MIT
// ProfilePanel: a saved profile (`fxlens-cli profile -o p.json`, docs/FORMAT.md) over the open
// graph. It shows the version's summary, a table of the profiled nodes by device time (kernels or
// ops per iteration, device and host time with units, each node's share of the iteration; click a
// row to select the node), the tint scale, and tints the canvas by each node's device time when the
// profile was recorded on the open graph as it is (identity: every node by name, op and target).
// A second profile (version B, `--compare-output`) adds its times and the change per node.
#pragma once

#include "ir/Graph.h"
#include "profile/Profile.h"

#include <QWidget>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

class QLabel;
class QTableWidget;

namespace fxlens::views {

class ProfilePanel : public QWidget {
    Q_OBJECT
public:
    explicit ProfilePanel(QWidget *parent = nullptr);
    ~ProfilePanel() override;

    /// Reads a saved profile; on failure the current one stays and status() says why.
    bool openProfile(const QString &path);
    void setGraph(const ir::Graph *g);
    /// Drops the profile (table, summary, canvas tint) and a comparison.
    void closeProfile();
    /// A second version to compare with (B): its time and the change per node, matched by name.
    bool openComparison(const QString &path);
    void closeComparison();
    const prof::Profile *comparison() const { return m_b.get(); }
    /// "12.3 µs", "4.56 ms", "1.20 s".
    static QString formatTime(double us);
    /// The profile was recorded on the open graph as it is (every node by name, op and target).
    bool bound() const { return m_bound; }
    const prof::Profile *profile() const { return m_profile.get(); }
    QString summary() const;
    QString status() const { return m_status; }
    /// "3 kernels/iter · 12.4 µs GPU · 5.1 µs host" for a node of the profile ("" when not profiled).
    QString statsFor(const std::string &node) const;
    QTableWidget *table() const { return m_table; }
    /// The tint scale under the table ("" when nothing is tinted).
    QString scaleText() const;

Q_SIGNALS:
    void nodeRequested(const QString &name);
    /// Device time (host time in a CPU profile) per node of the open graph.
    void heatChanged(const std::vector<std::pair<const ir::Node *, double>> &heat);

private:
    void fill();

    void fillSummary(size_t mismatched);
    void fillScale(double top, const std::string &topNode);

    std::unique_ptr<prof::Profile> m_profile, m_b;
    std::unordered_map<std::string, size_t> m_bIndex;
    const ir::Graph *m_graph = nullptr;
    bool m_bound = false;
    std::unordered_map<std::string, size_t> m_index; ///< profile node by name
    QString m_status;
    QLabel *m_summary = nullptr, *m_caption = nullptr, *m_scale = nullptr;
    QTableWidget *m_table = nullptr;
};

} // namespace fxlens::views
