// SPDX-License-Identifier: MIT
// The kernel timeline (see KernelTimeline.h).
#include "KernelTimeline.h"

#include "ToolTip.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <map>

namespace fxlens::views {

namespace {

/// A stable colour per kernel name (the same kernel reads the same everywhere).
QColor nameColour(const std::string &name)
{
    const size_t h = std::hash<std::string>{}(name);
    return QColor::fromHsv(int(h % 360), 90 + int((h >> 9) % 60), 200 + int((h >> 17) % 40));
}

QString us(double v)
{
    const double a = std::fabs(v);
    if (a >= 1e6)
        return QStringLiteral("%1 s").arg(v / 1e6, 0, 'f', 3);
    if (a >= 1e3)
        return QStringLiteral("%1 ms").arg(v / 1e3, 0, 'f', 3);
    return QStringLiteral("%1 µs").arg(v, 0, 'f', a >= 100 ? 1 : 2);
}

} // namespace

KernelTimeline::KernelTimeline(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumHeight(120);
    setToolTip(tr("Wheel or W/S: zoom · drag or A/D: pan · Home: fit · click a kernel to select its node"));
}

KernelTimeline::~KernelTimeline() = default;

void KernelTimeline::setProfile(std::shared_ptr<const prof::Profile> p)
{
    if (p == m_profile)
        return;
    m_profile = std::move(p);
    m_kernel = m_node = -1;
    buildTracks();
    fit();
}

void KernelTimeline::buildTracks()
{
    m_tracks.clear();
    m_endUs = 1;
    if (!m_profile)
        return;
    const auto &p = *m_profile;
    auto sortTrack = [&](Track &t) {
        std::sort(t.events.begin(), t.events.end(), [&](uint32_t a, uint32_t b) { return span(t, a).first < span(t, b).first; });
        for (uint32_t i : t.events) {
            const auto [s, d] = span(t, i);
            t.maxDurUs = std::max(t.maxDurUs, d);
            m_endUs = std::max(m_endUs, s + d);
        }
    };
    Track iters;
    iters.kind = Track::Kind::Iterations;
    iters.name = tr("iterations (host)");
    for (uint32_t i = 0; i < p.iters.size(); ++i)
        iters.events.push_back(i);
    m_tracks.push_back(std::move(iters));
    // FX-node ranges, a track per host thread, nested under the iterations.
    std::map<uint64_t, Track> byThread;
    for (uint32_t i = 0; i < p.ranges.size(); ++i) {
        Track &t = byThread[p.ranges[i].tid];
        t.kind = Track::Kind::NodeRanges;
        t.tid = p.ranges[i].tid;
        t.depth = 1;
        t.events.push_back(i);
    }
    for (auto &[tid, t] : byThread) {
        t.name = byThread.size() == 1 ? tr("FX nodes (NVTX)") : tr("FX nodes, thread %1").arg(tid);
        m_tracks.push_back(std::move(t));
    }
    // Device activity, a track per (device, stream); a CPU profile's ATen ops on one track.
    std::map<std::pair<int, int64_t>, Track> byStream;
    for (uint32_t i = 0; i < p.kernels.size(); ++i) {
        const auto &k = p.kernels[i];
        Track &t = byStream[{k.device, k.stream}];
        t.kind = Track::Kind::Device;
        t.device = k.device;
        t.stream = k.stream;
        t.events.push_back(i);
    }
    for (auto &[key, t] : byStream) {
        t.name = p.mode == "cpu" ? tr("ATen ops (host)") : tr("cuda:%1 stream %2").arg(key.first).arg(key.second);
        m_tracks.push_back(std::move(t));
    }
    for (auto &t : m_tracks)
        sortTrack(t);
}

std::pair<double, double> KernelTimeline::span(const Track &t, uint32_t i) const
{
    const auto &p = *m_profile;
    switch (t.kind) {
    case Track::Kind::Iterations: {
        const auto &it = p.iters[i];
        return {it.startUs, std::max(it.cpuUs, it.wallUs)};
    }
    case Track::Kind::NodeRanges: return {p.ranges[i].startUs, p.ranges[i].durUs};
    case Track::Kind::Device: return {p.kernels[i].startUs, p.kernels[i].durUs};
    }
    return {0, 0};
}

int KernelTimeline::trackTop(int t) const { return kRulerHeight + t * kRowHeight; }

void KernelTimeline::fit()
{
    const double w = std::max(50, width() - kLabelWidth - 8);
    setView(0, std::max(1e-6, m_endUs / w));
}

void KernelTimeline::setView(double startUs, double usPerPixel)
{
    m_scale = std::clamp(usPerPixel, 1e-5, 1e9);
    const double w = std::max(1, width() - kLabelWidth);
    m_t0 = std::clamp(startUs, -w * m_scale * 0.5, std::max(0.0, m_endUs - w * m_scale * 0.5));
    update();
}

void KernelTimeline::zoom(double factor, double x)
{
    const double at = usAt(std::max<double>(x, kLabelWidth));
    const double scale = m_scale / factor;
    setView(at - (std::max<double>(x, kLabelWidth) - kLabelWidth) * scale, scale);
}

void KernelTimeline::pan(double pixels) { setView(m_t0 + pixels * m_scale, m_scale); }

void KernelTimeline::resizeEvent(QResizeEvent *) { setView(m_t0, m_scale); }

void KernelTimeline::selectKernel(int index)
{
    if (!m_profile || index >= int(m_profile->kernels.size()))
        index = -1;
    m_kernel = index;
    if (index >= 0) {
        m_node = m_profile->kernels[size_t(index)].node;
        if (m_node >= 0)
            Q_EMIT nodeRequested(QString::fromStdString(m_profile->nodes[size_t(m_node)].name));
    }
    update();
}

void KernelTimeline::showKernel(int index)
{
    if (!m_profile || index < 0 || size_t(index) >= m_profile->kernels.size())
        return;
    const auto &k = m_profile->kernels[size_t(index)];
    const double from = k.launchUs >= 0 ? std::min(k.launchUs, k.startUs) : k.startUs, to = k.startUs + k.durUs;
    const double w = std::max(50, width() - kLabelWidth);
    const double scale = std::max(1e-4, (to - from) * 3 / w);
    setView((from + to) / 2 - w / 2 * scale, scale);
}

void KernelTimeline::selectNode(int node)
{
    if (!m_profile || node >= int(m_profile->nodes.size()))
        node = -1;
    if (node != m_node || (m_kernel >= 0 && m_profile->kernels[size_t(m_kernel)].node != node)) {
        m_node = node;
        if (m_kernel >= 0 && (node < 0 || m_profile->kernels[size_t(m_kernel)].node != node))
            m_kernel = -1;
        update();
    }
}

size_t KernelTimeline::highlightedKernels() const
{
    if (!m_profile || m_node < 0)
        return 0;
    return size_t(
        std::count_if(m_profile->kernels.begin(), m_profile->kernels.end(), [&](const prof::KernelRec &k) { return k.node == m_node; }));
}

int KernelTimeline::rangeOf(int node, int iteration, double atUs) const
{
    if (!m_profile || node < 0)
        return -1;
    int first = -1;
    for (size_t i = 0; i < m_profile->ranges.size(); ++i) {
        const auto &r = m_profile->ranges[i];
        if (r.node != node || r.iteration != iteration)
            continue;
        if (atUs >= r.startUs && atUs <= r.startUs + r.durUs)
            return int(i);
        if (first < 0)
            first = int(i);
    }
    return first;
}

QRectF KernelTimeline::kernelRect(int index) const
{
    if (!m_profile || index < 0 || size_t(index) >= m_profile->kernels.size())
        return {};
    const auto &kr = m_profile->kernels[size_t(index)];
    for (size_t t = 0; t < m_tracks.size(); ++t) // a kernel is on its (device, stream) track
        if (m_tracks[t].kind == Track::Kind::Device && m_tracks[t].device == kr.device && m_tracks[t].stream == kr.stream) {
            const double x0 = xOf(kr.startUs), x1 = std::max(x0 + 1, xOf(kr.startUs + kr.durUs));
            return QRectF(x0, trackTop(int(t)) + 2, x1 - x0, kRowHeight - 4);
        }
    return {};
}

std::pair<int, int> KernelTimeline::eventAt(const QPoint &pos) const
{
    if (!m_profile || pos.x() < kLabelWidth || pos.y() < kRulerHeight)
        return {-1, -1};
    const int t = (pos.y() - kRulerHeight) / kRowHeight;
    if (t < 0 || size_t(t) >= m_tracks.size())
        return {-1, -1};
    const Track &track = m_tracks[size_t(t)];
    // Two pixels of slack: a sub-pixel kernel can be picked.
    const double at = usAt(pos.x()), slack = 2 * m_scale;
    auto it = std::lower_bound(track.events.begin(), track.events.end(), at - track.maxDurUs - slack,
                               [&](uint32_t i, double v) { return span(track, i).first < v; });
    int best = -1;
    double bestDist = 1e300;
    for (; it != track.events.end(); ++it) {
        const auto [s, d] = span(track, *it);
        if (s > at + slack)
            break;
        if (at >= s - slack && at <= s + d + slack) {
            const double dist = at < s ? s - at : at > s + d ? at - s - d : 0;
            if (dist < bestDist || (dist == bestDist && d < span(track, uint32_t(best)).second))
                best = int(*it), bestDist = dist;
        }
    }
    return {best < 0 ? -1 : t, best};
}

QString KernelTimeline::kernelDetails(int index) const
{
    if (!m_profile || index < 0 || size_t(index) >= m_profile->kernels.size())
        return {};
    const auto &k = m_profile->kernels[size_t(index)];
    QString text = QStringLiteral("<b>%1</b><br>").arg(QString::fromStdString(k.name).toHtmlEscaped());
    text += tr("%1 · %2 · iteration %3").arg(QString::fromStdString(k.kind)).arg(us(k.durUs)).arg(k.iteration);
    if (k.grid[0] > 0)
        text += tr("<br>grid (%1, %2, %3) · block (%4, %5, %6)")
                    .arg(k.grid[0])
                    .arg(k.grid[1])
                    .arg(k.grid[2])
                    .arg(k.block[0])
                    .arg(k.block[1])
                    .arg(k.block[2]);
    if (k.node >= 0) {
        const auto &n = m_profile->nodes[size_t(k.node)];
        text += tr("<br>FX node <b>%1</b> (%2)")
                    .arg(QString::fromStdString(n.name).toHtmlEscaped(), QString::fromStdString(n.target).toHtmlEscaped());
    } else {
        text += tr("<br>no FX node (launched outside every node range)");
    }
    text += tr("<br>start %1 · correlation %2").arg(us(k.startUs)).arg(k.correlation);
    if (k.launchUs >= 0)
        text += tr(" · launched at %1 (%2 before it ran)").arg(us(k.launchUs)).arg(us(k.startUs - k.launchUs));
    return text;
}

void KernelTimeline::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    m_lastBlocks = m_lastFolds = 0;
    if (!m_profile) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No profile to show"));
        return;
    }
    paintRuler(p);
    const QFontMetrics fm(font());
    for (size_t ti = 0; ti < m_tracks.size(); ++ti)
        paintTrack(p, ti, fm);
    paintFlowLink(p);
}

