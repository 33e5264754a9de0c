// SPDX-License-Identifier: MIT
// The kernel timeline's painting (see KernelTimeline.h): ink proportional to time. A track's
// busy time shades each pixel column from the bottom by the share of the column it covers (the top
// pixel blended by the fraction left), so a 10 % busy stream reads as 10 % ink at any zoom; events
// at least kBlockPx wide are then drawn one by one in their colour, named when they have room.
#include "KernelTimeline.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace fxlens::views {

namespace {

/// A stable colour per kernel name (the same kernel reads the same everywhere).
QColor nameColour(const std::string &name)
{
    const size_t h = std::hash<std::string>{}(name);
    return QColor::fromHsv(int(h % 360), 90 + int((h >> 9) % 60), 200 + int((h >> 17) % 40));
}

/// A ruler label: `t` in the unit of the times in view (`magnitude`: the largest), with as many
/// decimals as the step needs ("0", "100 ms", "81.505 ms", "12.5 µs").
QString tickLabel(double t, double step, double magnitude)
{
    if (std::fabs(t) < step * 1e-6)
        return QStringLiteral("0");
    const double unit = magnitude >= 1e6 ? 1e6 : magnitude >= 1e3 ? 1e3 : 1;
    const QString name = unit == 1e6 ? QStringLiteral("s") : unit == 1e3 ? QStringLiteral("ms") : QStringLiteral("µs");
    const int decimals = std::max(0, int(std::ceil(-std::log10(step / unit) - 1e-9)));
    return QStringLiteral("%1 %2").arg(t / unit, 0, 'f', decimals).arg(name);
}

/// The shade of a track's busy time.
QColor busyColour(TimelineTrack::Kind kind)
{
    switch (kind) {
    case TimelineTrack::Kind::NodeRanges: return QColor(140, 118, 180);
    case TimelineTrack::Kind::Launches: return QColor(232, 150, 40); // the GPU waiting for the host
    default: return QColor(84, 104, 140);
    }
}

} // namespace

void KernelTimeline::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    m_lastBlocks = m_lastFolds = 0;
    if (!profile()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No profile to show"));
        return;
    }
    paintRuler(p);
    const QFontMetrics fm(font());
    for (size_t ti = 0; ti < m_tracks.size(); ++ti)
        paintTrack(p, ti, fm);
    paintFlowLink(p);
    paintRange(p, fm);
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
    const QRectF banner = rangeBanner(p.fontMetrics()).first;
    for (double t = first; xOf(t) < right; t += step) {
        const double x = xOf(t);
        if (x < kLabelWidth)
            continue;
        p.setPen(grid);
        p.drawLine(QPointF(x, kRulerHeight - 4), QPointF(x, kRulerHeight));
        p.setPen(QColor(grid.red(), grid.green(), grid.blue(), 50));
        p.drawLine(QPointF(x, kRulerHeight), QPointF(x, height()));
        const QString label = tickLabel(t, step, std::max(std::fabs(m_t0), std::fabs(viewEnd())));
        p.setPen(text);
        const QRectF at(x + 2, 0, p.fontMetrics().horizontalAdvance(label), kRulerHeight);
        if (at.right() <= right && !at.intersects(banner)) // a label cut at the edge (or the banner) would misread
            p.drawText(QPointF(x + 2, kRulerHeight - 5), label);
    }
}

void KernelTimeline::paintTrack(QPainter &p, size_t ti, const QFontMetrics &fm)
{
    const Track &t = m_tracks[ti];
    const int top = trackTop(int(ti));
    const double right = width();
    p.setPen(palette().color(QPalette::Text));
    if (t.kind == Track::Kind::Header) {
        // The profile's name and figures across the row, a rule above B's.
        p.fillRect(QRectF(0, top, right, m_row), palette().window());
        if (t.group == 1)
            p.drawLine(QPointF(0, top), QPointF(right, top));
        QFont bold = p.font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(4, top, right - 8, m_row), Qt::AlignVCenter | Qt::AlignLeft, headerText(int(ti)));
        p.setFont(font());
        return;
    }
    p.setClipRect(QRectF(kLabelWidth, top, right - kLabelWidth, m_row));
    if (t.kind != Track::Kind::Iterations)
        paintCoverage(p, t, top);
    if (t.kind == Track::Kind::Launches)
        paintLaunches(p, t, top);
    else
        paintEvents(p, t, top, fm);
    p.setClipping(false);
    p.setPen(QColor(128, 128, 128, 50));
    p.drawLine(QPointF(kLabelWidth, top + m_row - 0.5), QPointF(right, top + m_row - 0.5));
    p.setPen(palette().color(QPalette::Text));
    p.fillRect(QRectF(0, top, kLabelWidth, m_row), palette().window());
    const int indent = 4 + 10 * t.depth;
    p.drawText(QRectF(indent, top, kLabelWidth - indent - 2, m_row), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(t.name, Qt::ElideRight, kLabelWidth - indent - 4));
}

