// SPDX-License-Identifier: MIT
// ProfileChart: what each version bought — one bar per profiled version for kernels (or ATen ops)
// per iteration, device busy time, wall time and peak memory, side by side in the document's
// order of versions. The figures are the profiles' summaries, the numbers `fxlens-cli profile`
// prints for the same file. Clicking a bar shows that version's profile (A); Shift+click compares
// with it (B).
#pragma once

#include "profile/Profile.h"

#include <QWidget>

#include <memory>
#include <vector>

namespace fxlens::views {

class ProfileChart : public QWidget {
    Q_OBJECT
public:
    enum Metric { Kernels, Busy, Wall, PeakMemory, MetricCount };

    explicit ProfileChart(QWidget *parent = nullptr);

    struct Bar {
        QString label;
        std::shared_ptr<const prof::Profile> profile;
    };
    void setBars(std::vector<Bar> bars, int a, int b);
    int barCount() const { return int(m_bars.size()); }
    /// The value a bar shows (kernels per iteration, µs, bytes), as the profile's summary has it.
    double value(int bar, Metric m) const;
    QString label(int bar) const { return m_bars[size_t(bar)].label; }
    static QString metricName(Metric m, bool cpu);
    /// The bar of metric `m` for version `bar` (widget coordinates).
    QRectF barRect(int bar, Metric m) const;
    QSize sizeHint() const override { return {400, 320}; }

Q_SIGNALS:
    void showRequested(int bar);
    void compareRequested(int bar);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *e) override;
    bool event(QEvent *e) override;

private:
    QRectF panel(Metric m) const;
    int barAt(const QPointF &p, Metric *metric) const;

    std::vector<Bar> m_bars;
    int m_a = -1, m_b = -1;
};

} // namespace fxlens::views
