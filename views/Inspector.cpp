// SPDX-License-Identifier: MIT
#include "Inspector.h"

#include "GraphDocument.h"
#include "Selection.h"

#include "ir/ModuleRange.h"
#include "ir/Target.h"
#include "layout/Layered.h"

#include <QEvent>
#include <QTextBlock>
#include <QTextCursor>
#include <QUrl>

#include <functional>
#include <set>
#include <vector>

namespace fxlens::views {

namespace {

QString escaped(const std::string &s) { return QString::fromStdString(s).toHtmlEscaped(); }
QString link(const ir::Node *m) { return QStringLiteral("<a href=\"node:%1\">%1</a>").arg(escaped(m->name())); }

QString argHtml(const ir::Argument &a)
{
    if (a.isNode())
        return link(a.toNode());
    if (a.isSequence()) {
        QString out = QStringLiteral("[");
        for (size_t i = 0; i < a.items().size(); ++i)
            out += (i ? QStringLiteral(", ") : QString()) + argHtml(a.items()[i]);
        return out + QStringLiteral("]");
    }
    return escaped(a.toString());
}

/// The class of module `path` as the canvas names its box: the graph's record of the module, else
/// the class its nodes' module frames carry (a range such as "blocks.0–49.linear", made by a
/// rewrite or a stack of siblings, has the class of the modules it names).
std::string moduleClass(const ir::Graph &g, const std::string &path)
{
    if (const ir::ModuleInfo *m = g.module(path); m && !m->type.empty())
        return m->type;
    for (const ir::Node *n = g.first(); n; n = n->next())
        for (const auto &f : layout::displayModules(n))
            if (!f.type.empty() && (f.path == path || ir::rangeContains(path, f.path)))
                return f.type;
    return {};
}

} // namespace

Inspector::Inspector(QWidget *parent) : QTextBrowser(parent)
{
    setObjectName(QStringLiteral("inspector"));
    setOpenLinks(false);
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl &url) {
        if (url.scheme() == QLatin1String("node"))
            Q_EMIT nodeRequested(url.path());
    });
    updateLinkColor();
}

void Inspector::setSelection(Selection *selection, std::function<QString(const std::string &)> profileStats)
{
    connect(selection, &Selection::currentNodeChanged, this,
            [this, profileStats](const ir::Node *n) { showNode(n, n && profileStats ? profileStats(n->name()) : QString()); });
    connect(selection, &Selection::moduleSelected, this, [this, selection](const QString &path) {
        if (const ir::Graph *g = selection->graph())
            showModule(*g, path);
    });
    connect(this, &Inspector::nodeRequested, selection, &Selection::selectNode);
}

void Inspector::setDocument(GraphDocument *doc)
{
    connect(doc, &GraphDocument::replaced, this, &Inspector::clear);
    connect(doc, &GraphDocument::changed, this, &Inspector::clear);
}

void Inspector::changeEvent(QEvent *e)
{
    if (e->type() == QEvent::PaletteChange)
        updateLinkColor();
    QTextBrowser::changeEvent(e);
}

void Inspector::updateLinkColor()
{
    const QColor color = palette().color(QPalette::Link);
    document()->setDefaultStyleSheet(QStringLiteral("a { color: %1; }").arg(color.name()));
    // What is on screen already (laid out with the previous colours) takes the new colour too.
    QTextCharFormat linkFormat;
    linkFormat.setForeground(color);
    std::vector<std::pair<int, int>> links; // (position, length), collected before the document changes
    for (QTextBlock b = document()->begin(); b.isValid(); b = b.next())
        for (auto it = b.begin(); !it.atEnd(); ++it)
            if (it.fragment().charFormat().isAnchor())
                links.emplace_back(it.fragment().position(), it.fragment().length());
    for (const auto &[position, length] : links) {
        QTextCursor c(document());
        c.setPosition(position);
        c.setPosition(position + length, QTextCursor::KeepAnchor);
        c.mergeCharFormat(linkFormat);
    }
}

