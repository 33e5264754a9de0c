// SPDX-License-Identifier: MIT
// KernelTimeline: one profile (A) as a timeline, Nsight Systems / Perfetto style, and optionally a
// second one (B) under it on the same axis, each starting at its first iteration. Host tracks: the
// timed iterations, the FX-node ranges (NVTX) of each host thread and the host's launch calls over
// the GPU's launch-bound idle time (amber: the device waited for a launch); device tracks: one per
// CUDA stream with its kernels, copies and fills (a CPU profile has one track of ATen ops).
//
// Ink is proportional to time: a pixel column is shaded, from the bottom, by the share of its time
// the track is busy (overlapping events merged first); events at least a few pixels wide are drawn
// in their colour with their name. It opens fitted to the data, and refits on resize until zoomed.
// Wheel or W/S zooms around the pointer, A/D or a middle/Shift drag pans, Home fits; a left drag
// measures a range, clamped to the data (its duration, and the busy time and kernels inside it);
// Esc drops it. Hovering shows an event's details; clicking a kernel selects it, draws the flow
// link from its node's range to it and asks for its FX node; selecting a node highlights its
// kernels and ranges.
#pragma once

#include "TimelineTracks.h"
#include "profile/Profile.h"

#include <QWidget>

#include <array>
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

    using Track = TimelineTrack;

    /// The profile shown (A); the view fits it.
    void setProfile(std::shared_ptr<const prof::Profile> p);
    /// A second profile (B) drawn under A on the same axis (null: none); the view fits both.
    void setComparison(std::shared_ptr<const prof::Profile> b);
    const prof::Profile *profile() const { return m_sides[0].p.get(); }
    const prof::Profile *comparison() const { return m_sides[1].p.get(); }
    const std::vector<Track> &tracks() const { return m_tracks; }
    /// Room for every track at full row height.
    QSize sizeHint() const override;
    /// Room for every track at the smallest row height.
    QSize minimumSizeHint() const override;
    /// Where track `t` is drawn, its name column excluded (widget coordinates).
    QRect trackRect(int t) const;
    /// Display time (the shared axis) of profile time `us` of group `group` (0: A, 1: B).
    double displayTime(int group, double us) const { return us - m_sides[size_t(group)].offsetUs; }

    // --- view (display microseconds) ---
    /// Shows all the data: from the first event of A and B to the last.
    void fit();
    /// The view is fitted to the data (and refits on resize) until zoomed or panned.
    bool fitted() const { return m_fitted; }
    void setView(double startUs, double usPerPixel);
    double viewStart() const { return m_t0; }
    double viewEnd() const;
    double usPerPixel() const { return m_scale; }
    double dataStart() const { return m_beginUs; }
    double dataEnd() const { return m_endUs; }
    /// Zooms by `factor` (>1: in) around the x position `x` in widget pixels.
    void zoom(double factor, double x);
    void pan(double pixels);

    // --- measured range (display microseconds) ---
    void setRange(double fromUs, double toUs);
    void clearRange();
    bool hasRange() const { return m_rangeTo > m_rangeFrom; }
    std::pair<double, double> range() const { return {m_rangeFrom, m_rangeTo}; }
    /// Where the range's banner is drawn on the ruler (within the range's span) and its text; empty
    /// where the text does not fit there.
    std::pair<QRectF, QString> rangeBanner(const QFontMetrics &fm) const;
    /// Device busy time (union over the streams) of group `group` in [fromUs, toUs).
    double busyIn(int group, double fromUs, double toUs) const;
    /// Kernels of group `group` that overlap [fromUs, toUs), by start.
    std::vector<uint32_t> kernelsIn(int group, double fromUs, double toUs) const;
    /// What the range readout says, "" without one: a line for the range ("1.000 ms to 6.000 ms:
    /// 5.000 ms"), then one per profile ("A: GPU busy 500.0 µs (10.0 %) · 250 kernels ...").
    QString rangeText() const;

    // --- selection (profile A) ---
    /// Selects kernel `index` of the profile (-1: none): it is outlined, a flow link joins its
    /// node's range to it, and nodeRequested() names its node.
    void selectKernel(int index);
    int selectedKernel() const { return m_kernel; }
    /// Zooms so that kernel `index` and its launch fill about a third of the view, centred.
    void showKernel(int index);
    /// Highlights every kernel and range of node `node` (program order index in A; -1: none), and
    /// those of the node of the same name in B.
    void selectNode(int node);
    int selectedNode() const { return m_node; }
    /// Kernels of the selected node in this profile.
    size_t highlightedKernels() const;
    /// The event under a widget position: (track, index into the track's kind of records), or -1.
    std::pair<int, int> eventAt(const QPoint &pos) const;
    /// Header track `t`'s text as drawn at the timeline's width (A/B mode): the fullest of
    /// headerForms in which both headers fit, else the shortest elided.
    QString headerText(int t) const;
    /// A profile's header in A/B mode (`group` 0: A, 1: B), fullest first: "B · step 1214
    /// (dedupe_views @ permute) — 17 kernels/iter · busy 1.2 ms of 9.8 ms wall", then without the
    /// step's rule, then without the wall time.
    static QStringList headerForms(const prof::Profile &p, int group);
    /// What hovering at a widget position shows (a kernel, a node range, a launch or an iteration).
    QString toolTipAt(const QPoint &pos) const;
    /// The tooltip text of kernel `index` of group `group` (what hovering shows).
    QString kernelDetails(int index, int group = 0) const;
    /// Blocks drawn by the last paint (named events and runs of fully busy pixel columns), and how
    /// many pixel columns were shaded by a partial busy share (sub-pixel events).
    size_t lastBlocks() const { return m_lastBlocks; }
    size_t lastFolds() const { return m_lastFolds; }
    /// Where kernel `index` of A is drawn (widget coordinates; empty when out of view).
    QRectF kernelRect(int index) const;