void KernelTimeline::paintRuler(QPainter &p) const
{
    // A tick every power-of-ten step that leaves ≥ 80 px between labels.
    const QColor text = palette().color(QPalette::Text), grid = palette().color(QPalette::Mid);
    const double right = width();
    double step = std::pow(10.0, std::ceil(std::log10(m_scale * 80)));
    if (step / 2 / m_scale >= 80)
        step /= 2;
    p.setPen(grid);
    const double first = std::ceil(m_t0 / step) * step;
    for (double t = first; xOf(t) < right; t += step) {
        const double x = xOf(t);
        p.drawLine(QPointF(x, kRulerHeight - 4), QPointF(x, height()));
        p.setPen(text);
        p.drawText(QPointF(x + 2, kRulerHeight - 5), us(t));
        p.setPen(QColor(grid.red(), grid.green(), grid.blue(), 60));
    }
}

void KernelTimeline::paintTrack(QPainter &p, size_t ti, const QFontMetrics &fm)
{
    const Track &t = m_tracks[ti];
    const int top = trackTop(int(ti));
    const double right = width();
    if (ti % 2)
        p.fillRect(QRectF(0, top, right, kRowHeight), palette().alternateBase());
    p.setClipRect(QRectF(kLabelWidth, top, right - kLabelWidth, kRowHeight));
    paintEvents(p, t, top, fm);
    p.setClipping(false);
    p.setPen(palette().color(QPalette::Text));
    p.fillRect(QRectF(0, top, kLabelWidth, kRowHeight), palette().window());
    p.drawText(QRectF(4 + 10 * t.depth, top, kLabelWidth - 6 - 10 * t.depth, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(t.name, Qt::ElideRight, kLabelWidth - 8 - 10 * t.depth));
}

void KernelTimeline::paintEvents(QPainter &p, const Track &t, int top, const QFontMetrics &fm)
{
    const auto &prof = *m_profile;
    const double right = width();
    auto it =
        std::lower_bound(t.events.begin(), t.events.end(), m_t0 - t.maxDurUs, [&](uint32_t i, double v) { return span(t, i).first < v; });
    // Sub-pixel events are folded: one block per pixel column, with how many it holds.
    double foldX = -1e9, foldEnd = -1e9;
    size_t foldCount = 0;
    auto flushFold = [&] {
        if (foldCount == 0)
            return;
        p.fillRect(QRectF(foldX, top + 3, std::max(1.0, foldEnd - foldX), kRowHeight - 6), QColor(120, 120, 130));
        ++m_lastBlocks;
        m_lastFolds += foldCount > 1;
        foldCount = 0;
    };
    for (; it != t.events.end(); ++it) {
        const auto [s, d] = span(t, *it);
        const double x0 = xOf(s);
        if (x0 > right)
            break;
        const double x1 = xOf(s + d);
        if (x1 < kLabelWidth)
            continue;
        const bool highlighted = (t.kind == Track::Kind::Device && m_node >= 0 && prof.kernels[*it].node == m_node) ||
            (t.kind == Track::Kind::NodeRanges && m_node >= 0 && prof.ranges[*it].node == m_node);
        if (x1 - x0 < 1.0 && !highlighted) {
            if (foldCount && x0 < foldX + 1.0) {
                foldEnd = std::max(foldEnd, x1);
                ++foldCount;
                continue;
            }
            flushFold();
            foldX = std::floor(x0), foldEnd = x1, foldCount = 1;
            continue;
        }
        flushFold();
        const auto [fill, label] = eventLook(t, *it);
        const QRectF r(x0, top + 2, std::max(1.0, x1 - x0), kRowHeight - 4);
        p.fillRect(r, fill);
        ++m_lastBlocks;
        if (highlighted || (t.kind == Track::Kind::Device && int(*it) == m_kernel)) {
            p.setPen(QPen(int(*it) == m_kernel && t.kind == Track::Kind::Device ? QColor(220, 30, 30) : QColor(230, 120, 0), 2));
            p.drawRect(r.adjusted(1, 1, -1, -1));
        }
        if (r.width() > 30) {
            p.setPen(Qt::black);
            p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(label, Qt::ElideRight, int(r.width() - 5)));
        }
    }
    flushFold();
}

