// SPDX-License-Identifier: MIT
// The rewrite debugger panel (see RewriteDebugger.h).
#include "RewriteDebugger.h"
#include "Count.h"

#include "GraphDocument.h"
#include "RewriteHistory.h"
#include "RewriteModels.h"
#include "Selection.h"
#include "TuneJob.h"
#include "TuneWidgets.h"
#include "UserPatterns.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCursor>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

#include <map>
#include <set>

namespace fxlens::views {

namespace {

QString esc(const std::string &s) { return QString::fromStdString(s).toHtmlEscaped(); }

} // namespace

RewriteDebugger::RewriteDebugger(GraphDocument &doc, QWidget *parent) : QWidget(parent), m_doc(doc), m_h(*doc.history())
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

    m_noCandidates = new QLabel(this);
    m_noCandidates->setObjectName(QStringLiteral("noCandidates"));
    m_noCandidates->setWordWrap(true);
    m_noCandidates->hide();
    layout->addWidget(m_noCandidates);

    auto *split = new QSplitter(Qt::Vertical, this);
    m_candidates = new QListView(split);
    m_candidates->setObjectName(QStringLiteral("candidates"));
    m_candidateModel = new CandidateModel(this);
    m_candidates->setModel(m_candidateModel);
    m_history = new QListView(split);
    m_history->setObjectName(QStringLiteral("history"));
    m_historyModel = new HistoryModel(this);
    m_history->setModel(m_historyModel);
    // Long descriptions wrap in the panel's width (no sideways scrolling); the tooltip has them too.
    for (QListView *list : {m_candidates, m_history}) {
        list->setWordWrap(true);
        list->setResizeMode(QListView::Adjust);
        list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    }
    m_diff = new QTextBrowser(split);
    m_diff->setObjectName(QStringLiteral("diff"));
    m_diff->setLineWrapMode(QTextEdit::WidgetWidth); // long diff lines wrap (pre-wrap below), never cut
    m_history->viewport()->installEventFilter(this);
    connect(m_history->verticalScrollBar(), &QScrollBar::actionTriggered, this, [this] { m_historyFollows = false; });
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
    m_tuneRow = new TuneProgressRow(doc.tuning(), this);
    layout->addWidget(m_tuneRow);
    m_statusLabel = new QLabel(this);
    m_statusLabel->setWordWrap(true);
    m_statusLabel->setObjectName(QStringLiteral("debuggerStatus"));
    layout->addWidget(m_statusLabel);

    connect(clear, &QPushButton::clicked, this, [this] { clearBreakpoints(); });
    connectControls();
    connectSession();
    connectTuning();
    refresh();
}

/// Tune's search and result: the panel holds still while it runs; its result annotates the lists.
void RewriteDebugger::connectTuning()
{
    TuneJob &tune = m_doc.tuning();
    connect(&tune, &TuneJob::started, this, [this] {
        setTuning(true);
        setStatus(tr("Tuning: measuring versions off the GUI thread; Stop keeps the best so far"));
    });
    connect(&tune, &TuneJob::finished, this, [this](bool ok, const QString &message) {
        if (ok)
            m_skips.clear(); // the session went back to version 0: the user's skips were proposed again
        setTuning(false);
        setStatus(message);
        refresh();
    });
    connect(&tune, &TuneJob::resultChanged, this, [this] {
        if (!m_h.isRunning())
            refresh();
    });
}

void RewriteDebugger::setTuning(bool tuning)
{
    for (QWidget *w : findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly))
        if (w != m_tuneRow && w != m_statusLabel)
            w->setEnabled(!tuning);
    m_verifyBox->setEnabled(!tuning && verifyAvailable());
    Q_EMIT busyChanged(tuning);
}

