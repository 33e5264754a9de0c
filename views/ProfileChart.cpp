// SPDX-License-Identifier: MIT
// The per-version chart (see ProfileChart.h).
#include "ProfileChart.h"

#include "ToolTip.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace fxlens::views {

namespace {

QString valueText(double v, ProfileChart::Metric m)
{
    switch (m) {
    case ProfileChart::Kernels:
        return std::fabs(v - std::round(v)) < 1e-9 ? QString::number(qlonglong(std::llround(v))) : QString::number(v, 'f', 1);
    case ProfileChart::Busy:
    case ProfileChart::Wall:
        return v >= 1e6 ? QStringLiteral("%1 s").arg(v / 1e6, 0, 'f', 2)
            : v >= 1e3  ? QStringLiteral("%1 ms").arg(v / 1e3, 0, 'f', 2)
                        : QStringLiteral("%1 µs").arg(v, 0, 'f', 1);
    case ProfileChart::PeakMemory: return v < 0 ? QStringLiteral("n/a") : QStringLiteral("%1 MiB").arg(v / double(1 << 20), 0, 'f', 1);
    case ProfileChart::MetricCount: break;
    }
    return {};
}

} // namespace

ProfileChart::ProfileChart(QWidget *parent) : QWidget(parent)
{
    setMinimumHeight(160);
    setMouseTracking(true);
}

std::vector<ProfileChart::Bar> ProfileChart::versionBars(const std::vector<std::shared_ptr<const prof::Profile>> &profiles)
{
    auto label = [](const prof::Profile &p) {
        const QString v = QString::fromStdString(p.version.empty() ? p.graph : p.version);
        return p.compiled() ? QString::fromStdString(p.backend) + QStringLiteral(": ") + v : v; // the backend survives elision
    };
    auto sameVersion = [](const prof::Profile &x, const prof::Profile &y) {
        return !x.graphHash.empty() || !y.graphHash.empty() ? x.graphHash == y.graphHash : x.version == y.version && x.graph == y.graph;
    };
    std::vector<Bar> bars;
    std::vector<bool> placed(profiles.size(), false);
    for (size_t i = 0; i < profiles.size(); ++i) {
        if (placed[i])
            continue;
        const auto &p = *profiles[i];
        bool eagerFirst = false; // a compiled profile waits for an eager one of its version, if any
        if (p.compiled())
            for (size_t j = i + 1; j < profiles.size() && !eagerFirst; ++j)
                eagerFirst = !profiles[j]->compiled() && sameVersion(*profiles[j], p);
        if (eagerFirst)
            continue;
        bars.push_back({label(p), profiles[i], int(i)});
        placed[i] = true;
        if (p.compiled())
            continue;
        for (size_t j = 0; j < profiles.size(); ++j)
            if (!placed[j] && profiles[j]->compiled() && sameVersion(*profiles[j], p)) {
                bars.push_back({label(*profiles[j]), profiles[j], int(j)});
                placed[j] = true;
            }
    }
    return bars;
}

void ProfileChart::setBars(std::vector<Bar> bars, int a, int b)
{
    m_bars = std::move(bars);
    m_a = a;
    m_b = b;
    update();
}

void ProfileChart::setSearch(std::vector<Trial> trials, double original, double greedy, double tuned)
{
    m_trials = std::move(trials);
    m_original = original;
    m_greedy = greedy;
    m_tuned = tuned;
    update();
}

QRectF ProfileChart::searchArea() const
{
    if (m_trials.empty())
        return {};
    const double h = m_bars.empty() ? double(height()) : std::max(120.0, height() * 0.4); // the profiles below it
    return QRectF(0, 0, width(), h).adjusted(6, 4, -6, -4);
}

QRectF ProfileChart::profileArea() const
{
    const QRectF s = searchArea();
    return s.isEmpty() ? QRectF(rect()) : QRectF(0, s.bottom() + 4, width(), std::max(0.0, height() - s.bottom() - 4));
}

QRectF ProfileChart::searchPlot() const
{
    // The title above, the time axis on the left.
    return searchArea().adjusted(fontMetrics().horizontalAdvance(QStringLiteral("000.00 ms")) + 8, 20, -4, -4);
}

