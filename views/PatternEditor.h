// SPDX-License-Identifier: MIT
// PatternEditor: write a pattern file (docs/PATTERNS.md) against the open graph. It compiles as you
// type (a short pause after the last key); errors are listed with file:line:col and a caret, and
// their line is marked in the editor; a pattern that compiles lists its matches in this graph (pick
// one to outline it on the canvas). "Why not here" explains the node selected on the canvas: match,
// not an anchor, or the first element that failed with what was expected and found. "Add to engine"
// registers the pattern (label `user` unless it has labels) for the rewrite debugger, through the
// document's UserPatterns: the rewrite history stays, and the pattern is kept with the settings.
#pragma once

#include "ir/Graph.h"
#include "rewrite/Pattern.h"

#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QTextBrowser;
class QTimer;

namespace fxlens::lang {
class FilePattern;
}

namespace fxlens::views {

class Selection;
class UserPatterns;
class PatternHighlighter;

class PatternEditor : public QWidget {
    Q_OBJECT
public:
    explicit PatternEditor(UserPatterns &patterns, QWidget *parent = nullptr);
    ~PatternEditor() override;

    void setGraph(const ir::Graph *g);
    /// Replaces the text (and compiles it now). `file` names it in diagnostics.
    void setSource(const QString &text, const QString &file = QString());
    QString source() const;
    bool openFile(const QString &path);
    bool saveFile(const QString &path);
    /// Compiles the text now (typing does this after a pause); true when it compiled.
    bool compileNow();
    /// "Why not here" for a node of the graph; also shown in the panel.
    QString explainAt(const QString &node);
    /// Explains the pattern at each node selected; a match picked is highlighted.
    void setSelection(Selection *selection);
    /// Registers the compiled pattern in the engine's registry (replacing an earlier user pattern of
    /// the same name; the rewrite history stays); false with the reason in status().
    bool addToEngine();

    // --- state ---
    bool compiled() const { return m_pattern != nullptr; }
    QString diagnostics() const;
    /// Line numbers (1-based) marked as errors in the editor.
    std::vector<int> markedLines() const;
    int matchCount() const { return int(m_matches.size()); }
    QString status() const;
    QListWidget *matchList() const { return m_matchList; }
    QPlainTextEdit *editor() const { return m_edit; }
    PatternHighlighter *highlighter() const { return m_highlighter; }

Q_SIGNALS:
    void highlightRequested(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);

protected:
    void changeEvent(QEvent *e) override;
    bool eventFilter(QObject *watched, QEvent *e) override;

private:
    void findMatches();
    void setStatus(const QString &text);

    UserPatterns &m_patterns;
    const ir::Graph *m_graph = nullptr;
    std::unique_ptr<lang::FilePattern> m_pattern;
    std::vector<rewrite::Match> m_matches;
    QString m_file;
    QString m_explained; ///< the node the "why" panel explains (re-explained after each compile)
    QString m_status;
    std::vector<int> m_marked;

    QPlainTextEdit *m_edit = nullptr;
    QTextBrowser *m_diag = nullptr;
    QListWidget *m_matchList = nullptr;
    QLabel *m_statusLabel = nullptr;
    QTextBrowser *m_why = nullptr;
    QTimer *m_timer = nullptr;
    PatternHighlighter *m_highlighter = nullptr;
};

} // namespace fxlens::views
