// SPDX-License-Identifier: MIT
// The pattern editor panel (see PatternEditor.h).
#include "PatternEditor.h"
#include "Count.h"

#include "FileDialog.h"
#include "PatternHighlighter.h"
#include "Selection.h"
#include "UserPatterns.h"

#include "lang/PatternLang.h"
#include "rewrite/Matcher.h"

#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include <fstream>

namespace fxlens::views {

namespace {

/// What a new editor holds: a small, complete pattern to start from.
const char *kTemplate = R"(# A pattern file (docs/PATTERNS.md).
# This one removes a cat of a single tensor.
name = "my_cat_single"
description = "cat([x]) -> x"

def pattern(x: Tensor, d: int):
    y = (torch.cat | aten.cat.default)([x], d)
    return y

def replacement(x):
    return x
)";

constexpr size_t kMaxListed = 500;

} // namespace

PatternEditor::PatternEditor(UserPatterns &patterns, QWidget *parent) : QWidget(parent), m_patterns(patterns)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    auto *buttons = new QHBoxLayout;
    auto *open = new QPushButton(tr("Open…"), this);
    auto *save = new QPushButton(tr("Save As…"), this);
    auto *add = new QPushButton(tr("Add to engine"), this);
    add->setToolTip(tr("Register this pattern for the rewrite debugger (preset: its labels, `user` by default)"));
    auto *docs = new QLabel(tr("<a href=\"%1\">Pattern language</a>").arg(PatternHighlighter::docsUrl()), this);
    docs->setObjectName(QStringLiteral("patternDocs"));
    docs->setToolTip(tr("docs/PATTERNS.md: settings, the pattern and replacement functions, constraints, examples"));
    docs->setOpenExternalLinks(true);
    buttons->addWidget(open);
    buttons->addWidget(save);
    buttons->addWidget(docs);
    buttons->addStretch(1);
    buttons->addWidget(add);
    layout->addLayout(buttons);

    auto *split = new QSplitter(Qt::Vertical, this);
    m_edit = new QPlainTextEdit(split);
    m_edit->setObjectName(QStringLiteral("patternSource"));
    m_edit->setFont(QFont(QStringLiteral("monospace")));
    m_edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_edit->installEventFilter(this); // Return keeps the line's indent, and indents after a ':'
    m_highlighter = new PatternHighlighter(m_edit->document());
    m_highlighter->setDark(palette().color(QPalette::Base).lightness() < 128);
    m_diag = new QTextBrowser(split);
    m_diag->setObjectName(QStringLiteral("patternDiagnostics"));
    m_diag->setLineWrapMode(QTextEdit::NoWrap);
    m_matchList = new QListWidget(split);
    m_matchList->setObjectName(QStringLiteral("patternMatches"));
    m_why = new QTextBrowser(split);
    m_why->setObjectName(QStringLiteral("whyNotHere"));
    split->addWidget(m_edit);
    split->addWidget(m_diag);
    split->addWidget(m_matchList);
    split->addWidget(m_why);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    split->setStretchFactor(2, 2);
    split->setStretchFactor(3, 1);
    layout->addWidget(split, 1);
    m_statusLabel = new QLabel(this);
    m_statusLabel->setWordWrap(true);
    layout->addWidget(m_statusLabel);

    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    m_timer->setInterval(300);
    connect(m_timer, &QTimer::timeout, this, [this] { compileNow(); });
    connect(m_edit, &QPlainTextEdit::textChanged, m_timer, qOverload<>(&QTimer::start));
    connect(m_matchList, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && size_t(row) < m_matches.size()) {
            const auto &m = m_matches[size_t(row)];
            Q_EMIT highlightRequested(std::vector<const ir::Node *>(m.nodes.begin(), m.nodes.end()), m.anchor);
        }
    });
    connect(open, &QPushButton::clicked, this, [this] {
        QString path = askOpenFile(this, tr("Open pattern file"), QString(), tr("Pattern files (*.fxpat);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    connect(save, &QPushButton::clicked, this, [this] {
        QString path = askSaveFile(this, tr("Save pattern file"), m_file, tr("Pattern files (*.fxpat)"));
        if (!path.isEmpty())
            saveFile(path);
    });
    connect(add, &QPushButton::clicked, this, [this] { addToEngine(); });
    setSource(QString::fromUtf8(kTemplate), QStringLiteral("untitled.fxpat"));
}

PatternEditor::~PatternEditor() = default;

void PatternEditor::changeEvent(QEvent *e)
{
    if (e->type() == QEvent::PaletteChange)
        m_highlighter->setDark(palette().color(QPalette::Base).lightness() < 128);
    QWidget::changeEvent(e);
}

void PatternEditor::setGraph(const ir::Graph *g)
{
    m_graph = g;
    m_why->clear();
    findMatches();
}

void PatternEditor::setSource(const QString &text, const QString &file)
{
    if (!file.isEmpty())
        m_file = file;
    {
        QSignalBlocker block(m_edit);
        m_edit->setPlainText(text);
    }
    compileNow();
}

QString PatternEditor::source() const { return m_edit->toPlainText(); }

bool PatternEditor::openFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        setStatus(tr("Cannot open %1: %2").arg(path, f.errorString()));
        return false;
    }
    setSource(QString::fromUtf8(f.readAll()), path);
    return true;
}

