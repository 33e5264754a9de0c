// SPDX-License-Identifier: MIT
// Rewrite ▸ Tune's dialog and progress row (see TuneWidgets.h).
#include "TuneWidgets.h"
#include "Count.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace fxlens::views {

TuneDialog::TuneDialog(const TuneSettings &initial, QWidget *parent) : QDialog(parent)
{
    setWindowTitle(tr("Tune"));
    auto *layout = new QVBoxLayout(this);
    auto *about = new QLabel(tr("Chooses the preset's patterns, the order of their families and which matches to apply by "
                                "measured time of the whole graph: it starts from the greedy result and leaves out what costs "
                                "time beyond the noise. The tuned version becomes the history; the steps it leaves out are "
                                "listed as skips with their measured cost."),
                             this);
    about->setWordWrap(true);
    layout->addWidget(about);
    auto *form = new QFormLayout;
    m_budget = new QDoubleSpinBox(this);
    m_budget->setObjectName(QStringLiteral("tuneBudget"));
    m_budget->setRange(1, 3600);
    m_budget->setDecimals(0);
    m_budget->setSuffix(tr(" s"));
    m_budget->setValue(initial.budgetSeconds);
    m_budget->setToolTip(tr("No new measurement starts after this; the best version so far is kept"));
    form->addRow(tr("Budget"), m_budget);
    m_iterations = new QSpinBox(this);
    m_iterations->setObjectName(QStringLiteral("tuneIterations"));
    m_iterations->setRange(1, 1000);
    m_iterations->setValue(initial.iterations);
    m_iterations->setToolTip(tr("Timed runs per version; their median is the version's time"));
    form->addRow(tr("Runs per version"), m_iterations);
    m_freeze = new QCheckBox(tr("Freeze weights (fold weight-only nodes before timing)"), this);
    m_freeze->setObjectName(QStringLiteral("tuneFreeze"));
    m_freeze->setChecked(initial.freezeWeights);
    form->addRow(QString(), m_freeze);
    layout->addLayout(form);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Tune"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

TuneSettings TuneDialog::settings() const
{
    TuneSettings s;
    s.budgetSeconds = m_budget->value();
    s.iterations = m_iterations->value();
    s.freezeWeights = m_freeze->isChecked();
    return s;
}

TuneProgressRow::TuneProgressRow(TuneJob &job, QWidget *parent) : QWidget(parent), m_job(job)
{
    setObjectName(QStringLiteral("tuneRow"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_label = new QLabel(this);
    m_label->setObjectName(QStringLiteral("tuneStatus"));
    m_label->setWordWrap(true);
    layout->addWidget(m_label);
    auto *row = new QHBoxLayout;
    m_bar = new QProgressBar(this);
    m_bar->setObjectName(QStringLiteral("tuneProgress"));
    m_bar->setTextVisible(true);
    row->addWidget(m_bar, 1);
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName(QStringLiteral("tuneStop"));
    m_stop->setToolTip(tr("Stop after the measurement in progress and keep the best version so far"));
    row->addWidget(m_stop);
    layout->addLayout(row);
    m_timer = new QTimer(this);
    m_timer->setInterval(500); // the time spent moves between measurements too
    connect(m_timer, &QTimer::timeout, this, &TuneProgressRow::tick);
    connect(m_stop, &QPushButton::clicked, this, [this] {
        m_job.requestStop();
        m_stop->setEnabled(false);
        m_stop->setText(tr("Stopping…"));
    });
    connect(&job, &TuneJob::started, this, [this](const TuneSettings &s) {
        m_last = {};
        m_last.budgetSeconds = s.budgetSeconds;
        m_clock.start();
        m_stop->setEnabled(true);
        m_stop->setText(tr("Stop"));
        show(m_last);
        setVisible(true);
        m_timer->start();
    });
    connect(&job, &TuneJob::progress, this, &TuneProgressRow::show);
    connect(&job, &TuneJob::finished, this, [this] {
        m_timer->stop();
        setVisible(false);
    });
    setVisible(false);
}

void TuneProgressRow::show(const TuneProgress &p)
{
    m_last = p;
    tick();
}

void TuneProgressRow::tick()
{
    const double elapsed = m_clock.isValid() ? double(m_clock.elapsed()) / 1000.0 : m_last.elapsedSeconds;
    const double budget = std::max(1.0, m_last.budgetSeconds);
    m_bar->setRange(0, int(budget * 10));
    m_bar->setValue(int(std::min(elapsed, budget) * 10));
    m_bar->setFormat(tr("%1 s of at most %2 s").arg(elapsed, 0, 'f', 0).arg(budget, 0, 'f', 0));
    m_label->setText(text());
}

QString TuneProgressRow::text() const
{
    const TuneProgress &p = m_last;
    if (p.measurements == 0)
        return tr("Tune: preparing the graph and measuring the original…");
    QString t = tr("Tune: %1").arg(counted(qint64(p.measurements), "measurement"));
    if (p.bestSeconds > 0)
        t += tr(" · fastest %1").arg(TuneJob::msText(p.bestSeconds));
    QStringList against;
    if (p.greedySeconds > 0)
        against << tr("greedy %1").arg(TuneJob::msText(p.greedySeconds));
    if (p.originalSeconds > 0)
        against << tr("original %1").arg(TuneJob::msText(p.originalSeconds));
    if (!against.isEmpty())
        t += QStringLiteral(" (%1)").arg(against.join(QStringLiteral(", ")));
    if (!p.last.isEmpty())
        t += QStringLiteral("\n") + tr("last: %1").arg(p.last);
    return t;
}

} // namespace fxlens::views
