// SPDX-License-Identifier: MIT
// KernelTimeline: one profile as a timeline (Perfetto/Nsight style). Host tracks: the timed
// iterations and, nested under them, the FX-node ranges (NVTX) of each host thread; device tracks:
// one per CUDA stream with its kernels, copies and fills (a CPU profile has one track of ATen ops).
// Wheel or W/S zooms around the pointer, drag or A/D pans, Home fits; events narrower than a pixel
// are folded into one block per pixel column (with their count), so 100k kernels draw in
// milliseconds. Hovering shows an event's details (kernel, grid/block, duration, node,
// correlation); clicking a kernel selects it, draws the flow link from its node's range to it and
// asks for its FX node; selecting a node highlights its kernels and ranges.
#pragma once

#include "profile/Profile.h"

#include <QWidget>

#include <memory>
#include <utility>
#include <vector>

class QPainter;
class QFontMetrics;

namespace fxlens::views {

class KernelTimeline : public QWidget {
    Q_OBJECT
public:
    explicit KernelTimeline(QWidget *parent = nullptr);
    ~KernelTimeline() override;

    void setProfile(std::shared_ptr<const prof::Profile> p);
    const prof::Profile *profile() const { return m_profile.get(); }

    /// One row of the timeline.
    struct Track {
        enum class Kind { Iterations, NodeRanges, Device };
        Kind kind = Kind::Device;
        QString name;  ///< "iterations", "FX nodes (thread 1)", "cuda:0 stream 7"
        int depth = 0; ///< nesting under the host process (node ranges: 1, under the iterations)
        uint64_t tid = 0;
        int device = -1;
        int64_t stream = -1;
        /// Events sorted by start: indices into the profile's iters / ranges / kernels.
        std::vector<uint32_t> events;
        double maxDurUs = 0;
    };
    const std::vector<Track> &tracks() const { return m_tracks; }

    // --- view (microseconds relative to the profile's start) ---
    void fit();
    void setView(double startUs, double usPerPixel);
    double viewStart() const { return m_t0; }
    double usPerPixel() const { return m_scale; }
    /// Zooms by `factor` (>1: in) around the x position `x` in widget pixels.
    void zoom(double factor, double x);
    void pan(double pixels);

    // --- selection ---
    /// Selects kernel `index` of the profile (-1: none): it is outlined, a flow link joins its
    /// node's range to it, and nodeRequested() names its node.
    void selectKernel(int index);
    int selectedKernel() const { return m_kernel; }
    /// Zooms so that kernel `index` and its launch fill about a third of the view, centred.
    void showKernel(int index);
    /// Highlights every kernel and range of node `node` (program order index; -1: none).
    void selectNode(int node);
    int selectedNode() const { return m_node; }
    /// Kernels of the selected node in this profile.
    size_t highlightedKernels() const;
    /// The event under a widget position: (track, index into the track's kind of records), or -1.
    std::pair<int, int> eventAt(const QPoint &pos) const;
    /// What hovering at a widget position shows (a kernel, a node range or an iteration), "" for nothing.
    QString toolTipAt(const QPoint &pos) const;
    /// The tooltip text of kernel `index` (what hovering shows).
    QString kernelDetails(int index) const;
    /// Blocks drawn by the last paint, and how many of them were folds of sub-pixel events.
    size_t lastBlocks() const { return m_lastBlocks; }
    size_t lastFolds() const { return m_lastFolds; }
    /// Where kernel `index` is drawn (widget coordinates; empty when out of view).
    QRectF kernelRect(int index) const;

Q_SIGNALS:
    void nodeRequested(const QString &name);

protected:
    void paintEvent(QPaintEvent *) override;
    void wheelEvent(QWheelEvent *e) override;
    void mousePressEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;
    void mouseReleaseEvent(QMouseEvent *e) override;
    void keyPressEvent(QKeyEvent *e) override;
    bool event(QEvent *e) override;
    void resizeEvent(QResizeEvent *e) override;

private:
    void buildTracks();
    /// Start and duration of event `i` of track `t`.
    std::pair<double, double> span(const Track &t, uint32_t i) const;
    int trackTop(int t) const;
    double xOf(double us) const { return kLabelWidth + (us - m_t0) / m_scale; }
    double usAt(double x) const { return m_t0 + (x - kLabelWidth) * m_scale; }
    /// The node range of `node` in `iteration` that encloses `atUs` (or the first of them), -1.
    int rangeOf(int node, int iteration, double atUs) const;
    // paintEvent's parts: the ruler, a track (its events and its name), the events in view (sub-pixel
    // ones folded), an event's colour and label, the selected kernel's flow link.
    void paintRuler(QPainter &p) const;
    void paintTrack(QPainter &p, size_t ti, const QFontMetrics &fm);
    void paintEvents(QPainter &p, const Track &t, int top, const QFontMetrics &fm);
    std::pair<QColor, QString> eventLook(const Track &t, uint32_t i) const;
    void paintFlowLink(QPainter &p) const;

    static constexpr int kLabelWidth = 150;
    static constexpr int kRowHeight = 20;
    static constexpr int kRulerHeight = 18;

    std::shared_ptr<const prof::Profile> m_profile;
    std::vector<Track> m_tracks;
    double m_t0 = 0, m_scale = 1, m_endUs = 1;
    int m_kernel = -1, m_node = -1;
    bool m_dragging = false;
    QPoint m_dragFrom;
    double m_dragT0 = 0;
    size_t m_lastBlocks = 0, m_lastFolds = 0;
};

} // namespace fxlens::views