bool PatternEditor::saveFile(const QString &path)
{
    QSaveFile f(path); // atomic: the previous file stays until the new one is complete
    if (!f.open(QIODevice::WriteOnly) || f.write(source().toUtf8()) < 0 || !f.commit()) {
        setStatus(tr("Cannot write %1: %2").arg(path, f.errorString()));
        return false;
    }
    m_file = path;
    setStatus(tr("Saved %1").arg(path));
    return true;
}

bool PatternEditor::compileNow()
{
    m_timer->stop();
    const std::string text = source().toStdString();
    const std::string file = QFileInfo(m_file).fileName().toStdString();
    auto r = lang::compilePattern(text, file.empty() ? "untitled.fxpat" : file);
    QList<QTextEdit::ExtraSelection> marks;
    m_marked.clear();
    if (!r) {
        m_pattern.reset();
        const Diagnostic &d = r.error();
        m_diag->setLineWrapMode(QTextEdit::NoWrap); // the caret lines up under the source line
        m_diag->setPlainText(QString::fromStdString(lang::renderDiagnostic(d, text)));
        if (d.line > 0) {
            QTextEdit::ExtraSelection sel;
            sel.format.setBackground(QColor(255, 220, 220));
            sel.format.setProperty(QTextFormat::FullWidthSelection, true);
            sel.cursor = QTextCursor(m_edit->document()->findBlockByNumber(d.line - 1));
            marks.push_back(sel);
            m_marked.push_back(d.line);
        }
        m_edit->setExtraSelections(marks);
        setStatus(tr("Does not compile: %1").arg(QString::fromStdString(d.message)));
        findMatches();
        if (!m_explained.isEmpty())
            explainAt(m_explained);
        return false;
    }
    m_edit->setExtraSelections(marks);
    m_pattern = std::move(r.value());
    m_diag->setLineWrapMode(QTextEdit::WidgetWidth); // the status line wraps, never cut
    m_diag->setPlainText(
        tr("%1 compiles: %2, benefit %3%4")
            .arg(QString::fromStdString(m_pattern->name))
            .arg(counted(qint64(m_pattern->anchors.size()), "anchor"))
            .arg(m_pattern->benefit)
            .arg(m_pattern->description.empty() ? QString() : QStringLiteral(" — ") + QString::fromStdString(m_pattern->description)));
    findMatches();
    if (!m_explained.isEmpty())
        explainAt(m_explained);
    return true;
}

