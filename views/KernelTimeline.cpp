// SPDX-License-Identifier: MIT
// The kernel timeline: profiles, view, range, selection, picking and input (see KernelTimeline.h;
// the painting is in TimelinePaint.cpp).
#include "KernelTimeline.h"

#include "ToolTip.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fxlens::views {

KernelTimeline::KernelTimeline(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setToolTip(tr("Wheel or W/S: zoom · A/D or middle/Shift drag: pan · Home: fit · drag: measure a range (Esc drops it) · "
                  "click a kernel to select its node"));
}

KernelTimeline::~KernelTimeline() = default;

void KernelTimeline::setProfile(std::shared_ptr<const prof::Profile> p) { setSide(0, std::move(p)); }

void KernelTimeline::setComparison(std::shared_ptr<const prof::Profile> b) { setSide(1, std::move(b)); }

void KernelTimeline::setSide(int group, std::shared_ptr<const prof::Profile> p)
{
    if (p == m_sides[size_t(group)].p)
        return;
    m_sides[size_t(group)].p = std::move(p);
    if (group == 0)
        m_kernel = m_node = -1;
    m_nodeB = -1;
    const bool hadRange = hasRange();
    m_rangeFrom = m_rangeTo = 0;
    rebuild();
    fitRows();
    fit();
    updateGeometry();
    if (hadRange)
        Q_EMIT rangeChanged();
}

void KernelTimeline::rebuild()
{
    m_tracks.clear();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    const bool ab = m_sides[0].p && m_sides[1].p;
    for (int g = 0; g < 2; ++g) {
        Side &side = m_sides[size_t(g)];
        side.deviceBusy.clear();
        side.launchBound.clear();
        if (!side.p)
            continue;
        const prof::Profile &p = *side.p;
        // Each profile's axis starts at its first iteration, so that A and B line up.
        side.offsetUs = 0;
        if (!p.iters.empty())
            side.offsetUs = std::min_element(p.iters.begin(), p.iters.end(), [](const auto &a, const auto &b) {
                                return a.startUs < b.startUs;
                            })->startUs;
        auto tracks = buildTracks(p, g, side.offsetUs);
        if (ab) {
            Track header;
            header.kind = Track::Kind::Header;
            header.group = g;
            header.name = headerForms(p, g).front();
            m_tracks.push_back(std::move(header));
        }
        Intervals device;
        for (auto &t : tracks) {
            if (t.kind == Track::Kind::Device)
                device.insert(device.end(), t.busy.begin(), t.busy.end());
            if (t.kind == Track::Kind::Launches)
                side.launchBound = t.busy;
            if (t.kind != Track::Kind::Launches)
                for (uint32_t i : t.events) {
                    const auto [s, d] = span(t, i);
                    lo = std::min(lo, s);
                    hi = std::max(hi, s + d);
                }
            m_tracks.push_back(std::move(t));
        }
        side.deviceBusy = mergeIntervals(std::move(device));
    }
    m_beginUs = lo < hi ? lo : 0;
    m_endUs = lo < hi ? hi : 1;
}

std::pair<double, double> KernelTimeline::span(const Track &t, uint32_t i) const
{
    const auto [s, d] = eventSpan(profileOf(t), t.kind, i);
    return {s - t.offsetUs, d};
}

int KernelTimeline::trackTop(int t) const { return kRulerHeight + t * m_row; }

QRect KernelTimeline::trackRect(int t) const { return QRect(kLabelWidth, trackTop(t), width() - kLabelWidth, m_row); }

QSize KernelTimeline::sizeHint() const { return QSize(640, kRulerHeight + int(std::max<size_t>(m_tracks.size(), 4)) * kRowHeight + 6); }

QSize KernelTimeline::minimumSizeHint() const
{
    return QSize(kLabelWidth + 100, kRulerHeight + int(std::max<size_t>(m_tracks.size(), 4)) * kMinRowHeight + 4);
}

void KernelTimeline::fitRows()
{
    const int rows = std::max(1, int(m_tracks.size()));
    m_row = std::clamp((height() - kRulerHeight - 2) / rows, int(kMinRowHeight), int(kRowHeight));
}

void KernelTimeline::fit()
{
    const double w = std::max(50, width() - kLabelWidth - 8);
    const double len = std::max(1e-3, m_endUs - m_beginUs);
    applyView(m_beginUs - len * 0.005, len * 1.01 / w);
    m_fitted = true;
}

