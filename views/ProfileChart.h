// SPDX-License-Identifier: MIT
// ProfileChart: what each version bought — one bar per profiled version for kernels (or ATen ops)
// per iteration, device busy time, wall time and peak memory, side by side in the document's
// order of versions; a version compiled by Inductor has its bar (violet) beside its eager one. The
// figures are the profiles' summaries, the numbers `fxlens-cli profile` prints for the same file;
// a version slower than the original, or with a higher peak memory, is marked (red outline, ▲). Clicking a bar shows that
// version's profile (A); Shift+click compares with it (B). After Rewrite ▸ Tune, the search is
// drawn above them: one bar per measurement in search order (as the tune report's chart), those
// the search took highlighted, the original, greedy and tuned times as lines.
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
        int index = -1; ///< the document's profile it shows (-1: the bar's position)
    };
    /// One bar per profile, in the document's order, except that a compiled profile's bar stands
    /// right after the eager one of the same version (same fingerprint, else same label), so that
    /// compiled time shows beside eager; compiled bars are labelled with their backend first
    /// ("inductor: original").
    static std::vector<Bar> versionBars(const std::vector<std::shared_ptr<const prof::Profile>> &profiles);
    /// `a`, `b`: the profiles (Bar::index) shown as A and B.
    void setBars(std::vector<Bar> bars, int a, int b);
    /// One measurement of a tune search (rewrite::TuneTrial).
    struct Trial {
        QString label; ///< "3 group: without 4 split_cat step(s) …"
        QString kind;  ///< "original", "greedy", "order", "pattern", "group", "combined"
        double seconds = 0;
        bool taken = false, failed = false;
    };
    /// The last tune's measurements and its three versions' times (empty: no search to show).
    void setSearch(std::vector<Trial> trials, double original, double greedy, double tuned);
    int trialCount() const { return int(m_trials.size()); }
    /// The bar of measurement `i` (widget coordinates).
    QRectF trialRect(int i) const;
    /// The fill of measurement `i`'s bar: taken ones green, the greedy blue, the original grey.
    QColor trialColor(int i) const;
    int barCount() const { return int(m_bars.size()); }
    /// The value a bar shows (kernels per iteration, µs, bytes), as the profile's summary has it.
    double value(int bar, Metric m) const;
    QString label(int bar) const { return m_bars[size_t(bar)].label; }
    /// `cpu`: every bar is a CPU profile; `compiled`: some bar is a compiled one.
    static QString metricName(Metric m, bool cpu, bool compiled = false);
    /// The bar the others are measured against: the first eager one of the original version, else
    /// the first.
    int referenceBar() const;
    /// "3.3 % slower than the original" when bar `bar`'s busy or wall time is more than 1 % above
    /// the original's, "4.1 % more peak memory than the original" for its peak memory (compiled
    /// bars against a compiled original only); "" otherwise. Such a bar is outlined red with its
    /// value marked ▲, and its panel's title says how many there are (worseText).
    QString slowerText(int bar, Metric m) const;
    /// What panel `m`'s title adds: "▲ 1 slower than the original" (times), "▲ 1 higher than the
    /// original" (peak memory); "" when no bar is worse than the original.
    QString worseText(Metric m) const;
    /// The bar of metric `m` for version `bar` (widget coordinates).
    QRectF barRect(int bar, Metric m) const;
    QSize sizeHint() const override { return {400, 320}; }

    /// The document's profile bar `bar` shows.
    int profileOf(int bar) const { return m_bars[size_t(bar)].index >= 0 ? m_bars[size_t(bar)].index : bar; }
    bool compiled(int bar) const { return m_bars[size_t(bar)].profile->compiled(); }

Q_SIGNALS:
    /// A bar was clicked: its profile (profileOf) to show as A, or with Shift, to compare with (B).
    void showRequested(int profile);
    void compareRequested(int profile);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *e) override;
    bool event(QEvent *e) override;

private:
    /// Where the search is drawn (empty without one) and where the profiles' panels are.
    QRectF searchArea() const;
    QRectF profileArea() const;
    QRectF searchPlot() const;
    double searchTop() const; ///< seconds at the top of the search's plot
    QRectF panel(Metric m) const;
    int barAt(const QPointF &p, Metric *metric) const;
    int trialAt(const QPointF &p) const;
    void paintSearch(QPainter &p);

    static constexpr double kSlowerShare = 0.01; ///< slower than the original: by more than this share
    static inline const QColor kSlowerColor{200, 40, 40};
    std::vector<Trial> m_trials;
    double m_original = 0, m_greedy = 0, m_tuned = 0;
    std::vector<Bar> m_bars;
    int m_a = -1, m_b = -1;
};

} // namespace fxlens::views
