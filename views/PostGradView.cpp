// SPDX-License-Identifier: MIT
// A compiled profile's post-grad graph, linked to the window by provenance (see PostGradView.h).
#include "PostGradView.h"

#include "GraphCanvas.h"
#include "KernelGroups.h"
#include "Selection.h"
#include "io/GraphJson.h"

#include <QEvent>
#include <QFileInfo>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace fxlens::views {

namespace {

QString joinedNames(const std::vector<std::string> &names, size_t most = 6)
{
    QStringList out;
    for (size_t i = 0; i < names.size() && i < most; ++i)
        out << QString::fromStdString(names[i]);
    if (names.size() > most)
        out << QStringLiteral("… (%1 in all)").arg(names.size());
    return out.join(QStringLiteral(", "));
}

} // namespace

PostGradView::PostGradView(std::unique_ptr<ir::Graph> graph, const prof::Profile &p, Selection &selection, QWidget *parent)
    : QWidget(parent), m_graph(std::move(graph)), m_selection(selection)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("postGradCaption"));
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_caption);
    m_canvas = new GraphCanvas(this);
    m_canvas->setObjectName(QStringLiteral("postGradCanvas"));
    m_canvas->setLegendVisible(false); // the window's canvas shows it: the same colours
    layout->addWidget(m_canvas, 1);

    for (const auto &[post, fx] : p.postGradNodes) {
        const ir::Node *pg = m_graph->find(post);
        auto &names = m_fxOf[post];
        for (const int i : fx) {
            names.push_back(p.nodes[size_t(i)].name);
            if (pg)
                m_fromFx[p.nodes[size_t(i)].name].push_back(pg);
        }
    }
    for (auto &[fx, nodes] : m_fromFx)
        std::sort(nodes.begin(), nodes.end(), [](const ir::Node *a, const ir::Node *b) { return a->id() < b->id(); });
    m_canvas->setGraph(m_graph.get());
    m_canvas->setKernelGroups(postGradKernelGroups(p, *m_graph));
    m_caption->setText(tr("Inductor's post-grad graph: %1 nodes, %2 traced to the FX graph. Select nodes here or in the FX graph.")
                           .arg(m_graph->size())
                           .arg(m_fxOf.size()));
    m_canvas->installEventFilter(this);

    connect(m_canvas, &GraphCanvas::nodeSelected, this, [this](const QString &name) { pickPostGrad(name); });
    connect(m_canvas, &GraphCanvas::kernelGroupClicked, this, [this](int g) {
        const auto &groups = m_canvas->kernelGroups();
        if (g >= 0 && size_t(g) < groups.size() && !groups[size_t(g)].kernels.empty())
            Q_EMIT kernelClicked(int(groups[size_t(g)].kernels.front()));
    });
    connect(m_canvas, &GraphCanvas::viewChanged, this, [this] {
        if (!m_syncing)
            m_autoFit = false;
    });
    connect(&m_selection, &Selection::currentNodeChanged, this, [this](const ir::Node *n) {
        if (!m_syncing)
            followWindow(n ? std::vector<std::string>{n->name()} : std::vector<std::string>{},
                         n ? QString::fromStdString(n->name()) : QString());
    });
    connect(&m_selection, &Selection::moduleSelected, this, [this](const QString &path) { followWindow(nodesOfModule(path), path); });
    // What is selected in the window now is outlined here at once and shown (showLinked, on the
    // first resize), else the graph's start at a readable zoom.
    const QString intro = m_caption->text();
    const QString module = m_selection.currentModule(), node = m_selection.currentNode();
    if (!module.isEmpty())
        link(nodesOfModule(module), module);
    else if (!node.isEmpty())
        link({node.toStdString()}, node);
    if (!module.isEmpty() || !node.isEmpty())
        m_caption->setText(intro + QStringLiteral("<br>") + m_caption->text());
}

std::vector<std::string> PostGradView::nodesOfModule(const QString &path) const
{
    std::vector<std::string> fx;
    const std::string p = path.toStdString(), prefix = p + ".";
    if (const ir::Graph *g = m_selection.graph())
        for (const ir::Node *n = g->first(); n; n = n->next())
            if (n->meta().modulePath() == p || n->meta().modulePath().rfind(prefix, 0) == 0)
                fx.push_back(n->name());
    return fx;
}

PostGradView::~PostGradView() = default;

std::vector<const ir::Node *> PostGradView::fromFx(const std::string &fx) const
{
    const auto it = m_fromFx.find(fx);
    return it == m_fromFx.end() ? std::vector<const ir::Node *>{} : it->second;
}

QStringList PostGradView::fxOf(const QString &name) const
{
    QStringList out;
    if (const auto it = m_fxOf.find(name.toStdString()); it != m_fxOf.end())
        for (const auto &n : it->second)
            out << QString::fromStdString(n);
    return out;
}

int PostGradView::readableWidth() const
{
    double left = 0, right = 0;
    for (const auto &it : m_canvas->view().items) {
        left = &it == &m_canvas->view().items.front() ? it.x : std::min(left, it.x);
        right = std::max(right, it.x + it.w);
    }
    const QMargins m = layout()->contentsMargins();
    return int(std::ceil((right - left) * kReadable)) + 2 * 16 + m.left() + m.right(); // (and the canvas' margin for an edge)
}