void Inspector::showNode(const ir::Node *n, const QString &profile)
{
    if (!n) {
        clear();
        return;
    }
    QString html = QStringLiteral("<h3>%1</h3><table>").arg(escaped(n->name()));
    auto row = [&](const QString &k, const QString &v) { html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v); };
    row(tr("op"), QString::fromLatin1(ir::opKindName(n->op())));
    row(tr("target"), escaped(n->target()));
    QString args;
    for (const auto &a : n->args())
        args += argHtml(a) + QStringLiteral("<br>");
    row(tr("args"), args);
    QString kwargs;
    for (const auto &[k, v] : n->kwargs())
        kwargs += escaped(k) + QStringLiteral(" = ") + argHtml(v) + QStringLiteral("<br>");
    row(tr("kwargs"), kwargs);
    QString users;
    for (const auto *u : n->users())
        users += link(u) + QStringLiteral(" ");
    row(tr("users"), users);
    row(tr("value"), escaped(n->meta().val.toString()));
    if (n->meta().val.isTensor()) {
        QString stride;
        for (auto s : n->meta().val.tensor.stride)
            stride += QString::number(s) + QStringLiteral(" ");
        row(tr("stride"), stride);
    }
    row(tr("module"), escaped(n->meta().modulePath()));
    if (!profile.isEmpty())
        row(tr("profile"), profile.toHtmlEscaped());
    if (n->meta().provenance)
        row(tr("provenance"),
            escaped(n->meta().provenance->pattern) + QStringLiteral(" @ step ") + QString::number(n->meta().provenance->step));
    html += QStringLiteral("</table>");
    if (!n->meta().stackTrace.empty())
        html += QStringLiteral("<pre style=\"white-space: pre-wrap\">%1</pre>").arg(escaped(n->meta().stackTrace));
    setHtml(html);
}

bool Inspector::showModule(const ir::Graph &g, const QString &qpath)
{
    const std::string path = qpath.toStdString();
    std::vector<const ir::Node *> inside;
    for (const ir::Node *n = g.first(); n; n = n->next())
        if (layout::inModule(n, path))
            inside.push_back(n);
    if (inside.empty())
        return false;
    const std::set<const ir::Node *> in(inside.begin(), inside.end());
    // Inputs: nodes outside the module that its nodes read; outputs: its nodes read from outside.
    std::vector<const ir::Node *> inputs, outputs;
    std::set<const ir::Node *> seenIn;
    for (const ir::Node *n : inside) {
        for (const ir::Node *x : n->inputNodes())
            if (!in.count(x) && seenIn.insert(x).second)
                inputs.push_back(x);
        for (const ir::Node *u : n->users())
            if (!in.count(u)) {
                outputs.push_back(n);
                break;
            }
    }
    const ir::ModuleInfo *m = g.module(path);
    const std::string type = moduleClass(g, path);
    QString html = QStringLiteral("<h3>%1</h3><table>").arg(escaped(path.empty() ? std::string("<root>") : path));
    auto row = [&](const QString &k, const QString &v) { html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v); };
    row(tr("module"),
        !type.empty() ? escaped(std::string(ir::lastComponent(type))) + QStringLiteral(" (") + escaped(type) + QStringLiteral(")")
                      : tr("(class not recorded)"));
    row(tr("nodes"), QString::fromStdString(layout::moduleNodeCount(g, path).text()));
    auto list = [&](const std::vector<const ir::Node *> &v) {
        QString s;
        for (size_t i = 0; i < v.size() && i < 40; ++i)
            s += link(v[i]) + QStringLiteral(" ");
        if (v.size() > 40)
            s += tr("… %1 more").arg(v.size() - 40);
        return s;
    };
    row(tr("inputs"), list(inputs));
    row(tr("outputs"), list(outputs));
    if (m)
        for (const auto &[k, v] : m->attrs)
            row(escaped(k), escaped(v.toString()));
    html += QStringLiteral("</table>");
    setHtml(html);
    return true;
}

} // namespace fxlens::views