void KernelTimeline::setView(double startUs, double usPerPixel)
{
    m_fitted = false;
    applyView(startUs, usPerPixel);
}

void KernelTimeline::applyView(double startUs, double usPerPixel)
{
    m_scale = std::clamp(usPerPixel, 1e-5, 1e9);
    const double half = std::max(1, width() - kLabelWidth) * m_scale * 0.5;
    m_t0 = std::clamp(startUs, m_beginUs - half, std::max(m_beginUs - half, m_endUs - half));
    update();
}

double KernelTimeline::viewEnd() const { return usAt(width()); }

void KernelTimeline::zoom(double factor, double x)
{
    const double at = usAt(std::max<double>(x, kLabelWidth));
    const double scale = m_scale / factor;
    setView(at - (std::max<double>(x, kLabelWidth) - kLabelWidth) * scale, scale);
}

void KernelTimeline::pan(double pixels) { setView(m_t0 + pixels * m_scale, m_scale); }

void KernelTimeline::resizeEvent(QResizeEvent *)
{
    fitRows();
    if (m_fitted)
        fit();
    else
        applyView(m_t0, m_scale);
}

void KernelTimeline::setRange(double fromUs, double toUs)
{
    m_rangeFrom = std::min(fromUs, toUs);
    m_rangeTo = std::max(fromUs, toUs);
    update();
    Q_EMIT rangeChanged();
}

void KernelTimeline::clearRange()
{
    if (!hasRange())
        return;
    m_rangeFrom = m_rangeTo = 0;
    update();
    Q_EMIT rangeChanged();
}

double KernelTimeline::busyIn(int group, double fromUs, double toUs) const
{
    return coveredIn(m_sides[size_t(group)].deviceBusy, fromUs, toUs);
}

std::vector<uint32_t> KernelTimeline::kernelsIn(int group, double fromUs, double toUs) const
{
    std::vector<uint32_t> out;
    const auto &side = m_sides[size_t(group)];
    if (!side.p)
        return out;
    for (uint32_t i = 0; i < side.p->kernels.size(); ++i) {
        const auto &k = side.p->kernels[i];
        const double s = k.startUs - side.offsetUs;
        if (s < toUs && s + k.durUs > fromUs)
            out.push_back(i);
    }
    std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) { return side.p->kernels[a].startUs < side.p->kernels[b].startUs; });
    return out;
}

QString KernelTimeline::rangeText() const
{
    if (!hasRange())
        return {};
    const double len = m_rangeTo - m_rangeFrom;
    QString text = tr("%1 to %2: %3").arg(formatUs(m_rangeFrom), formatUs(m_rangeTo), formatUs(len));
    for (int g = 0; g < 2; ++g) {
        const auto &side = m_sides[size_t(g)];
        if (!side.p)
            continue;
        const double busy = busyIn(g, m_rangeFrom, m_rangeTo);
        const QString who = comparison() ? (g == 0 ? tr("A: ") : tr("B: ")) : QString();
        text += tr("\n%1%2 busy %3 (%4 %) · %5 %6")
                    .arg(who,
                         side.p->mode != "cpu"    ? tr("GPU")
                             : side.p->compiled() ? tr("kernels")
                                                  : tr("ops"),
                         formatUs(busy))
                    .arg(100.0 * busy / len, 0, 'f', 1)
                    .arg(kernelsIn(g, m_rangeFrom, m_rangeTo).size())
                    .arg(side.p->mode == "cpu" && !side.p->compiled() ? tr("ops") : tr("kernels"));
        if (!side.launchBound.empty())
            text += tr(" · idle waiting for launches %1").arg(formatUs(coveredIn(side.launchBound, m_rangeFrom, m_rangeTo)));
    }
    return text;
}

void KernelTimeline::selectKernel(int index)
{
    if (!profile() || index >= int(profile()->kernels.size()))
        index = -1;
    m_kernel = index;
    Q_EMIT kernelSelected(index);
    if (index >= 0) {
        m_node = profile()->kernels[size_t(index)].node;
        if (m_node >= 0)
            Q_EMIT nodeRequested(QString::fromStdString(profile()->nodes[size_t(m_node)].name));
    }
    update();
}

void KernelTimeline::showKernel(int index)
{
    if (!profile() || index < 0 || size_t(index) >= profile()->kernels.size())
        return;
    const auto &k = profile()->kernels[size_t(index)];
    const double from = displayTime(0, k.launchUs >= 0 ? std::min(k.launchUs, k.startUs) : k.startUs);
    const double to = displayTime(0, k.startUs + k.durUs);
    const double w = std::max(50, width() - kLabelWidth);
    const double scale = std::max(1e-4, (to - from) * 3 / w);
    setView((from + to) / 2 - w / 2 * scale, scale);
}

