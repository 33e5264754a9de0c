// SPDX-License-Identifier: MIT
// Two versions side by side (see CompareView.h).
#include "CompareView.h"

#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "ir/Printer.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include <unordered_map>

namespace fxlens::views {

namespace {

/// A node's identity across versions: its name (FX names are unique and kept by rewrites for the
/// nodes they do not touch); what it computes: its printed form.
std::unordered_map<std::string, const ir::Node *> byName(const ir::Graph &g)
{
    std::unordered_map<std::string, const ir::Node *> out;
    for (const ir::Node *n = g.first(); n; n = n->next())
        out.emplace(n->name(), n);
    return out;
}

} // namespace

CompareView::CompareView(std::unique_ptr<ir::Graph> a, const QString &labelA, std::unique_ptr<ir::Graph> b, const QString &labelB,
                         QWidget *parent)
    : QWidget(parent), m_a(std::move(a)), m_b(std::move(b))
{
    setWindowTitle(tr("Compare: %1 ↔ %2").arg(labelA, labelB));
    auto *layout = new QVBoxLayout(this);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("compareSummary"));
    layout->addWidget(m_summary);
    auto *split = new QSplitter(Qt::Horizontal, this);
    auto side = [&](const QString &label, GraphCanvas *&canvas) {
        auto *w = new QWidget(split);
        auto *l = new QVBoxLayout(w);
        l->setContentsMargins(0, 0, 0, 0);
        l->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(label.toHtmlEscaped()), w));
        canvas = new GraphCanvas(w);
        l->addWidget(canvas, 1);
        split->addWidget(w);
    };
    side(tr("A: %1").arg(labelA), m_left);
    side(tr("B: %1").arg(labelB), m_right);
    layout->addWidget(split, 1);
    resize(1400, 850);
    m_left->setGraph(m_a.get());
    m_right->setGraph(m_b.get());
    // The difference by provenance.
    const auto inA = byName(*m_a), inB = byName(*m_b);
    std::vector<std::pair<const ir::Node *, GraphCanvas::DiffMark>> marksA, marksB;
    for (const auto &[name, n] : inA) {
        auto it = inB.find(name);
        if (it == inB.end()) {
            marksA.push_back({n, GraphCanvas::DiffMark::Removed});
            ++m_removed;
        } else if (ir::printNode(*n) != ir::printNode(*it->second)) {
            marksA.push_back({n, GraphCanvas::DiffMark::Changed});
            marksB.push_back({it->second, GraphCanvas::DiffMark::Changed});
            ++m_changed;
        }
    }
    for (const auto &[name, n] : inB)
        if (!inA.count(name)) {
            marksB.push_back({n, GraphCanvas::DiffMark::Added});
            ++m_added;
        }
    m_left->setDiffMarks(marksA);
    m_right->setDiffMarks(marksB);
    m_summary->setText(summary());
    connect(m_left, &GraphCanvas::viewChanged, this, [this] { follow(m_left, m_right, *m_b); });
    connect(m_right, &GraphCanvas::viewChanged, this, [this] { follow(m_right, m_left, *m_a); });
}

CompareView::~CompareView()
{
    // The canvases point into the graphs this view owns: they let go first.
    m_left->setGraph(nullptr);
    m_right->setGraph(nullptr);
}

QString CompareView::summary() const
{
    return tr("<span style=\"background:#f4a6a6\">&nbsp;%1 removed&nbsp;</span> · <span style=\"background:#a5e3a8\">&nbsp;%2 "
              "added&nbsp;</span> · <span style=\"background:#ffd98a\">&nbsp;%3 changed&nbsp;</span> · %4 → %5 nodes. Navigation is "
              "synchronized by node.")
        .arg(m_removed)
        .arg(m_added)
        .arg(m_changed)
        .arg(m_a->size())
        .arg(m_b->size());
}

/// Shows in `to` the node `from` has at its centre (the nearest item with a counterpart), at the
/// same zoom.
void CompareView::follow(GraphCanvas *from, GraphCanvas *to, const ir::Graph &toGraph)
{
    if (m_syncing)
        return;
    m_syncing = true;
    const QPointF c = from->viewCentre();
    const auto &v = from->view();
    const auto &tv = to->view();
    std::unordered_map<std::string, int> boxes; // module boxes of `to` by label
    for (size_t k = 0; k < tv.items.size(); ++k)
        if (tv.items[k].kind == layout::ViewItem::Kind::Module)
            boxes.emplace(tv.items[k].label, int(k));
    double best = 1e300;
    QPointF target = to->viewCentre();
    for (const auto &it : v.items) {
        const double dx = it.x + it.w / 2 - c.x(), dy = it.y + it.h / 2 - c.y(), d = dx * dx + dy * dy;
        if (d >= best)
            continue;
        // Its counterpart: the same node, or the same module box.
        int other = -1;
        if (it.node) {
            if (const ir::Node *n = toGraph.find(it.node->name()); n && n->id() < tv.itemOfNode.size())
                other = tv.itemOfNode[n->id()];
        } else if (auto b = boxes.find(it.label); b != boxes.end()) {
            other = b->second;
        }
        if (other < 0)
            continue;
        best = d;
        const auto &o = tv.items[size_t(other)];
        target = QPointF(o.x + o.w / 2 + dx, o.y + o.h / 2 + dy);
    }
    to->setView(from->scale(), target);
    m_syncing = false;
}

CompareView *compareVersions(GraphDocument &doc, int a, int b, QWidget *parent, QString *error)
{
    auto *h = doc.history();
    auto copies = h->copyVersions({a, b}, error);
    if (copies.size() != 2)
        return nullptr;
    auto *view = new CompareView(std::move(copies[0].graph), QString::fromStdString(copies[0].label), std::move(copies[1].graph),
                                 QString::fromStdString(copies[1].label), parent);
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    return view;
}

} // namespace fxlens::views