void KernelTimeline::paintCoverage(QPainter &p, const Track &t, int top)
{
    const int columns = width() - kLabelWidth;
    const std::vector<float> cover = columnCoverage(t.busy, m_t0, m_scale, columns);
    const QColor colour = busyColour(t.kind);
    const int h = m_row - 4, bottom = top + m_row - 2;
    int runFrom = -1; // a run of fully busy columns, drawn as one block
    auto flush = [&](int c) {
        if (runFrom < 0)
            return;
        p.fillRect(QRect(kLabelWidth + runFrom, bottom - h, c - runFrom, h), colour);
        ++m_lastBlocks;
        runFrom = -1;
    };
    for (int c = 0; c < columns; ++c) {
        const float f = cover[size_t(c)];
        if (f >= 0.999f) {
            if (runFrom < 0)
                runFrom = c;
            continue;
        }
        flush(c);
        if (f <= 0)
            continue;
        const double bar = f * h;
        const int full = int(bar);
        if (full > 0)
            p.fillRect(QRect(kLabelWidth + c, bottom - full, 1, full), colour);
        QColor edge = colour;
        edge.setAlphaF(float(bar - full));
        p.fillRect(QRect(kLabelWidth + c, bottom - full - 1, 1, 1), edge);
        ++m_lastFolds;
    }
    flush(columns);
}

void KernelTimeline::paintEvents(QPainter &p, const Track &t, int top, const QFontMetrics &fm)
{
    const double right = width();
    auto it =
        std::lower_bound(t.events.begin(), t.events.end(), m_t0 - t.maxDurUs, [&](uint32_t i, double v) { return span(t, i).first < v; });
    for (; it != t.events.end(); ++it) {
        const auto [s, d] = span(t, *it);
        const double x0 = xOf(s);
        if (x0 > right)
            break;
        const double x1 = xOf(s + d);
        if (x1 < kLabelWidth)
            continue;
        const bool selected = t.group == 0 && t.kind == Track::Kind::Device && int(*it) == m_kernel;
        const bool marked = selected || highlighted(t, *it);
        // Narrow events are in the shading; the iterations are always drawn.
        const bool named = t.kind == Track::Kind::Iterations || x1 - x0 >= kBlockPx;
        if (!named && !marked)
            continue;
        const QRectF r(x0, top + 2, std::max(1.0, x1 - x0), m_row - 4);
        const QColor mark = selected ? QColor(220, 30, 30) : QColor(230, 120, 0);
        if (!named) { // a selected sub-pixel event: a 2 px mark in the selection colour
            p.fillRect(QRectF(x0 - 0.5, top + 2, 2, m_row - 4), mark);
            continue;
        }
        const auto [fill, label] = eventLook(t, *it);
        p.fillRect(r, fill);
        ++m_lastBlocks;
        if (marked) {
            p.setPen(QPen(mark, 2));
            p.drawRect(r.adjusted(1, 1, -1, -1));
        }
        if (r.width() > 30) {
            // An iteration too narrow for "iteration 3" is "3", never "iterat…".
            const double shown = std::min(r.right(), double(width())) - r.left(); // what the widget's edge leaves of it
            const bool number = t.kind == Track::Kind::Iterations && fm.horizontalAdvance(label) > shown - 5;
            p.setPen(Qt::black);
            p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                       fm.elidedText(number ? label.section(QLatin1Char(' '), -1) : label, Qt::ElideRight, int(r.width() - 5)));
        }
    }
}

void KernelTimeline::paintLaunches(QPainter &p, const Track &t, int top)
{
    // A tick per pixel column holding launch calls, where those columns are far enough apart to be
    // told apart (the shading under them says how long the device waited for them).
    const double right = width();
    auto it = std::lower_bound(t.events.begin(), t.events.end(), usAt(kLabelWidth - kBlockPx),
                               [&](uint32_t i, double v) { return span(t, i).first < v; });
    std::vector<double> columns;
    for (; it != t.events.end(); ++it) {
        const double x = std::floor(xOf(span(t, *it).first));
        if (x > right + kBlockPx)
            break;
        if (highlighted(t, *it) || (t.group == 0 && int(*it) == m_kernel))
            p.fillRect(QRectF(x, top + 3, 2, m_row - 6), QColor(230, 120, 0));
        if (columns.empty() || columns.back() != x)
            columns.push_back(x);
    }
    for (size_t i = 0; i < columns.size(); ++i)
        if ((i == 0 || columns[i] - columns[i - 1] >= kBlockPx) && (i + 1 == columns.size() || columns[i + 1] - columns[i] >= kBlockPx))
            p.fillRect(QRectF(columns[i], top + 3, 1, m_row - 6), QColor(110, 60, 0));
}