void PatternEditor::findMatches()
{
    m_matches.clear();
    QSignalBlocker block(m_matchList);
    m_matchList->clear();
    if (!m_pattern || !m_graph) {
        if (m_pattern)
            setStatus(tr("Open a graph to see matches"));
        return;
    }
    // The engine's matches (rewrite::findMatches: its rules and order; nothing is changed).
    const rewrite::Pattern *one[] = {m_pattern.get()};
    m_matches = rewrite::findMatches(*m_graph, one);
    size_t tried = 0;
    for (const ir::Node *n = m_graph->first(); n; n = n->next())
        tried += m_pattern->anchoredAt(*n);
    for (size_t i = 0; i < m_matches.size() && i < kMaxListed; ++i)
        m_matchList->addItem(QStringLiteral("%1: %2").arg(QString::fromStdString(m_matches[i].anchor->name()),
                                                          QString::fromStdString(m_matches[i].summary)));
    setStatus(tr("%1 at %2%3")
                  .arg(counted(qint64(m_matches.size()), "match"))
                  .arg(counted(qint64(tried), "anchor node"))
                  .arg(m_matches.size() > kMaxListed ? tr(" (first %1 listed)").arg(kMaxListed) : QString()));
}

QString PatternEditor::explainAt(const QString &node)
{
    m_explained = node; // explained again after each compile, so the answer never describes an old text
    if (!m_graph)
        return {};
    ir::Node *n = m_graph->find(node.toStdString());
    if (!n)
        return {};
    QString text;
    if (!m_pattern) {
        text = tr("%1: the pattern does not compile").arg(node);
    } else {
        const auto e = rewrite::explain(*m_pattern, *m_graph, n);
        text = QStringLiteral("%1: %2").arg(node, QString::fromStdString(e.toString()));
        if (e.anchor && !e.matched)
            text += QStringLiteral("\n  element:  %1\n  node:     %2\n  expected: %3\n  found:    %4")
                        .arg(QString::fromStdString(e.failure.element), QString::fromStdString(e.failure.node),
                             QString::fromStdString(e.failure.expected), QString::fromStdString(e.failure.found));
    }
    m_why->setPlainText(tr("Why (not) here — %1").arg(text));
    return text;
}

bool PatternEditor::addToEngine()
{
    if (!m_pattern) {
        setStatus(tr("Nothing to add: the pattern does not compile"));
        return false;
    }
    QString error, name;
    if (!m_patterns.add(source(), m_file, &error, &name)) {
        setStatus(error);
        return false;
    }
    QStringList labels;
    for (const auto &l : m_pattern->labels)
        labels << QString::fromStdString(l);
    setStatus(tr("%1 added to the engine (preset: %2); the rewrite history is kept").arg(name, labels.join(QStringLiteral(", "))));
    return true;
}

QString PatternEditor::diagnostics() const { return m_diag->toPlainText(); }

std::vector<int> PatternEditor::markedLines() const { return m_marked; }

void PatternEditor::setStatus(const QString &text)
{
    m_status = text;
    m_statusLabel->setText(text);
}

QString PatternEditor::status() const { return m_status; }

void PatternEditor::setSelection(Selection *selection)
{
    connect(selection, &Selection::nodeSelected, this, [this](const QString &name) {
        if (!name.isEmpty())
            explainAt(name);
    });
    connect(this, &PatternEditor::highlightRequested, selection, &Selection::highlight);
}

bool PatternEditor::eventFilter(QObject *watched, QEvent *e)
{
    if (watched != m_edit || e->type() != QEvent::KeyPress)
        return QWidget::eventFilter(watched, e);
    const auto *k = static_cast<QKeyEvent *>(e);
    if ((k->key() != Qt::Key_Return && k->key() != Qt::Key_Enter) || (k->modifiers() & ~Qt::KeypadModifier) != Qt::NoModifier)
        return QWidget::eventFilter(watched, e);
    // A new line starts where the one before it did, four spaces further after a block's opening
    // line (`def pattern(...):`), as a Python editor does.
    QTextCursor c = m_edit->textCursor();
    const QString before = c.block().text().left(c.positionInBlock());
    qsizetype n = 0;
    while (n < before.size() && (before[n] == QLatin1Char(' ') || before[n] == QLatin1Char('\t')))
        ++n;
    QString lead = before.left(n);
    if (before.section(QLatin1Char('#'), 0, 0).trimmed().endsWith(QLatin1Char(':')))
        lead += QStringLiteral("    ");
    c.insertText(QStringLiteral("\n") + lead);
    m_edit->setTextCursor(c);
    return true;
}

} // namespace fxlens::views