double ProfileChart::searchTop() const
{
    double top = std::max(m_original, m_greedy);
    for (const auto &t : m_trials)
        top = std::max(top, t.seconds);
    return top > 0 ? top * 1.1 : 1;
}

QRectF ProfileChart::trialRect(int i) const
{
    const int n = int(m_trials.size());
    if (n == 0 || i < 0 || i >= n)
        return {};
    const QRectF plot = searchPlot();
    const Trial &t = m_trials[size_t(i)];
    const double h = t.failed ? plot.height() * 0.05 : plot.height() * std::max(0.0, t.seconds) / searchTop();
    const double slot = plot.width() / n;
    return QRectF(plot.left() + slot * i + std::min(1.0, slot * 0.1), plot.bottom() - h, std::max(1.0, slot - std::min(2.0, slot * 0.2)),
                  h);
}

QColor ProfileChart::trialColor(int i) const
{
    const Trial &t = m_trials[size_t(i)];
    return t.failed             ? QColor(0xd9, 0x53, 0x4f)
        : t.kind == u"original" ? QColor(0x9e, 0x9e, 0x9e)
        : t.kind == u"greedy"   ? QColor(0x4a, 0x7f, 0xc1)
        : t.taken               ? QColor(0x3c, 0x9d, 0x5d)
                                : QColor(0xc9, 0xd6, 0xe3);
}

void ProfileChart::paintSearch(QPainter &p)
{
    const QRectF area = searchArea();
    const QFontMetrics fm(font());
    const QRectF plot = searchPlot();
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRectF(area.left(), area.top(), area.width(), 16), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(tr("Tune: %1 measurements (green: taken, blue: greedy, grey: original)").arg(m_trials.size()), Qt::ElideRight,
                             int(area.width())));
    for (int i = 0; i < int(m_trials.size()); ++i)
        p.fillRect(trialRect(i), trialColor(i));
    const double top = searchTop();
    const auto y = [&](double s) { return plot.bottom() - plot.height() * s / top; };
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()));
    const std::tuple<double, QColor, QString> lines[] = {{m_original, QColor(0x9e, 0x9e, 0x9e), tr("original")},
                                                         {m_greedy, QColor(0x4a, 0x7f, 0xc1), tr("greedy")},
                                                         {m_tuned, QColor(0x3c, 0x9d, 0x5d), tr("tuned")}};
    double lastLabel = -1e9;
    for (const auto &[s, c, label] : lines) {
        if (s <= 0)
            continue;
        p.setPen(QPen(c, 1, Qt::DashLine));
        p.drawLine(QPointF(plot.left(), y(s)), QPointF(plot.right(), y(s)));
        const double ly = std::abs(y(s) - lastLabel) < fm.height() ? lastLabel + fm.height() : y(s); // close lines: labels apart
        lastLabel = ly;
        p.drawText(QRectF(area.left(), ly - fm.height() / 2.0, plot.left() - area.left() - 4, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, valueText(s * 1e6, Wall));
        const QString l = label;
        p.drawText(QRectF(plot.right() - fm.horizontalAdvance(l) - 4, ly - fm.height(), fm.horizontalAdvance(l) + 2, fm.height()),
                   Qt::AlignRight, l);
    }
}

int ProfileChart::trialAt(const QPointF &pos) const
{
    if (!searchArea().contains(pos))
        return -1;
    for (int i = 0; i < int(m_trials.size()); ++i) {
        QRectF r = trialRect(i);
        r.setTop(searchArea().top()); // the whole column picks the measurement
        if (r.contains(pos))
            return i;
    }
    return -1;
}

double ProfileChart::value(int bar, Metric m) const
{
    const auto &s = m_bars[size_t(bar)].profile->summary;
    switch (m) {
    case Kernels: return s.kernelsPerIter;
    case Busy: return s.gpuBusyUs;
    case Wall: return s.wallUs;
    case PeakMemory: return double(s.peakMemBytes);
    case MetricCount: break;
    }
    return 0;
}

int ProfileChart::referenceBar() const
{
    for (int b = 0; b < int(m_bars.size()); ++b)
        if (!compiled(b) && m_bars[size_t(b)].profile->version == "original")
            return b;
    return m_bars.empty() ? -1 : 0;
}