void KernelTimeline::selectNode(int node)
{
    const prof::Profile *a = profile(), *b = comparison();
    if (!a || node >= int(a->nodes.size()))
        node = -1;
    int nodeB = -1;
    for (size_t i = 0; b && node >= 0 && i < b->nodes.size() && nodeB < 0; ++i)
        if (b->nodes[i].name == a->nodes[size_t(node)].name)
            nodeB = int(i);
    if (node != m_node || nodeB != m_nodeB || (m_kernel >= 0 && !prof::covers(a->kernels[size_t(m_kernel)], node))) {
        m_node = node;
        m_nodeB = nodeB;
        if (m_kernel >= 0 && !prof::covers(a->kernels[size_t(m_kernel)], node)) {
            m_kernel = -1;
            Q_EMIT kernelSelected(-1);
        }
        update();
    }
}

size_t KernelTimeline::highlightedKernels() const
{
    if (!profile() || m_node < 0)
        return 0;
    return size_t(std::count_if(profile()->kernels.begin(), profile()->kernels.end(),
                                [&](const prof::KernelRec &k) { return prof::covers(k, m_node); }));
}

bool KernelTimeline::highlighted(const Track &t, uint32_t i) const
{
    const int node = t.group == 0 ? m_node : m_nodeB;
    if (node < 0)
        return false;
    const auto &p = profileOf(t);
    switch (t.kind) {
    case Track::Kind::Device:
    case Track::Kind::Launches: return prof::covers(p.kernels[i], node);
    case Track::Kind::NodeRanges: return p.ranges[i].node == node;
    default: return false;
    }
}

