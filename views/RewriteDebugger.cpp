// SPDX-License-Identifier: MIT
// The rewrite debugger panel (see RewriteDebugger.h).
#include "RewriteDebugger.h"

#include "ir/Printer.h"
#include "rewrite/Session.h"
#include "rewrite/StepDiff.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCursor>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

#include <set>

namespace fxlens::views {

namespace {

/// The diff of one step, written right after it was applied (so nodes print as the step left them).
QString stepDiff(const rewrite::Step &step) { return QString::fromStdString(rewrite::diffStep(step.edits).toString()); }

/// Records the diff of every step as the session applies it (a run applies many); the diffs of
/// steps a new step replaced go with the branch the session keeps them in.
class DiffRecorder : public rewrite::RewriteListener {
public:
    DiffRecorder(rewrite::Session &s, std::vector<QString> &diffs, std::vector<std::vector<QString>> &branchDiffs)
        : m_session(s), m_diffs(diffs), m_branchDiffs(branchDiffs)
    {
    }
    void notifyPatternEnd(const std::string &, bool applied) override
    {
        if (!applied)
            return;
        const auto &h = m_session.history();
        const auto &branches = m_session.branches();
        if (branches.size() > m_branchDiffs.size()) { // this step left a line: its diffs go with it
            const size_t fork = branches.back().fork;
            m_branchDiffs.emplace_back(m_diffs.begin() + long(std::min(fork, m_diffs.size())), m_diffs.end());
        }
        m_diffs.resize(h.size());
        m_diffs.back() = stepDiff(h.back());
    }

private:
    rewrite::Session &m_session;
    std::vector<QString> &m_diffs;
    std::vector<std::vector<QString>> &m_branchDiffs;
};

QString esc(const std::string &s) { return QString::fromStdString(s).toHtmlEscaped(); }

} // namespace

RewriteDebugger::RewriteDebugger(const rewrite::PatternRegistry &registry, Services services, QWidget *parent)
    : QWidget(parent), m_registry(registry), m_services(std::move(services))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);

    auto *top = new QHBoxLayout;
    m_preset = new QComboBox(this);
    m_preset->setObjectName(QStringLiteral("preset"));
    fillPresets();
    m_preset->setToolTip(tr("Patterns the engine tries: all, or one family (with the normalizations)"));
    top->addWidget(new QLabel(tr("Preset"), this));
    top->addWidget(m_preset, 1);
    m_verifyBox = new QCheckBox(tr("Verify each step"), this);
    m_verifyBox->setObjectName(QStringLiteral("verify"));
    m_verifyBox->setEnabled(verifyAvailable());
    m_verifyBox->setToolTip(verifyAvailable() ? tr("Run every new version with LibTorch and compare its outputs with the original's; "
                                                   "a step that changes them is rolled back")
                                              : tr("This build has no LibTorch executor"));
    top->addWidget(m_verifyBox);
    layout->addLayout(top);

    auto *buttons = new QHBoxLayout;
    auto button = [&](const QString &text, const QString &tip) {
        auto *b = new QPushButton(text, this);
        b->setToolTip(tip);
        buttons->addWidget(b);
        return b;
    };
    m_apply = button(tr("Apply"), tr("Apply the selected candidate (the first when none is selected)"));
    m_skip = button(tr("Skip"), tr("Never propose the selected candidate again"));
    m_undo = button(tr("Undo"), tr("Back one version"));
    m_redo = button(tr("Redo"), tr("Forward one version"));
    m_run = button(tr("Run"), tr("Apply greedily to the next breakpoint or the fixpoint"));
    layout->addLayout(buttons);

    auto *bp = new QHBoxLayout;
    m_breakKind = new QComboBox(this);
    m_breakKind->addItems({QStringLiteral("pattern"), QStringLiteral("node"), QStringLiteral("module")});
    m_breakValue = new QLineEdit(this);
    m_breakValue->setPlaceholderText(tr("break at … (Enter adds)"));
    auto *clear = new QPushButton(tr("Clear"), this);
    bp->addWidget(m_breakKind);
    bp->addWidget(m_breakValue, 1);
    bp->addWidget(clear);
    layout->addLayout(bp);
    m_breakList = new QLabel(this);
    m_breakList->setWordWrap(true);
    layout->addWidget(m_breakList);

    auto *split = new QSplitter(Qt::Vertical, this);
    m_candidates = new QListWidget(split);
    m_candidates->setObjectName(QStringLiteral("candidates"));
    m_history = new QListWidget(split);
    m_history->setObjectName(QStringLiteral("history"));
    m_diff = new QTextBrowser(split);
    m_diff->setObjectName(QStringLiteral("diff"));
    m_diff->setLineWrapMode(QTextEdit::NoWrap);
    split->addWidget(m_candidates);
    split->addWidget(m_history);
    split->addWidget(m_diff);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 3);
    layout->addWidget(split, 1);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("runProgress"));
    m_progress->setTextVisible(true);
    m_progress->hide();
    layout->addWidget(m_progress);
    m_statusLabel = new QLabel(this);
    m_statusLabel->setWordWrap(true);
    m_statusLabel->setObjectName(QStringLiteral("debuggerStatus"));
    layout->addWidget(m_statusLabel);

    connect(clear, &QPushButton::clicked, this, [this] { clearBreakpoints(); });
    connectControls();
    refresh();
}