std::pair<QColor, QString> KernelTimeline::eventLook(const Track &t, uint32_t i) const
{
    const auto &prof = *m_profile;
    switch (t.kind) {
    case Track::Kind::Iterations: return {QColor(150, 170, 200), tr("iteration %1").arg(prof.iters[i].index)};
    case Track::Kind::NodeRanges: {
        const auto &n = prof.nodes[size_t(prof.ranges[i].node)];
        return {nameColour(n.target), QString::fromStdString(n.name)};
    }
    case Track::Kind::Device: return {nameColour(prof.kernels[i].name), QString::fromStdString(prof.kernels[i].name)};
    }
    return {};
}

void KernelTimeline::paintFlowLink(QPainter &p) const
{
    // From the selected kernel's node range (at its launch) to the kernel.
    if (m_kernel < 0)
        return;
    const auto &prof = *m_profile;
    const auto &k = prof.kernels[size_t(m_kernel)];
    const int r = rangeOf(k.node, k.iteration, k.launchUs);
    const QRectF kr = kernelRect(m_kernel);
    int rangeTrack = -1;
    for (size_t t = 0; t < m_tracks.size() && r >= 0; ++t)
        if (m_tracks[t].kind == Track::Kind::NodeRanges && m_tracks[t].tid == prof.ranges[size_t(r)].tid)
            rangeTrack = int(t);
    if (r < 0 || rangeTrack < 0 || kr.isEmpty())
        return;
    const double from = k.launchUs >= 0 ? k.launchUs : prof.ranges[size_t(r)].startUs;
    const QPointF a(xOf(from), trackTop(rangeTrack) + kRowHeight - 2), b(kr.left(), kr.top());
    QPainterPath path(a);
    path.cubicTo(QPointF(a.x(), (a.y() + b.y()) / 2), QPointF(b.x(), (a.y() + b.y()) / 2), b);
    p.setClipRect(QRectF(kLabelWidth, 0, width() - kLabelWidth, height()));
    p.setPen(QPen(QColor(220, 30, 30), 1.5));
    p.drawPath(path);
    p.setBrush(QColor(220, 30, 30));
    p.drawEllipse(b, 2.5, 2.5);
}