int KernelTimeline::rangeOf(int node, int iteration, double atUs) const
{
    if (!profile() || node < 0)
        return -1;
    int first = -1;
    for (size_t i = 0; i < profile()->ranges.size(); ++i) {
        const auto &r = profile()->ranges[i];
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
    if (!profile() || index < 0 || size_t(index) >= profile()->kernels.size())
        return {};
    const auto &kr = profile()->kernels[size_t(index)];
    for (size_t t = 0; t < m_tracks.size(); ++t) // a kernel is on its (device, stream) track
        if (m_tracks[t].group == 0 && m_tracks[t].kind == Track::Kind::Device && m_tracks[t].device == kr.device &&
            m_tracks[t].stream == kr.stream) {
            const double x0 = xOf(displayTime(0, kr.startUs)), x1 = std::max(x0 + 1, xOf(displayTime(0, kr.startUs + kr.durUs)));
            return QRectF(x0, trackTop(int(t)) + 2, x1 - x0, m_row - 4);
        }
    return {};
}

std::pair<int, int> KernelTimeline::eventAt(const QPoint &pos) const
{
    if (!profile() || pos.x() < kLabelWidth || pos.y() < kRulerHeight)
        return {-1, -1};
    const int t = (pos.y() - kRulerHeight) / m_row;
    if (t < 0 || size_t(t) >= m_tracks.size() || m_tracks[size_t(t)].kind == Track::Kind::Header)
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

QString KernelTimeline::kernelDetails(int index, int group) const
{
    const prof::Profile *p = m_sides[size_t(group)].p.get();
    if (!p || index < 0 || size_t(index) >= p->kernels.size())
        return {};
    const auto &k = p->kernels[size_t(index)];
    QString text = QStringLiteral("<b>%1</b><br>").arg(QString::fromStdString(k.name).toHtmlEscaped());
    text += tr("%1 · %2 · iteration %3").arg(QString::fromStdString(k.kind)).arg(formatUs(k.durUs)).arg(k.iteration);
    if (k.grid[0] > 0)
        text += tr("<br>grid (%1, %2, %3) · block (%4, %5, %6)")
                    .arg(k.grid[0])
                    .arg(k.grid[1])
                    .arg(k.grid[2])
                    .arg(k.block[0])
                    .arg(k.block[1])
                    .arg(k.block[2]);
    if (p->compiled()) {
        if (k.nodes.empty())
            text += tr("<br>no FX node: %1").arg(QString::fromStdString(k.reason).toHtmlEscaped());
        else
            text += tr("<br>FX nodes <b>%1</b> (%2's provenance)")
                        .arg(QString::fromStdString(prof::kernelNodeNames(*p, k)).toHtmlEscaped(), QString::fromStdString(p->backend));
        if (!k.postGrad.empty()) {
            QStringList post;
            for (const auto &n : k.postGrad)
                post << QString::fromStdString(n);
            text += tr("<br>post-grad nodes: %1").arg(post.join(QStringLiteral(", ")).toHtmlEscaped());
        }
    } else if (k.node >= 0) {
        const auto &n = p->nodes[size_t(k.node)];
        text += tr("<br>FX node <b>%1</b> (%2)")
                    .arg(QString::fromStdString(n.name).toHtmlEscaped(), QString::fromStdString(n.target).toHtmlEscaped());
    } else {
        text += tr("<br>no FX node (launched outside every node range)");
    }
    text += tr("<br>start %1 · correlation %2").arg(formatUs(displayTime(group, k.startUs))).arg(k.correlation);
    if (k.launchUs >= 0)
        text +=
            tr(" · launched at %1 (%2 before it ran)").arg(formatUs(displayTime(group, k.launchUs))).arg(formatUs(k.startUs - k.launchUs));
    return text;
}

QString KernelTimeline::launchToolTip(const Track &t, int index, double atUs) const
{
    QString text;
    if (index >= 0) {
        const auto &k = profileOf(t).kernels[size_t(index)];
        text = tr("<b>launch</b> of %1<br>at %2 · the kernel started %3 later")
                   .arg(QString::fromStdString(k.name).left(80).toHtmlEscaped(), formatUs(displayTime(t.group, k.launchUs)),
                        formatUs(k.startUs - k.launchUs));
    }
    auto gap = std::lower_bound(t.busy.begin(), t.busy.end(), atUs, [](const auto &iv, double v) { return iv.second <= v; });
    if (gap != t.busy.end() && gap->first <= atUs) {
        if (!text.isEmpty())
            text += QStringLiteral("<br>");
        text +=
            tr("GPU idle %1 here, waiting for the host to launch the next kernel (launch-bound)").arg(formatUs(gap->second - gap->first));
    }
    return text;
}

QStringList KernelTimeline::headerForms(const prof::Profile &p, int group)
{
    const QString side = group == 0 ? QStringLiteral("A") : QStringLiteral("B");
    const QString version = QString::fromStdString(p.version.empty() ? p.graph : p.version);
    const QString step = version.section(QStringLiteral(" ("), 0, 0); // "step 1214 (dedupe_views @ permute)": "step 1214"
    const QString kernels = tr("%1 kernels/iter").arg(p.summary.kernelsPerIter, 0, 'g', 6);
    const QString busy = tr("busy %1").arg(formatUs(p.summary.gpuBusyUs)), wall = tr(" of %1 wall").arg(formatUs(p.summary.wallUs));
    const QString form = QStringLiteral("%1 · %2 — %3 · %4");
    return {form.arg(side, version, kernels, busy + wall), form.arg(side, step, kernels, busy + wall), form.arg(side, step, kernels, busy)};
}

QString KernelTimeline::headerText(int t) const
{
    // The fullest form in which every header fits (A and B read alike): the version's rule and the
    // wall time go first; the tooltip has them.
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fm(bold);
    const int room = width() - 8;
    const auto forms = [&](int g) { return m_sides[size_t(g)].p ? headerForms(*m_sides[size_t(g)].p, g) : QStringList(); };
    const QStringList mine = forms(m_tracks[size_t(t)].group), a = forms(0), b = forms(1);
    for (qsizetype f = 0; f < mine.size(); ++f)
        if ((a.isEmpty() || fm.horizontalAdvance(a[f]) <= room) && (b.isEmpty() || fm.horizontalAdvance(b[f]) <= room))
            return mine[f];
    return fm.elidedText(mine.isEmpty() ? m_tracks[size_t(t)].name : mine.back(), Qt::ElideRight, room);
}

QString KernelTimeline::toolTipAt(const QPoint &pos) const
{
    if (!profile())
        return {};
    const int row = (pos.y() - kRulerHeight) / m_row;
    const auto [t, i] = eventAt(pos);
    if (pos.x() >= kLabelWidth && pos.y() >= kRulerHeight && row >= 0 && size_t(row) < m_tracks.size() &&
        m_tracks[size_t(row)].kind == Track::Kind::Launches)
        return launchToolTip(m_tracks[size_t(row)], i, usAt(pos.x()));
    if (row >= 0 && pos.y() >= kRulerHeight && size_t(row) < m_tracks.size() && m_tracks[size_t(row)].kind == Track::Kind::Header)
        return m_tracks[size_t(row)].name.toHtmlEscaped(); // whole: the version's rule and the wall time too
    if (t < 0)
        return {};
    const Track &track = m_tracks[size_t(t)];
    const auto &p = profileOf(track);
    if (track.kind == Track::Kind::Device)
        return kernelDetails(i, track.group);
    if (track.kind == Track::Kind::NodeRanges) {
        const auto &r = p.ranges[size_t(i)];
        const auto &n = p.nodes[size_t(r.node)];
        const size_t kernels = size_t(std::count_if(
            p.kernels.begin(), p.kernels.end(), [&](const prof::KernelRec &k) { return k.node == r.node && k.iteration == r.iteration; }));
        return tr("<b>%1</b> (%2)<br>host range %3 · iteration %4 · %5 kernel(s)")
            .arg(QString::fromStdString(n.name).toHtmlEscaped(), QString::fromStdString(n.target).toHtmlEscaped())
            .arg(formatUs(r.durUs))
            .arg(r.iteration)
            .arg(kernels);
    }
    const auto &it = p.iters[size_t(i)];
    return tr("<b>iteration %1</b><br>wall %2 · host %3 · GPU busy %4 · %5 kernel(s)")
        .arg(it.index)
        .arg(formatUs(it.wallUs), formatUs(it.cpuUs), formatUs(it.gpuBusyUs))
        .arg(it.kernels);
}

bool KernelTimeline::event(QEvent *e)
{
    return showToolTip(this, e, [this](const QPoint &p) { return toolTipAt(p); }) || QWidget::event(e);
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
    m_dragFrom = e->pos();
    m_dragT0 = m_t0;
    if (e->button() == Qt::MiddleButton || (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier)))
        m_drag = Drag::Pan;
    else if (e->button() == Qt::LeftButton)
        m_drag = Drag::Pending; // a click, or a range when it moves
}

void KernelTimeline::mouseMoveEvent(QMouseEvent *e)
{
    if (m_drag == Drag::Pan) {
        setView(m_dragT0 - (e->pos().x() - m_dragFrom.x()) * m_scale, m_scale);
        return;
    }
    if (m_drag == Drag::Pending && std::abs(e->pos().x() - m_dragFrom.x()) >= 4)
        m_drag = Drag::Measure;
    if (m_drag == Drag::Measure) {
        // Clamped to the data: a drag from left of its start (or past its end) measures from (to) there.
        auto at = [this](int x) { return std::clamp(usAt(std::clamp(x, kLabelWidth, width())), m_beginUs, m_endUs); };
        const double a = at(m_dragFrom.x()), b = at(e->pos().x());
        m_rangeFrom = std::min(a, b);
        m_rangeTo = std::max(a, b);
        update();
    }
}

void KernelTimeline::mouseReleaseEvent(QMouseEvent *e)
{
    const Drag drag = m_drag;
    if (drag == Drag::Measure)
        mouseMoveEvent(e); // the release position ends the range
    m_drag = Drag::None;
    if (drag == Drag::Measure) {
        Q_EMIT rangeChanged();
    } else if (drag == Drag::Pending) {
        clickAt(e->pos());
    }
}

void KernelTimeline::clickAt(const QPoint &pos)
{
    const auto [t, i] = eventAt(pos);
    if (t < 0 || i < 0) {
        clearRange();
        return;
    }
    const Track &track = m_tracks[size_t(t)];
    const auto &p = profileOf(track);
    const bool kernel = track.kind == Track::Kind::Device || track.kind == Track::Kind::Launches;
    if (kernel && track.group == 0) {
        selectKernel(i);
    } else if (kernel && p.kernels[size_t(i)].node >= 0) {
        Q_EMIT nodeRequested(QString::fromStdString(p.nodes[size_t(p.kernels[size_t(i)].node)].name));
    } else if (track.kind == Track::Kind::NodeRanges) {
        const int node = p.ranges[size_t(i)].node;
        if (track.group == 0) {
            m_kernel = -1;
            selectNode(node);
        }
        Q_EMIT nodeRequested(QString::fromStdString(p.nodes[size_t(node)].name));
    }
}

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
    case Qt::Key_Escape:
        if (!hasRange()) {
            QWidget::keyPressEvent(e);
            return;
        }
        clearRange();
        break;
    default: QWidget::keyPressEvent(e); return;
    }
    e->accept();
}

} // namespace fxlens::views