/// The buttons, the breakpoint field and the three lists.
void RewriteDebugger::connectControls()
{
    connect(m_preset, &QComboBox::currentTextChanged, this, [this] { restart(); });
    connect(m_verifyBox, &QCheckBox::toggled, this, [this](bool on) {
        if (!setVerify(on)) {
            QSignalBlocker block(m_verifyBox);
            m_verifyBox->setChecked(false);
        }
    });
    connect(m_apply, &QPushButton::clicked, this, [this] { applySelected(); });
    connect(m_skip, &QPushButton::clicked, this, [this] { skipSelected(); });
    connect(m_undo, &QPushButton::clicked, this, [this] { undo(); });
    connect(m_redo, &QPushButton::clicked, this, [this] { redo(); });
    connect(m_run, &QPushButton::clicked, this, [this] { run(); });
    connect(m_breakValue, &QLineEdit::returnPressed, this, [this] {
        if (addBreakpoint(m_breakKind->currentText(), m_breakValue->text()))
            m_breakValue->clear();
    });
    connect(m_candidates, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && size_t(row) < m_matches.size()) {
            const auto &m = m_matches[size_t(row)];
            Q_EMIT highlightRequested(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
        }
    });
    connect(m_candidates, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem *item) {
        const QStringList skipped = item->data(Qt::UserRole).toStringList();
        if (skipped.size() == 2)
            unskip(skipped[0], skipped[1]);
        else
            applySelected();
    });
    connect(m_history, &QListWidget::currentRowChanged, this, [this](int row) {
        if (m_session && row >= 0 && size_t(row) <= m_session->history().size())
            showStep(row);
    });
    connect(m_history, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem *item) {
        const QVariant branch = item->data(Qt::UserRole);
        if (branch.isValid())
            switchBranch(branch.toInt());
        else
            checkout(m_history->row(item));
    });
}

RewriteDebugger::~RewriteDebugger() = default;

bool RewriteDebugger::verifyAvailable() const { return bool(m_services.makeVerifier); }

void RewriteDebugger::setGraph(ir::Graph *g)
{
    m_graph = g;
    m_verifier = nullptr;
    m_session.reset(); // it refers to the previous graph
    if (!g) {          // detached (the window replaces or frees its graph): the verify choice stays
        restart();
        return;
    }
    if (m_verify) {
        setVerify(true); // a new reference: this graph's outputs
        restart();
        return;
    }
    m_verify = false;
    restart();
}

void RewriteDebugger::setPreset(const QString &preset) { m_preset->setCurrentText(preset); }

