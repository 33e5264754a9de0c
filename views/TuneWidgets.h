// SPDX-License-Identifier: MIT
// The widgets of Rewrite ▸ Tune: the dialog that asks for the search's budget and how versions are
// measured, and the progress row the rewrite debugger shows while a search runs (measurements done,
// the fastest version so far against the greedy one and the original, the time spent of the budget
// as the estimate, and Stop).
#pragma once

#include "TuneJob.h"

#include <QDialog>
#include <QElapsedTimer>
#include <QWidget>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace fxlens::views {

class TuneDialog : public QDialog {
    Q_OBJECT
public:
    TuneDialog(const TuneSettings &initial, QWidget *parent = nullptr);
    TuneSettings settings() const;

private:
    QDoubleSpinBox *m_budget = nullptr;
    QSpinBox *m_iterations = nullptr;
    QCheckBox *m_freeze = nullptr;
};

class TuneProgressRow : public QWidget {
    Q_OBJECT
public:
    explicit TuneProgressRow(TuneJob &job, QWidget *parent = nullptr);
    /// The line shown ("Tune: 12 measurements · fastest 1.234 ms …").
    QString text() const;
    QPushButton *stopButton() const { return m_stop; }

private:
    void show(const TuneProgress &p);
    void tick();

    TuneJob &m_job;
    TuneProgress m_last;
    QElapsedTimer m_clock;
    QTimer *m_timer = nullptr;
    QLabel *m_label = nullptr;
    QProgressBar *m_bar = nullptr;
    QPushButton *m_stop = nullptr;
};

} // namespace fxlens::views
