// SPDX-License-Identifier: MIT
// PatternHighlighter: colours a pattern file (.fxpat, docs/PATTERNS.md) as it is typed: keywords,
// the top-level settings, strings, numbers, comments and the op namespaces (torch., aten., operator.),
// in a light or a dark set of colours.
#pragma once

#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace fxlens::views {

class PatternHighlighter : public QSyntaxHighlighter {
public:
    enum class Token { Keyword, Setting, String, Number, Comment, Namespace, Type };
    explicit PatternHighlighter(QTextDocument *doc);
    /// The colours for a dark background (or a light one); the text is coloured again.
    void setDark(bool dark);
    QTextCharFormat format(Token t) const;
    /// Where the pattern language is described: the installed docs, the source tree's, or the web.
    static QString docsUrl();

protected:
    void highlightBlock(const QString &text) override;

private:
    bool m_dark = false;
};

} // namespace fxlens::views