void RewriteDebugger::fillPresets()
{
    const QString current = m_preset->currentText();
    QSignalBlocker block(m_preset);
    m_preset->clear();
    std::set<std::string> labels;
    for (const auto *p : m_registry.all())
        labels.insert(p->labels.begin(), p->labels.end());
    m_preset->addItem(QStringLiteral("all"));
    for (const auto &l : labels)
        m_preset->addItem(QString::fromStdString(l));
    if (!current.isEmpty())
        m_preset->setCurrentText(current);
}

void RewriteDebugger::reloadPatterns()
{
    m_session.reset(); // it may hold a replaced pattern
    fillPresets();
    restart();
    setStatus(tr("Patterns changed: a new session starts from this version"));
}

QString RewriteDebugger::preset() const { return m_preset->currentText(); }

bool RewriteDebugger::setVerify(bool on)
{
    m_verify = false;
    m_verifier = nullptr;
    if (on) {
        if (!verifyAvailable()) {
            setStatus(tr("Cannot verify: this build has no LibTorch executor"));
            return false;
        }
        if (m_graph) {
            // The reference is this version as it is now: later steps must keep its outputs.
            QApplication::setOverrideCursor(Qt::WaitCursor);
            std::string error;
            m_verifier = m_services.makeVerifier(*m_graph, error);
            QApplication::restoreOverrideCursor();
            if (!m_verifier) {
                setStatus(tr("Cannot verify: the graph does not run: %1").arg(QString::fromStdString(error)));
                return false;
            }
        }
        m_verify = true;
    }
    {
        QSignalBlocker block(m_verifyBox);
        m_verifyBox->setChecked(m_verify);
    }
    if (m_session) // the history stays: only later steps are checked
        m_session->setVerifier(m_verify ? m_verifier : nullptr);
    refresh();
    if (m_verify)
        setStatus(tr("Every step is now run and compared with this version's outputs."));
    return true;
}

void RewriteDebugger::restart()
{
    m_session.reset();
    m_recorder.reset();
    m_diffs.clear();
    m_branchDiffs.clear();
    m_matches.clear();
    if (m_graph) {
        std::string error;
        auto patterns = m_registry.preset(m_preset->currentText().toStdString(), error);
        rewrite::SessionConfig cfg;
        cfg.checked = true;
        if (m_verify && m_verifier)
            cfg.verify = m_verifier;
        m_session = std::make_unique<rewrite::Session>(*m_graph, patterns, cfg);
        m_recorder = std::make_unique<DiffRecorder>(*m_session, m_diffs, m_branchDiffs);
        m_session->addListener(m_recorder.get());
        for (const auto &b : m_breakpoints)
            m_session->addBreakpoint(b);
        if (!error.empty())
            setStatus(QString::fromStdString(error));
    }
    refresh();
}

void RewriteDebugger::setStatus(const QString &text)
{
    m_status = text;
    m_statusLabel->setText(text);
}

QString RewriteDebugger::status() const { return m_status; }