/// The buttons, the breakpoint field and the three lists.
void RewriteDebugger::connectControls()
{
    connect(m_preset, &QComboBox::currentTextChanged, this, [this](const QString &p) { m_h.setPreset(p); });
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
    connect(m_candidates->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        if (const int row = current.row(); row >= 0 && size_t(row) < m_matches.size()) {
            const auto &m = m_matches[size_t(row)];
            Q_EMIT highlightRequested(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
        }
    });
    connect(m_candidates, &QListView::doubleClicked, this, [this](const QModelIndex &item) {
        const QStringList skipped = item.data(CandidateModel::SkippedRole).toStringList();
        if (skipped.size() == 2)
            unskip(skipped[0], skipped[1]);
        else
            applySelected();
    });
    connect(m_history->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex &current) {
        if (const int row = current.row(); row >= 0 && row <= m_h.historySize())
            showStep(row);
    });
    auto *compare = new QAction(tr("Compare with Version on Screen"), m_history);
    compare->setObjectName(QStringLiteral("compareWithCurrent"));
    compare->setToolTip(tr("This version (A) and the version on screen (B) side by side"));
    m_history->addAction(compare);
    m_history->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(compare, &QAction::triggered, this, [this] {
        const QModelIndex row = m_history->currentIndex();
        const QVariant branch = row.data(HistoryModel::BranchRole);
        if (row.isValid())
            Q_EMIT compareRequested(branch.isValid() ? 0 : row.row(), branch.isValid() ? branch.toInt() : -1);
    });
    // A click on a version goes there, as a debugger's call stack shows the frame clicked: canvas,
    // status and Undo / Redo agree with the row. Nothing is lost (the versions after it stay in the
    // history, Redo, and a step applied there starts a branch). The keyboard and a right click (for
    // the row's menu) only preview the row's step.
    connect(m_history, &QListView::clicked, this, [this](const QModelIndex &item) {
        const QVariant branch = item.data(HistoryModel::BranchRole);
        if (branch.isValid())
            switchBranch(branch.toInt());
        else
            checkout(item.row());
    });
}

/// The session's and the document's changes.
void RewriteDebugger::connectSession()
{
    // The session's changes, as values: a new version or new candidates refill the lists.
    connect(&m_h, &RewriteHistory::versionChanged, this, [this] {
        if (!m_h.isRunning())
            refresh();
    });
    connect(&m_h, &RewriteHistory::candidatesChanged, this, [this] {
        if (!m_h.isRunning())
            refresh();
    });
    connect(&m_h, &RewriteHistory::runProgress, this, &RewriteDebugger::showProgress);
    // A pattern added in the Pattern Editor: its preset is listed (the history has it already).
    connect(&m_doc.userPatterns(), &UserPatterns::changed, this, [this] {
        fillPresets();
        setStatus(tr("Patterns changed: candidates planned again from version %1; the history is kept").arg(m_h.version()));
    });
    // Another file: nothing said about the previous one stays on screen, and its first candidate
    // is outlined (and shown on the canvas) once the candidates are counted.
    connect(&m_doc, &GraphDocument::aboutToReplace, this, [this] {
        setStatus(QString());
        m_skips.clear();
        m_outlineNext = true;
    });
    connect(&m_h, &RewriteHistory::busyChanged, this, &RewriteDebugger::setBusy);
}

RewriteDebugger::~RewriteDebugger() = default;

bool RewriteDebugger::verifyAvailable() const { return m_h.verifyAvailable(); }

void RewriteDebugger::setPreset(const QString &preset)
{
    m_preset->setCurrentText(preset); // its signal sets the history's preset when the text changes
    if (m_preset->currentText() == preset)
        m_h.setPreset(preset); // the list showed it already while the history had another (patterns reloaded)
}

void RewriteDebugger::fillPresets()
{
    QSignalBlocker block(m_preset);
    m_preset->clear();
    std::set<std::string> labels;
    for (const auto *p : m_doc.registry().all())
        labels.insert(p->labels.begin(), p->labels.end());
    m_preset->addItem(QStringLiteral("all"));
    for (const auto &l : labels)
        m_preset->addItem(QString::fromStdString(l));
    m_preset->setCurrentText(m_h.preset());
}

QString RewriteDebugger::preset() const { return m_h.preset(); }