std::pair<QColor, QString> KernelTimeline::eventLook(const Track &t, uint32_t i) const
{
    const auto &prof = profileOf(t);
    switch (t.kind) {
    case Track::Kind::Iterations: return {QColor(150, 170, 200), tr("iteration %1").arg(prof.iters[i].index)};
    case Track::Kind::NodeRanges: {
        const auto &n = prof.nodes[size_t(prof.ranges[i].node)];
        return {nameColour(n.target), QString::fromStdString(n.name)};
    }
    case Track::Kind::Device: {
        const auto &k = prof.kernels[i];
        // A compiled kernel is labelled with the FX nodes it covers ("cpp_fused_gelu_view_1 · gelu, linear_2").
        const std::string nodes = prof.compiled() ? prof::kernelNodeNames(prof, k) : std::string();
        return {nameColour(k.name), QString::fromStdString(nodes.empty() ? k.name : k.name + " · " + nodes)};
    }
    default: return {};
    }
}

void KernelTimeline::paintFlowLink(QPainter &p) const
{
    // From the selected kernel's node range (at its launch) to the kernel.
    if (m_kernel < 0)
        return;
    const auto &prof = *profile();
    const auto &k = prof.kernels[size_t(m_kernel)];
    const int r = rangeOf(k.node, k.iteration, k.launchUs);
    const QRectF kr = kernelRect(m_kernel);
    int rangeTrack = -1;
    for (size_t t = 0; t < m_tracks.size() && r >= 0; ++t)
        if (m_tracks[t].group == 0 && m_tracks[t].kind == Track::Kind::NodeRanges && m_tracks[t].tid == prof.ranges[size_t(r)].tid)
            rangeTrack = int(t);
    if (r < 0 || rangeTrack < 0 || kr.isEmpty())
        return;
    const double from = displayTime(0, k.launchUs >= 0 ? k.launchUs : prof.ranges[size_t(r)].startUs);
    const QPointF a(xOf(from), trackTop(rangeTrack) + m_row - 2), b(kr.left(), kr.top());
    QPainterPath path(a);
    path.cubicTo(QPointF(a.x(), (a.y() + b.y()) / 2), QPointF(b.x(), (a.y() + b.y()) / 2), b);
    p.setClipRect(QRectF(kLabelWidth, 0, width() - kLabelWidth, height()));
    p.setPen(QPen(QColor(220, 30, 30), 1.5));
    p.drawPath(path);
    p.setBrush(QColor(220, 30, 30));
    p.drawEllipse(b, 2.5, 2.5);
    p.setClipping(false);
}

void KernelTimeline::paintRange(QPainter &p, const QFontMetrics &fm) const
{
    // The measured range: a band over the tracks, its duration and A's busy share on the ruler.
    if (!hasRange())
        return;
    const double x0 = xOf(m_rangeFrom), x1 = xOf(m_rangeTo);
    const QColor hl = palette().color(QPalette::Highlight);
    p.setClipRect(QRectF(kLabelWidth, 0, width() - kLabelWidth, height()));
    QColor band = hl;
    band.setAlpha(40);
    p.fillRect(QRectF(x0, kRulerHeight, x1 - x0, height() - kRulerHeight), band);
    p.setPen(QPen(hl, 1));
    p.drawLine(QPointF(x0, 0), QPointF(x0, height()));
    p.drawLine(QPointF(x1, 0), QPointF(x1, height()));
    if (const auto [box, text] = rangeBanner(fm); !box.isEmpty()) {
        p.fillRect(box, hl);
        p.setPen(palette().color(QPalette::HighlightedText));
        p.drawText(box, Qt::AlignCenter, text);
    }
    p.setClipping(false);
}

std::pair<QRectF, QString> KernelTimeline::rangeBanner(const QFontMetrics &fm) const
{
    // On the ruler over the range's own span (in view), so the ticks beside it keep their labels:
    // its duration and A's busy share where they fit, else the duration, else none (the pane's
    // caption says it all).
    if (!hasRange())
        return {};
    const double x0 = std::max(xOf(m_rangeFrom), double(kLabelWidth)), x1 = std::min(xOf(m_rangeTo), double(width()));
    const double len = m_rangeTo - m_rangeFrom, busy = busyIn(0, m_rangeFrom, m_rangeTo);
    for (const QString &text : {tr("%1 · busy %2 %").arg(formatUs(len)).arg(100.0 * busy / len, 0, 'f', 1), formatUs(len)})
        if (fm.horizontalAdvance(text) + 8 <= x1 - x0)
            return {QRectF(x0, 0, x1 - x0, kRulerHeight), text};
    return {};
}

} // namespace fxlens::views