void RewriteDebugger::refresh()
{
    const bool live = m_session != nullptr;
    // A stable order per version (phase, benefit, program order): the list at a version is the same
    // however the session got there. After a breakpoint, the match the run stopped before is selected.
    constexpr size_t kListed = 500;
    m_matches = live ? m_session->stableCandidates(kListed) : std::vector<rewrite::Match>{};
    int current = 0;
    if (live && m_selectDriverNext) {
        const auto next = m_session->candidates(1);
        for (size_t i = 0; i < m_matches.size() && !next.empty(); ++i)
            if (m_matches[i].pattern == next[0].pattern && m_matches[i].anchor == next[0].anchor)
                current = int(i);
    }
    m_selectDriverNext = false;
    {
        QSignalBlocker block(m_candidates);
        m_candidates->clear();
        for (const auto &m : m_matches) {
            const QString text = QStringLiteral("%1 @ %2 — %3")
                                     .arg(QString::fromStdString(m.pattern), QString::fromStdString(m.anchor->name()),
                                          QString::fromStdString(m.summary));
            m_candidates->addItem(text);
            m_candidates->item(m_candidates->count() - 1)->setToolTip(text); // the whole description where the panel cuts it
        }
        // Skipped (and rolled-back) candidates stay visible, greyed, after the live ones.
        if (live)
            for (const auto &[pattern, anchor] : m_session->skipped()) {
                auto *item = new QListWidgetItem(tr("skipped: %1 @ %2 (double-click to propose it again)")
                                                     .arg(QString::fromStdString(pattern), QString::fromStdString(anchor)),
                                                 m_candidates);
                item->setData(Qt::UserRole, QStringList{QString::fromStdString(pattern), QString::fromStdString(anchor)});
                item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
            }
        if (!m_matches.empty())
            m_candidates->setCurrentRow(current);
    }
    {
        QSignalBlocker block(m_history);
        m_history->clear();
        auto *origin = new QListWidgetItem(tr("0  original"), m_history);
        origin->setToolTip(tr("Double-click to go back to the graph as the session found it"));
        if (live) {
            const auto &h = m_session->history();
            for (size_t i = 0; i < h.size(); ++i) {
                QString badge = h[i].verified ? QStringLiteral("  ✓ verified") : QString();
                auto *item = new QListWidgetItem(QStringLiteral("%1  %2 @ %3%4")
                                                     .arg(i + 1)
                                                     .arg(QString::fromStdString(h[i].pattern), QString::fromStdString(h[i].anchor), badge),
                                                 m_history);
                item->setToolTip(QString::fromStdString(h[i].summary));
            }
            // The current version in bold; versions ahead of it (redo) greyed.
            for (int r = 0; r < m_history->count(); ++r) {
                QFont f = m_history->item(r)->font();
                f.setBold(size_t(r) == m_session->version());
                m_history->item(r)->setFont(f);
                if (size_t(r) > m_session->version())
                    m_history->item(r)->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
            }
            m_history->setCurrentRow(int(m_session->version()));
            // Lines a step replaced (applied after going back): kept, one row each.
            const auto &branches = m_session->branches();
            for (size_t b = 0; b < branches.size(); ++b) {
                const auto &br = branches[b];
                auto *item = new QListWidgetItem(
                    tr("↳ branch from version %1: %n step(s), last %2 @ %3", nullptr, int(br.steps.size()))
                        .arg(br.fork)
                        .arg(QString::fromStdString(br.steps.back().pattern), QString::fromStdString(br.steps.back().anchor)),
                    m_history);
                item->setData(Qt::UserRole, int(b));
                item->setToolTip(tr("Double-click to make this line current (its last version); the current line is kept as a branch"));
                QFont f = item->font();
                f.setItalic(true);
                item->setFont(f);
            }
        }
    }
    showStep(live ? int(m_session->version()) : 0);
    // The candidate Apply would take is outlined (and the canvas moves to it) after every change:
    // the list was refilled under a signal blocker, so its selection announced nothing.
    if (!m_matches.empty() && !m_running && m_outlineNext) {
        const auto &m = m_matches[size_t(current)];
        Q_EMIT highlightRequested(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
    }
    m_outlineNext = false;
    m_apply->setEnabled(!m_matches.empty());
    m_skip->setEnabled(!m_matches.empty());
    m_run->setEnabled(!m_matches.empty());
    m_undo->setEnabled(live && m_session->version() > 0);
    m_redo->setEnabled(live && m_session->version() < m_session->history().size());
    QStringList bps;
    for (const auto &b : m_breakpoints)
        bps << QStringLiteral("%1 %2").arg(b.kind == rewrite::Breakpoint::Kind::Pattern    ? QStringLiteral("pattern")
                                               : b.kind == rewrite::Breakpoint::Kind::Node ? QStringLiteral("node")
                                                                                           : QStringLiteral("module"),
                                           QString::fromStdString(b.value));
    m_breakList->setText(bps.isEmpty() ? tr("No breakpoints") : tr("Breakpoints: %1").arg(bps.join(QStringLiteral(", "))));
}

void RewriteDebugger::showStep(int step)
{
    if (step <= 0) {
        m_diff->setHtml(tr("<i>Version 0: the graph as the session found it. Pick a later version to see what its step changed.</i>"));
        return;
    }
    const QString text = diffText(step);
    QString html = QStringLiteral("<pre>");
    for (const QString &line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QString colour = line.startsWith(QLatin1Char('+')) ? QStringLiteral("#1a7f37")
            : line.startsWith(QLatin1Char('-'))                  ? QStringLiteral("#cf222e")
                                                                 : QStringLiteral("#9a6700");
        html += QStringLiteral("<span style=\"color:%1\">%2</span>\n").arg(colour, line.toHtmlEscaped());
    }
    html += QStringLiteral("</pre>");
    if (m_session && size_t(step) <= m_session->history().size()) {
        const auto &s = m_session->history()[size_t(step) - 1];
        html.prepend(QStringLiteral("<b>%1 @ %2</b> — %3%4")
                         .arg(esc(s.pattern), esc(s.anchor), esc(s.summary),
                              s.verified ? tr(" — <span style=\"color:#1a7f37\">✓ outputs unchanged</span>") : QString()));
    }
    m_diff->setHtml(html);
}

QString RewriteDebugger::diffText(int step) const
{
    if (step <= 0 || size_t(step) > m_diffs.size())
        return {};
    return m_diffs[size_t(step) - 1];
}

void RewriteDebugger::afterEdit()
{
    Q_EMIT graphEdited();
    refresh();
}

bool RewriteDebugger::applySelected()
{
    m_outlineNext = true; // after this action the next candidate is shown
    if (!m_session || m_matches.empty())
        return false;
    int row = m_candidates->currentRow();
    const rewrite::Match m = m_matches[size_t(row >= 0 && size_t(row) < m_matches.size() ? row : 0)];
    Q_EMIT aboutToEdit();
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const bool ok = m_session->apply(m);
    QApplication::restoreOverrideCursor();
    if (!ok) {
        setStatus(tr("Not applied: %1").arg(QString::fromStdString(m_session->lastError())));
        refresh();
        return false;
    }
    const auto &step = m_session->history().back();
    setStatus(tr("Applied %1 at %2%3")
                  .arg(QString::fromStdString(step.pattern), QString::fromStdString(step.anchor),
                       step.verified ? tr(" (outputs unchanged)") : QString()));
    afterEdit(); // outlines the next candidate; the step's own nodes are in its diff (History)
    return true;
}

bool RewriteDebugger::skipSelected()
{
    m_outlineNext = true; // after this action the next candidate is shown
    if (!m_session || m_matches.empty())
        return false;
    int row = std::max(0, m_candidates->currentRow());
    const rewrite::Match &m = m_matches[size_t(row)];
    setStatus(tr("Skipped %1 at %2").arg(QString::fromStdString(m.pattern), QString::fromStdString(m.anchor->name())));
    m_session->skip(m);
    refresh();
    return true;
}

bool RewriteDebugger::undo() { return m_session && checkout(int(m_session->version()) - 1); }

bool RewriteDebugger::redo() { return m_session && checkout(int(m_session->version()) + 1); }

bool RewriteDebugger::checkout(int version)
{
    m_outlineNext = true; // after this action the next candidate is shown
    if (!m_session || version < 0 || size_t(version) > m_session->history().size())
        return false;
    Q_EMIT aboutToEdit();
    if (!m_session->checkout(size_t(version)))
        return false;
    setStatus(tr("At version %1 of %2").arg(version).arg(m_session->history().size()));
    afterEdit();
    return true;
}

bool RewriteDebugger::unskip(const QString &pattern, const QString &anchor)
{
    if (!m_session || !m_session->unskip(pattern.toStdString(), anchor.toStdString()))
        return false;
    setStatus(tr("%1 at %2 is proposed again").arg(pattern, anchor));
    m_outlineNext = true;
    refresh();
    return true;
}

int RewriteDebugger::skippedCount() const { return m_session ? int(m_session->skipped().size()) : 0; }

int RewriteDebugger::branchCount() const { return m_session ? int(m_session->branches().size()) : 0; }

bool RewriteDebugger::switchBranch(int index)
{
    m_outlineNext = true;
    if (!m_session || index < 0 || size_t(index) >= m_session->branches().size())
        return false;
    Q_EMIT aboutToEdit();
    const size_t fork = m_session->branches()[size_t(index)].fork;
    std::vector<QString> theirs = std::move(m_branchDiffs[size_t(index)]);
    m_branchDiffs.erase(m_branchDiffs.begin() + index);
    const size_t had = m_session->branches().size();
    if (!m_session->switchBranch(size_t(index)))
        return false;
    // The session keeps the line it left as a branch (when it had steps after the fork).
    if (m_session->branches().size() == had)
        m_branchDiffs.emplace_back(m_diffs.begin() + long(std::min(fork, m_diffs.size())), m_diffs.end());
    m_diffs.resize(std::min(fork, m_diffs.size()));
    m_diffs.insert(m_diffs.end(), theirs.begin(), theirs.end());
    setStatus(tr("Switched to the branch from version %1: at version %2").arg(fork).arg(m_session->version()));
    afterEdit();
    return true;
}

QString RewriteDebugger::run()
{
    if (m_running) { // the button reads Stop now
        requestStop();
        return {};
    }
    if (!m_session)
        return {};
    Q_EMIT aboutToEdit();
    setBusy(true);
    const size_t before = m_session->version();
    // Checked mode stays on: it lints each step's neighbourhood, not the graph. Slices of steps, with the events in between (progress, Stop); verified steps run the graph
    // each, so their slices are short.
    m_session->setMaxSteps(m_verify ? 5 : 500);
    rewrite::RunResult r;
    std::vector<rewrite::Rollback> rollbacks;
    double seconds = 0;
    QElapsedTimer clock;
    clock.start();
    m_progress->setRange(0, 0); // busy until the first slice says how far it got
    m_progress->show();
    for (;;) {
        r = m_session->run();
        seconds += r.seconds;
        rollbacks.insert(rollbacks.end(), r.rollbacks.begin(), r.rollbacks.end());
        if (r.reason != rewrite::StopReason::StepLimit)
            break;
        // The candidates left are a lower bound of the steps to come (a step may make new ones).
        constexpr size_t kCount = 1000;
        const size_t done = m_session->version() - before, left = m_session->candidates(kCount).size();
        const double eta = done ? double(clock.elapsed()) / 1000.0 / double(done) * double(left) : 0;
        m_progress->setRange(0, int(std::min<size_t>(done + left, INT_MAX)));
        m_progress->setValue(int(std::min<size_t>(done, INT_MAX)));
        m_lastProgress = tr("%1 of ≥%2 steps, %3 s; about %4 s left")
                             .arg(done)
                             .arg(done + left)
                             .arg(clock.elapsed() / 1000.0, 0, 'f', 1)
                             .arg(eta, 0, 'f', 0);
        if (left == kCount)
            m_lastProgress += tr(" (over %1 candidates)").arg(kCount);
        m_progress->setFormat(m_lastProgress);
        setStatus(tr("Running… %1").arg(m_lastProgress));
        QCoreApplication::processEvents(); // Stop sets the session's stop request: the next slice returns Stopped
    }
    m_progress->hide();
    m_session->setMaxSteps(SIZE_MAX);
    m_stop = false;
    const auto lint = m_graph->lint();
    const QString why = QString::fromLatin1(rewrite::stopReasonName(r.reason));
    QString text = tr("%1 step(s) in %2 s; stopped: %3").arg(m_session->version() - before).arg(seconds, 0, 'f', 3).arg(why);
    if (!r.message.empty() && r.reason == rewrite::StopReason::Breakpoint)
        text += QStringLiteral(" (%1)").arg(QString::fromStdString(r.message));
    constexpr size_t kShownRollbacks = 5;
    for (size_t i = 0; i < rollbacks.size() && i < kShownRollbacks; ++i)
        text += QStringLiteral("\n") +
            tr("Rolled back: %1 at %2: %3")
                .arg(QString::fromStdString(rollbacks[i].pattern), QString::fromStdString(rollbacks[i].anchor),
                     QString::fromStdString(rollbacks[i].reason));
    if (rollbacks.size() > kShownRollbacks)
        text += QStringLiteral("\n") + tr("… %1 more rolled back").arg(rollbacks.size() - kShownRollbacks);
    if (!lint.empty())
        text += QStringLiteral("\n") + tr("The graph fails lint: %1").arg(QString::fromStdString(lint.front().toString()));
    setBusy(false);
    setStatus(text);
    m_selectDriverNext = r.reason == rewrite::StopReason::Breakpoint;
    m_outlineNext = m_selectDriverNext;
    afterEdit();
    return why;
}

void RewriteDebugger::setBusy(bool busy)
{
    m_running = busy;
    m_stop = false;
    // Everything but the Run/Stop button holds still while a run is between slices.
    for (QWidget *w : findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly))
        if (w != m_run && w != m_progress)
            w->setEnabled(!busy);
    m_verifyBox->setEnabled(!busy && verifyAvailable());
    m_run->setText(busy ? tr("Stop") : tr("Run"));
    if (busy)
        QApplication::setOverrideCursor(Qt::BusyCursor);
    else
        QApplication::restoreOverrideCursor();
    Q_EMIT busyChanged(busy);
}

