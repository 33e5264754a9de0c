// SPDX-License-Identifier: MIT
#include "PatternHighlighter.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

namespace fxlens::views {

PatternHighlighter::PatternHighlighter(QTextDocument *doc) : QSyntaxHighlighter(doc) {}

void PatternHighlighter::setDark(bool dark)
{
    if (dark == m_dark)
        return;
    m_dark = dark;
    rehighlight();
}

QTextCharFormat PatternHighlighter::format(Token t) const
{
    QTextCharFormat f;
    switch (t) {
    case Token::Keyword:
        f.setForeground(m_dark ? QColor(0xc6, 0x95, 0xff) : QColor(0x8a, 0x22, 0xb8));
        f.setFontWeight(QFont::Bold);
        break;
    case Token::Setting: f.setForeground(m_dark ? QColor(0x7e, 0xc8, 0xe3) : QColor(0x00, 0x5c, 0xc5)); break;
    case Token::String: f.setForeground(m_dark ? QColor(0xa5, 0xd6, 0x8a) : QColor(0x1a, 0x7f, 0x37)); break;
    case Token::Number: f.setForeground(m_dark ? QColor(0xf2, 0xb4, 0x82) : QColor(0x95, 0x38, 0x00)); break;
    case Token::Comment:
        f.setForeground(m_dark ? QColor(0x9a, 0x9a, 0xa0) : QColor(0x6e, 0x77, 0x81));
        f.setFontItalic(true);
        break;
    case Token::Namespace: f.setForeground(m_dark ? QColor(0x82, 0xaa, 0xff) : QColor(0x0b, 0x4f, 0x9c)); break;
    case Token::Type: f.setForeground(m_dark ? QColor(0xe5, 0xc0, 0x7b) : QColor(0x7d, 0x4e, 0x00)); break;
    }
    return f;
}

void PatternHighlighter::highlightBlock(const QString &text)
{
    // The vocabulary of core/lang (Syntax.cpp): Python's statements and operators that a pattern uses.
    static const QRegularExpression rules[] = {
        QRegularExpression(QStringLiteral(R"(\b(def|return|assert|pass|and|or|not|in|is|if|else|for|lambda|None|True|False)\b)")),
        QRegularExpression(QStringLiteral(R"(^(name|level|benefit|labels|description|phase)\b(?=\s*=))")),
        QRegularExpression(QStringLiteral(R"(\b(torch|aten|operator|prims|math)(?=\.))")),
        QRegularExpression(QStringLiteral(R"((?<=:)\s*(Tensor|int|float|bool|str|list|tuple)\b)")),
        QRegularExpression(QStringLiteral(R"(\b(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\b)")),
    };
    static const Token tokens[] = {Token::Keyword, Token::Setting, Token::Namespace, Token::Type, Token::Number};
    for (size_t r = 0; r < std::size(rules); ++r)
        for (auto it = rules[r].globalMatch(text); it.hasNext();) {
            const auto m = it.next();
            setFormat(int(m.capturedStart(1)), int(m.capturedLength(1)), format(tokens[r]));
        }
    // Strings and comments last: what is inside them is not a keyword. A # inside a string is text.
    static const QRegularExpression stringOrComment(QStringLiteral(R"("(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|#.*$)"));
    for (auto it = stringOrComment.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        const bool comment = m.captured().startsWith(QLatin1Char('#'));
        setFormat(int(m.capturedStart()), int(m.capturedLength()), format(comment ? Token::Comment : Token::String));
    }
}

QString PatternHighlighter::docsUrl()
{
    const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/doc/fxlens/PATTERNS.md");
    for (const QString &path : {installed, QStringLiteral(FXLENS_SOURCE_DOCS "/PATTERNS.md")})
        if (QFileInfo::exists(path))
            return QUrl::fromLocalFile(QDir::cleanPath(path)).toString();
    return QStringLiteral("https://github.com/fxlens/fxlens/blob/main/docs/PATTERNS.md");
}

} // namespace fxlens::views