void KernelTimeline::wheelEvent(QWheelEvent *e)
{
    const double steps = e->angleDelta().y() / 120.0;
    if (e->modifiers() & Qt::ShiftModifier)
        pan(-steps * 60);
    else
        zoom(std::pow(1.25, steps), e->position().x());
    e->accept();
}

void KernelTimeline::mousePressEvent(QMouseEvent *e)
{
    setFocus();
    const auto [t, i] = eventAt(e->pos());
    if (e->button() == Qt::LeftButton && t >= 0 && i >= 0) {
        const Track &track = m_tracks[size_t(t)];
        if (track.kind == Track::Kind::Device) {
            selectKernel(i);
            return;
        }
        if (track.kind == Track::Kind::NodeRanges) {
            const int node = m_profile->ranges[size_t(i)].node;
            m_kernel = -1;
            selectNode(node);
            Q_EMIT nodeRequested(QString::fromStdString(m_profile->nodes[size_t(node)].name));
            return;
        }
    }
    m_dragging = true;
    m_dragFrom = e->pos();
    m_dragT0 = m_t0;
}

void KernelTimeline::mouseMoveEvent(QMouseEvent *e)
{
    if (m_dragging)
        setView(m_dragT0 - (e->pos().x() - m_dragFrom.x()) * m_scale, m_scale);
}