QList<QPair<QString, QString>> RewriteDebugger::breakpointList() const
{
    QList<QPair<QString, QString>> out;
    for (const auto &b : m_breakpoints)
        out.append({b.kind == rewrite::Breakpoint::Kind::Pattern    ? QStringLiteral("pattern")
                        : b.kind == rewrite::Breakpoint::Kind::Node ? QStringLiteral("node")
                                                                    : QStringLiteral("module"),
                    QString::fromStdString(b.value)});
    return out;
}

QStringList RewriteDebugger::stepRecord() const
{
    QStringList out;
    if (m_session)
        for (const auto &s : m_session->history())
            out << QString::fromStdString(s.pattern) + QLatin1Char('\t') + QString::fromStdString(s.anchor);
    return out;
}

bool RewriteDebugger::replay(const QStringList &steps)
{
    if (!m_session)
        return steps.isEmpty();
    Q_EMIT aboutToEdit();
    bool ok = true;
    for (const QString &line : steps) {
        const QStringList parts = line.split(QLatin1Char('\t'));
        if (parts.size() != 2) {
            ok = false;
            break;
        }
        bool applied = false;
        for (const auto &m : m_session->candidates()) {
            if (QString::fromStdString(m.pattern) == parts[0] && m.anchor && QString::fromStdString(m.anchor->name()) == parts[1]) {
                applied = m_session->apply(m);
                break;
            }
        }
        if (!applied) {
            setStatus(tr("Could not replay %1 at %2").arg(parts[0], parts[1]));
            ok = false;
            break;
        }
    }
    afterEdit();
    return ok;
}