void RewriteDebugger::reloadPatterns()
{
    fillPresets();
    m_h.reloadPatterns();
    setStatus(tr("Patterns changed: candidates planned again from version %1; the history is kept").arg(m_h.version()));
}

bool RewriteDebugger::setVerify(bool on)
{
    QString why;
    QApplication::setOverrideCursor(Qt::WaitCursor); // the reference run
    const bool ok = m_h.setVerify(on, &why);
    QApplication::restoreOverrideCursor();
    {
        QSignalBlocker block(m_verifyBox);
        m_verifyBox->setChecked(m_h.verifying());
    }
    if (!ok) {
        setStatus(why);
        return false;
    }
    if (m_h.verifying())
        setStatus(tr("Every step is now run and compared with this version's outputs."));
    return true;
}

void RewriteDebugger::setStatus(const QString &text)
{
    m_status = text;
    m_statusLabel->setText(text);
}

QString RewriteDebugger::status() const { return m_status; }

QString RewriteDebugger::noCandidatesText() const { return m_noCandidates->text(); }

void RewriteDebugger::refresh()
{
    const bool live = m_h.live();
    // A stable order per version (phase, benefit, program order): the list at a version is the same
    // however the session got there. After a breakpoint, the match the run stopped before is selected.
    constexpr size_t kListed = 500;
    m_matches = m_h.stableCandidates(kListed);
    int current = 0;
    if (live && m_selectDriverNext) {
        const auto next = m_h.driverCandidates(1);
        for (size_t i = 0; i < m_matches.size() && !next.empty(); ++i)
            if (m_matches[i].pattern == next[0].pattern && m_matches[i].anchor == next[0].anchor)
                current = int(i);
    }
    m_selectDriverNext = false;
    {
        QSignalBlocker block(m_candidates->selectionModel());
        m_candidateModel->setGreyed(palette().color(QPalette::Disabled, QPalette::Text));
        const auto skipped = m_h.skipped();
        std::vector<QString> reasons;
        for (const auto &[pattern, anchor] : skipped)
            reasons.push_back(m_doc.tuning().leftOutReason(pattern, anchor));
        m_candidateModel->setCandidates(m_matches, skipped, std::move(reasons));
        if (!m_matches.empty())
            m_candidates->setCurrentIndex(m_candidateModel->index(current));
    }
    fillHistory();
    showStep(m_h.version());
    // The candidate Apply would take is outlined (and the canvas moves to it) after every change:
    // the list was refilled under a signal blocker, so its selection announced nothing.
    if (!m_matches.empty() && !m_h.isRunning() && m_outlineNext) {
        const auto &m = m_matches[size_t(current)];
        Q_EMIT highlightRequested(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
    }
    if (!m_matches.empty()) // a file's first refresh may come before its candidates are counted
        m_outlineNext = false;
    const QString none = m_matches.empty() ? m_h.noCandidatesReason() : QString();
    m_noCandidates->setText(none);
    m_noCandidates->setVisible(!none.isEmpty());
    m_apply->setEnabled(!m_matches.empty());
    m_skip->setEnabled(!m_matches.empty());
    m_run->setEnabled(!m_matches.empty());
    m_undo->setEnabled(live && (m_h.version() > 0 || (!m_skips.empty() && m_skips.back().version == m_h.version())));
    m_redo->setEnabled(live && m_h.version() < m_h.historySize());
    QStringList bps;
    for (const auto &[kind, value] : m_h.breakpointList())
        bps << kind + QLatin1Char(' ') + value;
    m_breakList->setText(bps.isEmpty() ? tr("No breakpoints") : tr("Breakpoints: %1").arg(bps.join(QStringLiteral(", "))));
    if (!m_h.lastError().isEmpty() && m_status.isEmpty())
        setStatus(m_h.lastError());
}

/// The versions of the current line (the one on screen in bold, those ahead of it greyed), then one
/// row per branch kept beside it. After a tune: the measured times of the original and the tuned
/// version, each tuned step's Δ, and the matches left out for cost under the version they were at.
void RewriteDebugger::fillHistory()
{
    QSignalBlocker block(m_history->selectionModel());
    m_historyModel->setGreyed(palette().color(QPalette::Disabled, QPalette::Text));
    std::map<int, QStringList> skips;
    for (const SkipRecord &s : m_skips)
        skips[s.version] << tr("skipped %1 @ %2").arg(s.pattern, s.anchor);
    std::map<int, QString> notes;
    const TuneJob &tune = m_doc.tuning();
    if (tune.result()) {
        std::map<uint64_t, int> versionOf;
        for (int v = 0; v <= m_h.historySize(); ++v) {
            const uint64_t id = m_h.versionId(v);
            versionOf[id] = v;
            QStringList parts;
            if (const auto d = tune.stepDelta(id))
                parts << tr("Δ %1").arg(TuneJob::deltaText(*d));
            if (const auto t = tune.measuredSeconds(id))
                parts << tr("measured %1").arg(TuneJob::msText(*t));
            if (!parts.isEmpty())
                notes[v] = parts.join(QStringLiteral(" · "));
        }
        for (const auto &l : tune.leftOutSteps())
            if (const auto it = versionOf.find(l.atVersion); it != versionOf.end())
                skips[it->second] << tr("left out for cost (%1): %2 @ %3")
                                         .arg(TuneJob::deltaText(l.deltaSeconds), QString::fromStdString(l.pattern),
                                              QString::fromStdString(l.anchor));
    }
    m_historyModel->setHistory(m_h.steps(), m_h.branches(), m_h.version(), std::move(skips), std::move(notes));
    m_history->setCurrentIndex(m_historyModel->index(m_h.version()));
    m_historyFollows = true; // the version on screen is in view (a run or a tune ends far down)
    keepCurrentVersionInView();
}

void RewriteDebugger::keepCurrentVersionInView()
{
    m_history->scrollTo(m_history->currentIndex());
    // Wrapped rows are laid out later (and again when the list's height changes, as the status
    // text below grows after a run): scrolled again then.
    QTimer::singleShot(0, m_history, [this] {
        if (m_historyFollows)
            m_history->scrollTo(m_history->currentIndex());
    });
}

bool RewriteDebugger::eventFilter(QObject *watched, QEvent *e)
{
    if (watched == m_history->viewport() && e->type() == QEvent::Resize && m_historyFollows)
        keepCurrentVersionInView();
    return QWidget::eventFilter(watched, e);
}

void RewriteDebugger::showStep(int step)
{
    const QString elsewhere = step == m_h.version()
        ? QString()
        : tr("<p><i>The canvas shows version %1; click this row to go to version %2.</i></p>").arg(m_h.version()).arg(step);
    if (step <= 0) {
        m_diff->setHtml(tr("<i>Version 0: the graph as the session found it. Pick a later version to see what its step changed.</i>") +
                        elsewhere);
        return;
    }
    const QString text = diffText(step);
    QString html = QStringLiteral("<pre style=\"white-space: pre-wrap\">");
    for (const QString &line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QString colour = line.startsWith(QLatin1Char('+')) ? QStringLiteral("#1a7f37")
            : line.startsWith(QLatin1Char('-'))                  ? QStringLiteral("#cf222e")
                                                                 : QStringLiteral("#9a6700");
        html += QStringLiteral("<span style=\"color:%1\">%2</span>\n").arg(colour, line.toHtmlEscaped());
    }
    html += QStringLiteral("</pre>");
    html.prepend(elsewhere);
    if (size_t(step) <= m_h.steps().size()) {
        const auto &s = m_h.steps()[size_t(step) - 1];
        html.prepend(QStringLiteral("<b>%1 @ %2</b> — %3%4")
                         .arg(esc(s.pattern), esc(s.anchor), esc(s.summary),
                              s.verified ? tr(" — <span style=\"color:#1a7f37\">✓ outputs unchanged</span>") : QString()));
    }
    m_diff->setHtml(html);
}

QString RewriteDebugger::diffText(int step) const { return m_h.diffText(step); }

bool RewriteDebugger::applySelected()
{
    m_outlineNext = false; // after this action the step just applied is shown (showApplied)
    if (m_matches.empty())
        return false;
    const int row = m_candidates->currentIndex().row();
    const rewrite::Match m = m_matches[size_t(row >= 0 && size_t(row) < m_matches.size() ? row : 0)];
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const bool ok = m_h.apply(m);
    QApplication::restoreOverrideCursor();
    if (!ok) {
        setStatus(tr("Not applied: %1").arg(m_h.lastError()));
        m_outlineNext = true;
        refresh();
        return false;
    }
    const auto &step = m_h.steps().back();
    setStatus(tr("Applied %1 at %2%3")
                  .arg(QString::fromStdString(step.pattern), QString::fromStdString(step.anchor),
                       step.verified ? tr(" (outputs unchanged)") : QString()) +
              nextText());
    showApplied();
    return true;
}

QString RewriteDebugger::nextText() const
{
    const int row = m_candidates->currentIndex().row();
    if (row < 0 || size_t(row) >= m_matches.size())
        return {};
    const auto &m = m_matches[size_t(row)];
    return tr(". Next: %1 at %2 (Ctrl+G goes to it)").arg(QString::fromStdString(m.pattern), QString::fromStdString(m.anchor->name()));
}

void RewriteDebugger::showCandidate()
{
    const int row = m_candidates->currentIndex().row();
    if (row < 0 || size_t(row) >= m_matches.size())
        return;
    const auto &m = m_matches[size_t(row)];
    Q_EMIT highlightRequested(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
}

void RewriteDebugger::showApplied()
{
    const ir::Graph *g = m_doc.graph();
    if (!g || m_h.version() == 0 || size_t(m_h.version()) > m_h.steps().size())
        return;
    // The nodes the step inserted (those still in the graph), else the ones it rewired.
    const auto &edits = m_h.steps()[size_t(m_h.version()) - 1].edits;
    std::set<const ir::Node *> erased;
    for (const auto &e : edits)
        if (e.kind == rewrite::Edit::Kind::Erase)
            erased.insert(e.node);
    std::vector<const ir::Node *> made, rewired;
    for (const auto &e : edits) {
        if (erased.count(e.node))
            continue;
        auto &into = e.kind == rewrite::Edit::Kind::Insert ? made : rewired;
        if (std::find(into.begin(), into.end(), e.node) == into.end())
            into.push_back(e.node);
    }
    const auto &shown = made.empty() ? rewired : made;
    if (!shown.empty())
        Q_EMIT highlightRequested(shown, shown.back()); // the last made is the one the step's users read
}

bool RewriteDebugger::skipSelected()
{
    m_outlineNext = true; // after this action the next candidate is shown
    if (m_matches.empty())
        return false;
    const int row = std::max(0, m_candidates->currentIndex().row());
    const rewrite::Match m = m_matches[size_t(std::min(size_t(row), m_matches.size() - 1))];
    const QString pattern = QString::fromStdString(m.pattern), anchor = QString::fromStdString(m.anchor->name());
    setStatus(tr("Skipped %1 at %2 (Undo proposes it again)").arg(pattern, anchor));
    m_skips.push_back({pattern, anchor, m_h.version()});
    if (m_h.skip(m))
        return true;
    m_skips.pop_back();
    return false;
}

bool RewriteDebugger::undo()
{
    if (!m_skips.empty() && m_skips.back().version == m_h.version()) { // the last action here was a Skip
        const SkipRecord s = m_skips.back();
        if (unskip(s.pattern, s.anchor)) { // unskip() drops its record either way
            setStatus(tr("Skip undone: %1 at %2 is proposed again").arg(s.pattern, s.anchor));
            return true;
        }
    }
    return checkout(m_h.version() - 1);
}

bool RewriteDebugger::redo()
{
    // Like Apply: the view shows what the step made again; the next candidate is only listed.
    if (!moveTo(m_h.version() + 1, false))
        return false;
    setStatus(status() + nextText());
    showApplied();
    return true;
}

bool RewriteDebugger::checkout(int version) { return moveTo(version, true); }

bool RewriteDebugger::moveTo(int version, bool outlineNext)
{
    m_outlineNext = outlineNext; // after this action the next candidate is shown, or (Redo) the step
    if (version < 0 || version > m_h.historySize())
        return false;
    setStatus(tr("At version %1 of %2").arg(version).arg(m_h.historySize()));
    return m_h.checkout(version);
}

bool RewriteDebugger::unskip(const QString &pattern, const QString &anchor)
{
    m_outlineNext = true;
    std::erase_if(m_skips, [&](const SkipRecord &s) { return s.pattern == pattern && s.anchor == anchor; });
    if (!m_h.unskip(pattern, anchor))
        return false;
    setStatus(tr("%1 at %2 is proposed again").arg(pattern, anchor));
    return true;
}

int RewriteDebugger::skippedCount() const { return int(m_h.skipped().size()); }

int RewriteDebugger::branchCount() const { return int(m_h.branches().size()); }

bool RewriteDebugger::switchBranch(int index)
{
    m_outlineNext = true;
    if (index < 0 || size_t(index) >= m_h.branches().size())
        return false;
    const size_t fork = m_h.branches()[size_t(index)].fork;
    if (!m_h.switchBranch(index))
        return false;
    setStatus(tr("Switched to the branch from version %1: at version %2").arg(fork).arg(m_h.version()));
    return true;
}

bool RewriteDebugger::isRunning() const { return m_h.isRunning(); }

void RewriteDebugger::requestStop() { m_h.requestStop(); }

void RewriteDebugger::showProgress(const RunProgress &p)
{
    m_progress->setRange(0, int(std::min<size_t>(p.done + p.left, INT_MAX)));
    m_progress->setValue(int(std::min<size_t>(p.done, INT_MAX)));
    m_lastProgress = p.text;
    m_progress->setFormat(p.text);
    setStatus(tr("Running… %1").arg(p.text));
}

QString RewriteDebugger::run(int steps)
{
    if (m_h.isRunning()) { // the button reads Stop now
        requestStop();
        return {};
    }
    if (!m_h.live())
        return {};
    const int before = m_h.version();
    const size_t nodesBefore = m_doc.graph() ? m_doc.graph()->size() : 0;
    const rewrite::RunResult r = m_h.run(steps >= 0 ? size_t(steps) : SIZE_MAX);
    const QString why = QString::fromLatin1(rewrite::stopReasonName(r.reason));
    QString text = tr("%1 in %2 s; stopped: %3").arg(counted(m_h.version() - before, "step")).arg(r.seconds, 0, 'f', 3).arg(why);
    if (!r.message.empty() && r.reason == rewrite::StopReason::Breakpoint)
        text += QStringLiteral(" (%1)").arg(QString::fromStdString(r.message));
    constexpr size_t kShownRollbacks = 5;
    for (size_t i = 0; i < r.rollbacks.size() && i < kShownRollbacks; ++i)
        text += QStringLiteral("\n") +
            tr("Rolled back: %1 at %2: %3")
                .arg(QString::fromStdString(r.rollbacks[i].pattern), QString::fromStdString(r.rollbacks[i].anchor),
                     QString::fromStdString(r.rollbacks[i].reason));
    if (r.rollbacks.size() > kShownRollbacks)
        text += QStringLiteral("\n") + tr("… %1 more rolled back").arg(r.rollbacks.size() - kShownRollbacks);
    if (const QString grew = growthText(before, nodesBefore); !grew.isEmpty())
        text += QStringLiteral("\n") + grew;
    if (m_doc.graph()) {
        const auto lint = m_doc.graph()->lint();
        if (!lint.empty())
            text += QStringLiteral("\n") + tr("The graph fails lint: %1").arg(QString::fromStdString(lint.front().toString()));
    }
    setStatus(text);
    m_selectDriverNext = r.reason == rewrite::StopReason::Breakpoint;
    m_outlineNext = m_selectDriverNext;
    refresh();
    return why;
}

QString RewriteDebugger::growthText(int fromVersion, size_t nodesBefore) const
{
    const ir::Graph *g = m_doc.graph();
    if (!g || g->size() <= nodesBefore)
        return {};
    // Nodes made less nodes erased, per pattern, over the steps of the run.
    std::map<std::string, long> net;
    const auto &steps = m_h.steps();
    for (size_t i = size_t(std::max(0, fromVersion)); i < size_t(m_h.version()) && i < steps.size(); ++i)
        for (const auto &e : steps[i].edits)
            net[steps[i].pattern] += e.kind == rewrite::Edit::Kind::Insert ? 1 : e.kind == rewrite::Edit::Kind::Erase ? -1 : 0;
    std::vector<std::pair<long, std::string>> grew;
    for (const auto &[pattern, n] : net)
        if (n > 0)
            grew.emplace_back(n, pattern);
    std::sort(grew.begin(), grew.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    // Why, by the label the growing patterns share (their family).
    std::string family;
    long added = 0;
    QStringList who;
    for (const auto &[n, pattern] : grew) {
        const rewrite::Pattern *p = m_doc.registry().find(pattern);
        const std::string label = p && !p->labels.empty() ? p->labels.front() : std::string();
        family = who.isEmpty() || family == label ? label : std::string();
        added += n;
        who << tr("%1 +%2").arg(QString::fromStdString(pattern)).arg(n);
    }
    const QString kind = family == "horizontal" ? tr("horizontal fusion steps (each concatenates weights and splits the fused output)")
        : family == "normalization"             ? tr("normalisation steps (they put ops in the form later patterns match)")
                                                : tr("steps that add nodes");
    const long rise = long(g->size() - nodesBefore);
    QString text = tr("The node count rose: +%1 (%2 → %3): %4 added %5: %6")
                       .arg(rise)
                       .arg(nodesBefore)
                       .arg(g->size())
                       .arg(kind)
                       .arg(added)
                       .arg(who.join(QStringLiteral(", ")));
    if (added > rise)
        text += tr("; the other steps removed %1").arg(added - rise);
    return text;
}

void RewriteDebugger::setBusy(bool busy)
{
    // Everything but the Run/Stop button holds still while a run is between slices.
    for (QWidget *w : findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly))
        if (w != m_run && w != m_progress)
            w->setEnabled(!busy);
    m_verifyBox->setEnabled(!busy && verifyAvailable());
    m_run->setText(busy ? tr("Stop") : tr("Run"));
    if (busy) {
        m_progress->setRange(0, 0); // busy until the first slice says how far it got
        m_progress->show();
        QApplication::setOverrideCursor(Qt::BusyCursor);
    } else {
        m_progress->hide();
        QApplication::restoreOverrideCursor();
    }
    Q_EMIT busyChanged(busy);
}

QList<QPair<QString, QString>> RewriteDebugger::breakpointList() const { return m_h.breakpointList(); }

QStringList RewriteDebugger::stepRecord() const { return m_h.stepRecord(); }

bool RewriteDebugger::replay(const QStringList &steps)
{
    const bool ok = m_h.replay(steps);
    setStatus(ok ? tr("Replayed %1").arg(counted(steps.size(), "step")) : m_h.lastError());
    return ok;
}

bool RewriteDebugger::addBreakpoint(const QString &kind, const QString &value)
{
    QString why;
    if (!m_h.addBreakpoint(kind, value, &why)) {
        if (!why.isEmpty())
            setStatus(why);
        return false;
    }
    return true;
}

void RewriteDebugger::clearBreakpoints() { m_h.clearBreakpoints(); }

int RewriteDebugger::candidateCount() const { return int(m_matches.size()); }

int RewriteDebugger::historySize() const { return m_h.historySize(); }

int RewriteDebugger::version() const { return m_h.version(); }

void RewriteDebugger::setSelection(Selection *selection)
{
    connect(this, &RewriteDebugger::highlightRequested, selection, &Selection::highlight);
}

} // namespace fxlens::views