void KernelTimeline::mouseReleaseEvent(QMouseEvent *) { m_dragging = false; }

void KernelTimeline::keyPressEvent(QKeyEvent *e)
{
    const double mid = kLabelWidth + (width() - kLabelWidth) / 2.0;
    switch (e->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoom(1.5, mid); break;
    case Qt::Key_S:
    case Qt::Key_Minus: zoom(1 / 1.5, mid); break;
    case Qt::Key_A:
    case Qt::Key_Left: pan(-(width() - kLabelWidth) / 8.0); break;
    case Qt::Key_D:
    case Qt::Key_Right: pan((width() - kLabelWidth) / 8.0); break;
    case Qt::Key_Home:
    case Qt::Key_0: fit(); break;
    default: QWidget::keyPressEvent(e); return;
    }
    e->accept();
}

QString KernelTimeline::toolTipAt(const QPoint &pos) const
{
    if (!m_profile)
        return {};
    const auto [t, i] = eventAt(pos);
    if (t < 0)
        return {};
    const Track &track = m_tracks[size_t(t)];
    if (track.kind == Track::Kind::Device)
        return kernelDetails(i);
    if (track.kind == Track::Kind::NodeRanges) {
        const auto &r = m_profile->ranges[size_t(i)];
        const auto &n = m_profile->nodes[size_t(r.node)];
        const size_t kernels = size_t(std::count_if(m_profile->kernels.begin(), m_profile->kernels.end(), [&](const prof::KernelRec &k) {
            return k.node == r.node && k.iteration == r.iteration;
        }));
        return tr("<b>%1</b> (%2)<br>host range %3 · iteration %4 · %5 kernel(s)")
            .arg(QString::fromStdString(n.name).toHtmlEscaped(), QString::fromStdString(n.target).toHtmlEscaped())
            .arg(us(r.durUs))
            .arg(r.iteration)
            .arg(kernels);
    }
    const auto &it = m_profile->iters[size_t(i)];
    return tr("<b>iteration %1</b><br>wall %2 · host %3 · GPU busy %4 · %5 kernel(s)")
        .arg(it.index)
        .arg(us(it.wallUs), us(it.cpuUs), us(it.gpuBusyUs))
        .arg(it.kernels);
}

bool KernelTimeline::event(QEvent *e)
{
    return showToolTip(this, e, [this](const QPoint &p) { return toolTipAt(p); }) || QWidget::event(e);
}

} // namespace fxlens::views