bool RewriteDebugger::addBreakpoint(const QString &kind, const QString &value)
{
    const QString v = value.trimmed();
    if (v.isEmpty())
        return false;
    rewrite::Breakpoint b;
    if (kind == QLatin1String("pattern")) {
        if (!m_registry.find(v.toStdString())) {
            setStatus(tr("No pattern named '%1'").arg(v));
            return false;
        }
        b.kind = rewrite::Breakpoint::Kind::Pattern;
    } else if (kind == QLatin1String("node")) {
        b.kind = rewrite::Breakpoint::Kind::Node;
    } else if (kind == QLatin1String("module")) {
        b.kind = rewrite::Breakpoint::Kind::Module;
    } else {
        return false;
    }
    b.value = v.toStdString();
    m_breakpoints.push_back(b);
    if (m_session)
        m_session->addBreakpoint(b);
    refresh();
    return true;
}

void RewriteDebugger::clearBreakpoints()
{
    m_breakpoints.clear();
    if (m_session)
        m_session->clearBreakpoints();
    refresh();
}

int RewriteDebugger::candidateCount() const { return int(m_matches.size()); }

int RewriteDebugger::historySize() const { return m_session ? int(m_session->history().size()) : 0; }

int RewriteDebugger::version() const { return m_session ? int(m_session->version()) : 0; }

} // namespace fxlens::views