QString ProfileChart::slowerText(int bar, Metric m) const
{
    const int ref = referenceBar();
    if (m == Kernels || ref < 0 || bar == ref || compiled(bar) != compiled(ref))
        return {};
    const double base = value(ref, m), v = value(bar, m);
    if (base <= 0 || v <= base * (1 + kSlowerShare))
        return {};
    const double share = 100.0 * (v - base) / base;
    return m == PeakMemory ? tr("%1 % more peak memory than the original").arg(share, 0, 'f', 1)
                           : tr("%1 % slower than the original").arg(share, 0, 'f', 1);
}

QString ProfileChart::worseText(Metric m) const
{
    int worse = 0;
    for (int b = 0; b < int(m_bars.size()); ++b)
        worse += !slowerText(b, m).isEmpty();
    if (worse == 0)
        return {};
    return m == PeakMemory ? tr("▲ %n higher than the original", nullptr, worse) : tr("▲ %n slower than the original", nullptr, worse);
}

QString ProfileChart::metricName(Metric m, bool cpu, bool compiled)
{
    switch (m) {
    case Kernels:
        return cpu && compiled ? tr("ATen ops or kernels per iteration") : cpu ? tr("ATen ops per iteration") : tr("kernels per iteration");
    case Busy:
        return cpu && compiled ? tr("op or kernel time per iteration") : cpu ? tr("op time per iteration") : tr("GPU busy per iteration");
    case Wall: return tr("wall per iteration");
    case PeakMemory: return tr("peak memory");
    case MetricCount: break;
    }
    return {};
}

QRectF ProfileChart::panel(Metric m) const
{
    // Two columns of two panels when wide, else four rows.
    const QRectF area = profileArea();
    const bool wide = width() >= 520 || !m_trials.empty();
    const int cols = wide ? 2 : 1, rows = wide ? 2 : 4;
    const double w = area.width() / cols, h = area.height() / rows;
    const int i = int(m);
    return QRectF(area.left() + (i % cols) * w, area.top() + (i / cols) * h, w, h).adjusted(6, 4, -6, -4);
}

QRectF ProfileChart::barRect(int bar, Metric m) const
{
    const QRectF pr = panel(m);
    const QRectF plot = pr.adjusted(4, 32, -4, -14); // the title, then room for the tallest bar's value
    const int n = int(m_bars.size());
    if (n == 0 || bar < 0 || bar >= n)
        return {};
    double top = 0;
    for (int i = 0; i < n; ++i)
        top = std::max(top, value(i, m));
    const double slot = plot.width() / n, v = std::max(0.0, value(bar, m));
    const double h = top > 0 ? plot.height() * v / top : 0;
    return QRectF(plot.left() + slot * bar + slot * 0.15, plot.bottom() - h, slot * 0.7, h);
}