Q_SIGNALS:
    void nodeRequested(const QString &name);
    /// Kernel `index` of A was selected (-1: the selection was dropped).
    void kernelSelected(int index);
    /// The measured range changed or was dropped.
    void rangeChanged();

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
    struct Side {
        std::shared_ptr<const prof::Profile> p;
        double offsetUs = 0;
        Intervals deviceBusy;  ///< the union of its device tracks' busy time
        Intervals launchBound; ///< the device's idle time waiting for the host's launches
    };
    void setSide(int group, std::shared_ptr<const prof::Profile> p);
    void rebuild();
    const prof::Profile &profileOf(const Track &t) const { return *m_sides[size_t(t.group)].p; }
    /// Start and duration (display times) of event `i` of track `t`.
    std::pair<double, double> span(const Track &t, uint32_t i) const;
    int trackTop(int t) const;
    double xOf(double us) const { return kLabelWidth + (us - m_t0) / m_scale; }
    double usAt(double x) const { return m_t0 + (x - kLabelWidth) * m_scale; }
    void applyView(double startUs, double usPerPixel);
    void fitRows();
    /// The node range of `node` in `iteration` that encloses `atUs` (or the first of them), -1.
    int rangeOf(int node, int iteration, double atUs) const;
    bool highlighted(const Track &t, uint32_t i) const;
    void clickAt(const QPoint &pos);
    QString launchToolTip(const Track &t, int index, double atUs) const;
    // Painting (TimelinePaint.cpp): the ruler, a track (its shading, its events and its name), an
    // event's colour and label, the selected kernel's flow link, the measured range.
    void paintRuler(QPainter &p) const;
    void paintTrack(QPainter &p, size_t ti, const QFontMetrics &fm);
    void paintCoverage(QPainter &p, const Track &t, int top);
    void paintEvents(QPainter &p, const Track &t, int top, const QFontMetrics &fm);
    void paintLaunches(QPainter &p, const Track &t, int top);
    std::pair<QColor, QString> eventLook(const Track &t, uint32_t i) const;
    void paintFlowLink(QPainter &p) const;
    void paintRange(QPainter &p, const QFontMetrics &fm) const;

    static constexpr int kLabelWidth = 130;
    /// Rows are this tall, or shorter (down to kMinRowHeight) so that every track fits.
    static constexpr int kRowHeight = 20, kMinRowHeight = 14;
    static constexpr int kRulerHeight = 18;
    /// Events at least this wide (pixels) are drawn one by one, named; narrower ones shade columns.
    static constexpr double kBlockPx = 3.0;

    std::array<Side, 2> m_sides;
    std::vector<Track> m_tracks;
    double m_t0 = 0, m_scale = 1, m_beginUs = 0, m_endUs = 1;
    bool m_fitted = true;
    int m_row = kRowHeight;
    double m_rangeFrom = 0, m_rangeTo = 0;
    int m_kernel = -1, m_node = -1, m_nodeB = -1;
    enum class Drag { None, Pending, Pan, Measure };
    Drag m_drag = Drag::None;
    QPoint m_dragFrom;
    double m_dragT0 = 0;
    size_t m_lastBlocks = 0, m_lastFolds = 0;
};

} // namespace fxlens::views