QString PostGradView::caption() const { return m_caption->text(); }

void PostGradView::followWindow(const std::vector<std::string> &fx, const QString &what)
{
    // A selection made elsewhere drops what this view outlined in the window.
    if (!m_pushed.empty() && m_selection.highlighted() == m_pushed) {
        m_pushed.clear();
        m_syncing = true;
        m_selection.highlight({}, nullptr);
        m_syncing = false;
    }
    link(fx, what);
    m_autoFit = true;
    showLinked();
}

void PostGradView::link(const std::vector<std::string> &fx, const QString &what)
{
    m_linked.clear();
    for (const auto &n : fx)
        for (const ir::Node *pg : fromFx(n))
            if (std::find(m_linked.begin(), m_linked.end(), pg) == m_linked.end())
                m_linked.push_back(pg);
    std::sort(m_linked.begin(), m_linked.end(), [](const ir::Node *a, const ir::Node *b) { return a->id() < b->id(); });
    m_canvas->setHighlight(m_linked, m_linked.empty() ? nullptr : m_linked.back());
    if (what.isEmpty())
        m_caption->setText(tr("Select nodes here or in the FX graph: the other side follows by provenance."));
    else if (m_linked.empty())
        m_caption->setText(tr("<b>%1</b>: no post-grad node comes from it").arg(what.toHtmlEscaped()));
    else {
        std::vector<std::string> names;
        for (const ir::Node *n : m_linked)
            names.push_back(n->name());
        m_caption->setText(tr("<b>%1</b> → post-grad %2").arg(what.toHtmlEscaped(), joinedNames(names).toHtmlEscaped()));
    }
}

bool PostGradView::pickPostGrad(const QString &name)
{
    const ir::Node *pg = m_graph->find(name.toStdString());
    if (!pg)
        return false;
    m_syncing = true;
    if (m_canvas->selectedLabel() != name) // (a click selected it already, where it is)
        m_canvas->selectNode(name);
    std::vector<const ir::Node *> fx;
    for (const QString &n : fxOf(name))
        if (const ir::Node *node = m_selection.find(n))
            fx.push_back(node);
    m_linked = {pg};
    m_canvas->setHighlight(m_linked, pg);
    m_pushed = fx;
    // The FX nodes outlined in the window, the last one (where the value leaves) selected there.
    m_selection.highlight(fx, fx.empty() ? nullptr : fx.back());
    m_syncing = false;
    m_caption->setText(
        fx.empty() ? tr("post-grad <b>%1</b>: no FX node of the graph is recorded for it").arg(name.toHtmlEscaped())
                   : tr("post-grad <b>%1</b> ← %2").arg(name.toHtmlEscaped(), fxOf(name).join(QStringLiteral(", ")).toHtmlEscaped()));
    return true;
}

void PostGradView::showKernel(int kernel)
{
    m_canvas->setSelectedKernelGroup(kernel < 0 ? -1 : groupOfKernel(m_canvas->kernelGroups(), uint32_t(kernel)));
}

void PostGradView::showLinked()
{
    m_syncing = true;
    if (!m_linked.empty())
        m_canvas->revealNodes(m_linked);
    // The linked nodes (none: the whole graph) fitted at a readable zoom, else their start, with
    // no node cut at the canvas' edges.
    m_canvas->showNodes(m_linked, kReadable);
    m_syncing = false;
}

bool PostGradView::eventFilter(QObject *watched, QEvent *e)
{
    // A dock being dragged resizes the canvas many times a second: one refit for the events
    // queued together (showNodes tries several zooms, each settled).
    if (watched == m_canvas && e->type() == QEvent::Resize && m_autoFit && !m_refitQueued) {
        m_refitQueued = true;
        QTimer::singleShot(0, this, [this] {
            m_refitQueued = false;
            if (m_autoFit)
                showLinked();
        });
    }
    return QWidget::eventFilter(watched, e);
}

QString postGradUnavailable(const prof::Profile *p)
{
    if (!p || !p->compiled())
        return QObject::tr("Open a compiled profile (fxlens-cli profile --compiled) of this graph first");
    if (p->postGradGraph.empty())
        return QObject::tr("This compiled profile records no post-grad graph (profile it again with fxlens-cli profile --compiled -o)");
    const QString file = QString::fromStdString(p->postGradGraph);
    if (!QFileInfo::exists(file))
        return QObject::tr("The post-grad graph %1 is missing (it is saved beside the profile)").arg(file);
    return {};
}

PostGradView *openPostGradView(const prof::Profile &p, Selection &selection, QWidget *parent, QString *error)
{
    if (const QString why = postGradUnavailable(&p); !why.isEmpty()) {
        *error = why;
        return nullptr;
    }
    auto g = io::readGraphFile(p.postGradGraph);
    if (!g) {
        *error = QObject::tr("Cannot open the post-grad graph: %1").arg(QString::fromStdString(g.error().toString()));
        return nullptr;
    }
    return new PostGradView(std::move(g.value()), p, selection, parent);
}

} // namespace fxlens::views