void ProfileChart::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!m_trials.empty())
        paintSearch(p);
    if (m_bars.empty() && !m_trials.empty())
        return;
    if (m_bars.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(10, 0, -10, 0), Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No profiles yet. Profile ▸ Profile Versions… profiles several versions of the history; each one is a bar here."));
        return;
    }
    const bool cpu = std::all_of(m_bars.begin(), m_bars.end(), [](const Bar &b) { return b.profile->mode == "cpu"; });
    const bool compiledToo = std::any_of(m_bars.begin(), m_bars.end(), [](const Bar &b) { return b.profile->compiled(); });
    const QFontMetrics fm(font());
    if (compiledToo) { // which bars are compiled: a key in the corner
        const QString key = tr("compiled");
        const QRectF at(width() - fm.horizontalAdvance(key) - 26, 2, fm.horizontalAdvance(key) + 20, 16);
        p.fillRect(QRectF(at.left(), at.top() + 4, 10, 8), QColor(165, 130, 215));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(at.adjusted(14, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, key);
    }
    for (int mi = 0; mi < MetricCount; ++mi) {
        const auto m = Metric(mi);
        const QRectF pr = panel(m);
        p.setPen(palette().color(QPalette::Text));
        const QString title = metricName(m, cpu, compiledToo);
        p.drawText(QRectF(pr.left(), pr.top(), pr.width(), 16), Qt::AlignLeft | Qt::AlignVCenter, title);
        if (const QString worse = worseText(m); !worse.isEmpty()) { // once per panel; each such bar is outlined, its value marked
            const int x = fm.horizontalAdvance(title) + 8;
            p.setPen(kSlowerColor);
            p.drawText(QRectF(pr.left() + x, pr.top(), std::max(0.0, pr.width() - x), 16), Qt::AlignLeft | Qt::AlignVCenter,
                       fm.elidedText(worse, Qt::ElideRight, int(pr.width()) - x));
        }
        p.setPen(palette().color(QPalette::Mid));
        p.drawLine(QPointF(pr.left() + 4, pr.bottom() - 14), QPointF(pr.right() - 4, pr.bottom() - 14));
        for (int b = 0; b < int(m_bars.size()); ++b) {
            const QRectF r = barRect(b, m);
            const int shows = profileOf(b);
            const QColor fill = shows == m_a ? QColor(46, 110, 200)
                : shows == m_b               ? QColor(230, 120, 0)
                : compiled(b)                ? QColor(165, 130, 215)
                                             : QColor(140, 160, 190);
            p.fillRect(r, fill);
            const bool slow = !slowerText(b, m).isEmpty();
            if (slow) {
                p.setPen(QPen(kSlowerColor, 2));
                p.drawRect(r.adjusted(1, 1, -1, -1));
            }
            const QString v = (slow ? QStringLiteral("▲ ") : QString()) + valueText(value(b, m), m);
            if (fm.horizontalAdvance(v) <= r.width() + 16) {
                p.setPen(slow ? kSlowerColor : palette().color(QPalette::Text));
                p.drawText(QRectF(r.left() - 8, r.top() - 14, r.width() + 16, 13), Qt::AlignCenter, v);
            }
            const QString l = fm.elidedText(m_bars[size_t(b)].label, Qt::ElideRight, int(std::max(8.0, r.width() + 8)));
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QRectF(r.left() - 4, pr.bottom() - 13, r.width() + 8, 13), Qt::AlignCenter, l);
        }
    }
}

int ProfileChart::barAt(const QPointF &pos, Metric *metric) const
{
    for (int mi = 0; mi < MetricCount; ++mi) {
        if (!panel(Metric(mi)).contains(pos))
            continue;
        for (int b = 0; b < int(m_bars.size()); ++b) {
            QRectF r = barRect(b, Metric(mi));
            r.setTop(panel(Metric(mi)).top() + 16); // the whole column picks the version
            r.setBottom(panel(Metric(mi)).bottom());
            if (r.contains(pos)) {
                if (metric)
                    *metric = Metric(mi);
                return b;
            }
        }
    }
    return -1;
}

void ProfileChart::mousePressEvent(QMouseEvent *e)
{
    const int b = barAt(e->position(), nullptr);
    if (b < 0)
        return;
    if (e->modifiers() & Qt::ShiftModifier)
        Q_EMIT compareRequested(profileOf(b));
    else
        Q_EMIT showRequested(profileOf(b));
}

bool ProfileChart::event(QEvent *e)
{
    return showToolTip(
               this, e,
               [this](const QPoint &pos) {
                   if (const int t = trialAt(pos); t >= 0) {
                       const Trial &trial = m_trials[size_t(t)];
                       return QStringLiteral("<b>%1</b><br>%2%3")
                           .arg(trial.label.toHtmlEscaped(),
                                trial.failed ? tr("could not be measured") : valueText(trial.seconds * 1e6, Wall),
                                trial.taken ? tr(" — taken") : QString());
                   }
                   const int b = barAt(pos, nullptr);
                   if (b < 0)
                       return QString();
                   const bool cpu = m_bars[size_t(b)].profile->mode == "cpu" && !compiled(b);
                   QString text = QStringLiteral("<b>%1</b>").arg(m_bars[size_t(b)].label.toHtmlEscaped());
                   for (int mi = 0; mi < MetricCount; ++mi) {
                       text += QStringLiteral("<br>%1: %2").arg(metricName(Metric(mi), cpu), valueText(value(b, Metric(mi)), Metric(mi)));
                       if (const QString slow = slowerText(b, Metric(mi)); !slow.isEmpty())
                           text += QStringLiteral(" — <b>%1</b>").arg(slow);
                   }
                   return text + tr("<br><i>click: show it (A) · Shift+click: compare with it (B)</i>");
               }) ||
        QWidget::event(e);
}

} // namespace fxlens::views
