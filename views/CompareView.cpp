// SPDX-License-Identifier: MIT
// Two versions side by side (see CompareView.h).
#include "CompareView.h"

#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "RewriteHistory.h"
#include "RewriteModels.h"
#include "ir/Printer.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineF>
#include <QListView>
#include <QMouseEvent>
#include <QPushButton>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace fxlens::views {

namespace {

/// A node's identity across versions: its name (FX names are unique and kept by rewrites for the
/// nodes they do not touch) in its module (a rewrite may give a freed name to a new node elsewhere:
/// that is another node); what it computes: its printed form.
std::unordered_map<std::string, const ir::Node *> byName(const ir::Graph &g)
{
    std::unordered_map<std::string, const ir::Node *> out;
    for (const ir::Node *n = g.first(); n; n = n->next())
        out.emplace(n->name(), n);
    return out;
}

/// The node of `other` that is `n` (by identity), or nullptr.
const ir::Node *counterpart(const ir::Node *n, const std::unordered_map<std::string, const ir::Node *> &other)
{
    const auto it = other.find(n->name());
    return it != other.end() && it->second->meta().modulePath() == n->meta().modulePath() ? it->second : nullptr;
}

/// A node drawn in both panes: where it is in A's scene, the shift to where it is in B's, and (for
/// the alignment at it) how large the shown nodes of both together are against the pane, and how
/// far it is from the middles of both sides of the change.
struct Anchor {
    QPointF at, shift;
    QRectF box; ///< the node's, in A's scene
    double cost = 0, distance = 0;
};

/// The node to align both panes at: among those whose alignment lets the change be shown whole at
/// a readable zoom (or, when none does, the most compact), the one that lines up the most nodes
/// of the change's neighbourhood (`near`: theirs is the same shift), then the most compact, then
/// the nearest to the change.
/// Nodes whose shifts differ by less (scene pixels) line up to the eye: a node one row moved a
/// few pixels by the layout (a wider neighbour) still stands where it stood.
constexpr double kSameShift = 8;
/// The other alignments the placement weighs (otherAlignments), at most.
constexpr size_t kOtherAlignments = 6;

const Anchor *bestAnchor(const std::vector<Anchor> &candidates, const QRectF &near)
{
    double least = 1e300;
    for (const Anchor &c : candidates)
        least = std::min(least, c.cost);
    const double fits = std::max(least * 1.001, 0.85 / CompareView::kReadableScale); // the pane's margins and legend aside
    const Anchor *best = nullptr;
    int bestCount = -1;
    for (const Anchor &c : candidates) {
        if (c.cost > fits)
            continue;
        int count = 0;
        for (const Anchor &o : candidates)
            count +=
                near.contains(o.at) && std::abs(o.shift.x() - c.shift.x()) < kSameShift && std::abs(o.shift.y() - c.shift.y()) < kSameShift;
        if (!best || count > bestCount ||
            (count == bestCount && (c.cost < best->cost * 0.999 || (c.cost <= best->cost * 1.001 && c.distance < best->distance)))) {
            best = &c;
            bestCount = count;
        }
    }
    return best;
}

/// The alignments at other nodes of the change's neighbourhood (`near`) than `best` (each shift
/// once, with the node's rectangle), the nearest to the change first: where aligning at `best`
/// leaves what lies around the change cut at a pane's edge, aligning at one of these may not.
std::vector<std::pair<QRectF, QPointF>> otherAlignments(const std::vector<Anchor> &candidates, const Anchor &best, const QRectF &near)
{
    std::vector<const Anchor *> order;
    for (const Anchor &c : candidates)
        if (near.contains(c.at))
            order.push_back(&c);
    std::sort(order.begin(), order.end(), [](const Anchor *x, const Anchor *y) { return x->distance < y->distance; });
    std::vector<std::pair<QRectF, QPointF>> out;
    const auto same = [](QPointF x, QPointF y) { return std::abs(x.x() - y.x()) < kSameShift && std::abs(x.y() - y.y()) < kSameShift; };
    for (const Anchor *c : order)
        if (out.size() < kOtherAlignments && !same(c->shift, best.shift) &&
            std::none_of(out.begin(), out.end(), [&](const auto &o) { return same(o.second, c->shift); }))
            out.emplace_back(c->box, c->shift);
    return out;
}

/// The title plates of the frames around these nodes (scene), by depth, innermost first: what
/// says which module the nodes are in.
std::vector<std::pair<int, QRectF>> titlesAround(const GraphCanvas &c, const std::vector<const ir::Node *> &nodes)
{
    std::vector<std::pair<int, QRectF>> out;
    for (const auto &f : c.frames())
        for (const ir::Node *n : nodes)
            if (const int i = c.itemOf(n); i >= 0) {
                const auto &it = c.view().items[size_t(i)];
                if (f.rect.contains(QRectF(it.x, it.y, it.w, it.h))) {
                    out.emplace_back(f.depth, f.titlePlate());
                    break;
                }
            }
    std::sort(out.begin(), out.end(), [](const auto &x, const auto &y) { return x.first > y.first; });
    return out;
}

} // namespace

CompareView::CompareView(std::unique_ptr<ir::Graph> a, const QString &labelA, std::unique_ptr<ir::Graph> b, const QString &labelB,
                         QWidget *parent)
    : QWidget(parent), m_a(std::move(a)), m_b(std::move(b))
{
    setWindowTitle(tr("Compare: %1 ↔ %2").arg(labelA, labelB));
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QHBoxLayout;
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("compareSummary"));
    m_summary->setWordWrap(true); // it makes room for the position's note
    // How the panes move together: the header stays one line, the position's note whole.
    m_summary->setToolTip(tr("Expanding, zooming and panning one side moves the other."));
    bar->addWidget(m_summary, 1);
    auto button = [&](const QString &text, const QString &name, const QList<QKeySequence> &keys, auto fn) {
        auto *act = new QAction(text, this);
        act->setObjectName(name);
        act->setShortcuts(keys);
        act->setShortcutContext(Qt::WindowShortcut);
        act->setToolTip(QStringLiteral("%1 (%2)").arg(text, keys.front().toString(QKeySequence::NativeText)));
        connect(act, &QAction::triggered, this, fn);
        addAction(act);
        auto *b = new QToolButton(this);
        b->setDefaultAction(act);
        bar->addWidget(b);
        return act;
    };
    button(tr("◀ Previous change"), QStringLiteral("previousChange"),
           {QKeySequence(Qt::SHIFT | Qt::Key_N), QKeySequence(Qt::SHIFT | Qt::Key_F8)}, [this] { previousChange(); });
    m_position = new QLabel(this);
    m_position->setObjectName(QStringLiteral("comparePosition"));
    bar->addWidget(m_position);
    button(tr("Next change ▶"), QStringLiteral("nextChange"), {QKeySequence(Qt::Key_N), QKeySequence(Qt::Key_F8)},
           [this] { nextChange(); });
    button(tr("All changes"), QStringLiteral("fitChanges"), {QKeySequence(Qt::Key_A)}, [this] { fitToChanges(); });
    QAction *minimap = button(tr("Minimap"), QStringLiteral("minimap"), {QKeySequence(Qt::Key_M)}, [this](bool on) {
        m_left->setMinimapVisible(on);
        m_right->setMinimapVisible(on);
    });
    minimap->setCheckable(true);
    auto *close = new QAction(tr("Close"), this);
    close->setShortcut(QKeySequence(Qt::Key_Escape));
    connect(close, &QAction::triggered, this, &QWidget::close);
    addAction(close);
    layout->addLayout(bar);
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
    split->setSizes({700, 700}); // panes of one size: the changes at one offset in both
    for (GraphCanvas *c : {m_left, m_right})
        c->setMinimapVisible(false);
    m_left->setGraph(m_a.get());
    m_right->setGraph(m_b.get());
    markDifference();
    m_left->installEventFilter(this);
    m_right->installEventFilter(this);
    m_summary->setText(summary());
    updatePosition();
    connect(m_left, &GraphCanvas::viewChanged, this, [this] { follow(m_left, m_right, *m_b); });
    connect(m_right, &GraphCanvas::viewChanged, this, [this] { follow(m_right, m_left, *m_a); });
    connect(m_left, &GraphCanvas::moduleToggled, this, [this](const QString &m, bool on) { mirrorExpansion(m_right, m, on); });
    connect(m_right, &GraphCanvas::moduleToggled, this, [this](const QString &m, bool on) { mirrorExpansion(m_left, m, on); });
    connect(m_left, &GraphCanvas::stackUnstacked, this, [this](const QString &first) { mirrorUnstack(m_right, first); });
    connect(m_right, &GraphCanvas::stackUnstacked, this, [this](const QString &first) { mirrorUnstack(m_left, first); });
}

CompareView::~CompareView()
{
    // The canvases point into the graphs this view owns: they let go first.
    m_left->setGraph(nullptr);
    m_right->setGraph(nullptr);
}

/// The marks by provenance, and the regions Next / Previous visit: the changes ordered by where
/// they are in B's program (a removed node right after the last node before it that B kept), a new
/// region wherever an unchanged node of B lies between two changes.
void CompareView::markDifference()
{
    const auto inA = byName(*m_a), inB = byName(*m_b);
    std::unordered_map<std::string, size_t> posB;
    std::vector<const ir::Node *> orderB;
    for (const ir::Node *n = m_b->first(); n; n = n->next()) {
        posB.emplace(n->name(), orderB.size());
        orderB.push_back(n);
    }
    struct Entry {
        double key;
        const ir::Node *a, *b;
    };
    std::vector<Entry> entries;
    std::vector<std::pair<const ir::Node *, GraphCanvas::DiffMark>> marksA, marksB;
    double last = -1;
    for (const ir::Node *n = m_a->first(); n; n = n->next()) {
        const ir::Node *kept = counterpart(n, inB);
        if (!kept) {
            marksA.push_back({n, GraphCanvas::DiffMark::Removed});
            entries.push_back({last + 0.5, n, nullptr});
            ++m_removed;
            continue;
        }
        last = double(posB[n->name()]);
        if (ir::printNode(*n) != ir::printNode(*kept)) {
            marksA.push_back({n, GraphCanvas::DiffMark::Changed});
            marksB.push_back({kept, GraphCanvas::DiffMark::Changed});
            entries.push_back({last, n, kept});
            ++m_changed;
        }
    }
    for (const ir::Node *n : orderB)
        if (!counterpart(n, inA)) {
            marksB.push_back({n, GraphCanvas::DiffMark::Added});
            entries.push_back({double(posB[n->name()]), nullptr, n});
            ++m_added;
        }
    std::stable_sort(entries.begin(), entries.end(), [](const Entry &x, const Entry &y) { return x.key < y.key; });
    double previous = -1e300, first = 0;
    for (const Entry &e : entries) {
        if (e.key - previous > 1) {
            m_changes.emplace_back();
            first = e.key;
            // The unchanged node before the region (or after it, for a region at the start).
            const long before = long(std::ceil(first)) - 1;
            if (before >= 0 && size_t(before) < orderB.size())
                m_changes.back().context = orderB[size_t(before)]->name();
        }
        previous = e.key;
        Change &c = m_changes.back();
        if (e.a)
            c.a.push_back(e.a);
        if (e.b)
            c.b.push_back(e.b);
        if (c.context.empty() && size_t(std::floor(e.key)) + 1 < orderB.size())
            c.context = orderB[size_t(std::floor(e.key)) + 1]->name();
    }
    m_left->setDiffMarks(marksA);
    m_right->setDiffMarks(marksB);
}

QString CompareView::summary() const
{
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    auto chip = [dark](GraphCanvas::DiffMark d, const QString &text) {
        return QStringLiteral("<span style=\"background:%1\">&nbsp;%2&nbsp;</span>").arg(GraphCanvas::diffColour(d, dark).name(), text);
    };
    return tr("%1 · %2 · %3 · %4 → %5 nodes")
        .arg(chip(GraphCanvas::DiffMark::Removed, tr("%1 removed").arg(m_removed)),
             chip(GraphCanvas::DiffMark::Added, tr("%1 added").arg(m_added)),
             chip(GraphCanvas::DiffMark::Changed, tr("%1 changed").arg(m_changed)))
        .arg(m_a->size())
        .arg(m_b->size());
}

void CompareView::updatePosition()
{
    const int n = int(m_changes.size());
    m_position->setText(n == 0 ? tr("no changes")
                            : m_current < 0 && m_tooLarge
                            ? tr("%n changes span more than one screen: N / Shift+N step through them", nullptr, n)
                            : m_current < 0 ? tr("%n change(s)", nullptr, n)
                                            : tr("change %1 of %2").arg(m_current + 1).arg(n));
    for (QAction *a : actions())
        if (a->objectName().endsWith(QLatin1String("Change")) || a->objectName() == QLatin1String("fitChanges"))
            a->setEnabled(n > 0);
}

bool CompareView::eventFilter(QObject *watched, QEvent *e)
{
    if (watched != m_left && watched != m_right)
        return QWidget::eventFilter(watched, e);
    switch (e->type()) {
    case QEvent::Resize:
        if (!m_autoFit)
            break;
        if (m_opening)
            openView();
        else
            placeCurrent();
        break;
    case QEvent::Wheel:
    case QEvent::KeyPress: // the canvas' own keys zoom and fit; the window's shortcuts never get here
        m_autoFit = m_opening = false;
        break;
    case QEvent::MouseMove:
        if (static_cast<QMouseEvent *>(e)->buttons() != Qt::NoButton) // a drag pans
            m_autoFit = m_opening = false;
        break;
    default: break;
    }
    return QWidget::eventFilter(watched, e);
}

void CompareView::openView()
{
    if (m_changes.empty()) {
        m_left->readableView();
        m_right->readableView();
        return;
    }
    // The first change, every time: the user steps from there (N) or asks for all (A).
    m_current = 0;
    reveal();
    placeCurrent();
}

void CompareView::fitToChanges()
{
    m_opening = false;
    m_current = -1;
    m_autoFit = true;
    reveal();
    placeCurrent();
}

void CompareView::nextChange()
{
    if (!m_changes.empty())
        showChange(m_current < 0 ? 0 : (m_current + 1) % int(m_changes.size()));
}

void CompareView::previousChange()
{
    if (!m_changes.empty())
        showChange(m_current <= 0 ? int(m_changes.size()) - 1 : m_current - 1);
}

void CompareView::showChange(int i)
{
    if (i < 0 || size_t(i) >= m_changes.size())
        return;
    m_opening = false;
    m_current = i;
    m_autoFit = true;
    reveal();
    placeCurrent();
}

std::vector<const ir::Node *> CompareView::changeNodes(size_t k, bool inA) const
{
    const GraphCanvas &pane = inA ? *m_left : *m_right;
    const Change &c = m_changes[k];
    std::vector<const ir::Node *> out;
    for (const ir::Node *n : inA ? c.a : c.b)
        if (pane.itemOf(n) >= 0) // a constant nobody reads is not drawn
            out.push_back(n);
    if (!out.empty())
        return out;
    // A side without changed nodes drawn: where the region is, the unchanged node before it (or,
    // for a parameter the pane does not draw, the nearest drawn one).
    for (const ir::Node *n = (inA ? *m_a : *m_b).find(c.context); n; n = n->prev())
        if (const int i = pane.itemOf(n); i >= 0 && pane.view().items[size_t(i)].node == n)
            return {n};
    return out;
}

std::vector<const ir::Node *> CompareView::shownNodes(bool inA) const
{
    std::vector<const ir::Node *> out;
    for (size_t k = 0; k < m_changes.size(); ++k)
        if (m_current < 0 || int(k) == m_current) {
            const auto nodes = changeNodes(k, inA);
            out.insert(out.end(), nodes.begin(), nodes.end());
        }
    return out;
}

std::set<std::string> CompareView::spannedStacks() const
{
    std::set<std::string> out;
    for (size_t k = 0; k < m_changes.size(); ++k) {
        if (m_current >= 0 && int(k) != m_current)
            continue;
        for (const GraphCanvas *pane : {m_left, m_right}) {
            const auto nodes = changeNodes(k, pane == m_left);
            for (const auto &stack : pane->stacks()) {
                const std::set<std::string> members(stack.members.begin(), stack.members.end());
                std::set<std::string> touched;
                for (const ir::Node *n : nodes)
                    for (const auto &f : layout::displayModules(n))
                        if (members.count(f.path))
                            touched.insert(f.path);
                if (touched.size() >= 2 && 2 * touched.size() > members.size())
                    out.insert(members.begin(), members.end());
            }
        }
    }
    return out;
}

void CompareView::reveal()
{
    const std::set<std::string> spanned = spannedStacks();
    const auto inA = shownNodes(true), inB = shownNodes(false);
    m_syncing = true;
    m_left->revealNodes(inA);
    m_right->revealNodes(inB);
    // Both sides show the same modules expanded, so that following one with the other finds them.
    for (GraphCanvas *c : {m_left, m_right})
        for (const ir::Node *n : c == m_left ? inA : inB)
            for (const auto &f : layout::displayModules(n))
                if (!f.path.empty())
                    (c == m_left ? m_right : m_left)->setExpanded(QString::fromStdString(f.path), true);
    m_syncing = false;
    // A change in several members of a stack (a rewrite that batched 50 identical blocks) that
    // does not fit at a readable zoom with the members side by side is shown by the stack's box.
    if (!spanned.empty() && frame(m_current).fit < kReadableScale) {
        m_left->foldModules(spanned);
        m_right->foldModules(spanned);
    }
}

/// Both panes at one zoom with one shared node at one place (so that what did not change lines
/// up): of the nodes drawn in both panes, the one bestAnchor picks. Aligning the rectangles instead
/// (tops, middles) offsets everything when A's changes spread wider than B's; only where no two of
/// those nodes line up anyway are the middles aligned.
CompareView::Frame CompareView::frame(int k, const QPointF *alignAt) const
{
    const auto nodes = [&](bool inA) { return k == m_current || k < 0 ? shownNodes(inA) : changeNodes(size_t(k), inA); };
    Frame f;
    f.a = m_left->nodesRect(nodes(true));
    f.b = m_right->nodesRect(nodes(false));
    f.anchor = f.a.isEmpty() ? f.b.center() : f.a.center();
    const QSizeF pane(std::max(1, std::min(m_left->width(), m_right->width())), std::max(1, std::min(m_left->height(), m_right->height())));
    std::vector<std::pair<QRectF, QRectF>> shared; // a node both panes draw: where, in each scene
    if (!f.a.isEmpty() && !f.b.isEmpty()) {
        f.shift = QPointF(f.b.center().x() - f.a.center().x(), f.b.top() - f.a.top());
        const auto inB = byName(*m_b);
        const auto &va = m_left->view(), &vb = m_right->view();
        std::vector<Anchor> candidates;
        for (const ir::Node *n = m_a->first(); n; n = n->next()) {
            const int i = m_left->itemOf(n);
            const ir::Node *m = i >= 0 && va.items[size_t(i)].node == n ? counterpart(n, inB) : nullptr;
            const int j = m ? m_right->itemOf(m) : -1;
            if (j < 0 || vb.items[size_t(j)].node != m)
                continue;
            const auto &x = va.items[size_t(i)], &y = vb.items[size_t(j)];
            shared.emplace_back(QRectF(x.x, x.y, x.w, x.h), QRectF(y.x, y.y, y.w, y.h));
            Anchor c{QPointF(x.x + x.w / 2, x.y + x.h / 2), QPointF(y.x + y.w / 2 - x.x - x.w / 2, y.y - x.y), QRectF(x.x, x.y, x.w, x.h)};
            const QRectF both = f.a.united(f.b.translated(-c.shift));
            c.cost = std::max(both.width() / pane.width(), both.height() / pane.height());
            c.distance = QLineF(c.at, f.a.center()).length() + QLineF(c.at + c.shift, f.b.center()).length();
            candidates.push_back(c);
        }
        const auto same = [](const Anchor &x, const Anchor &y) {
            return std::abs(x.shift.x() - y.shift.x()) < kSameShift && std::abs(x.shift.y() - y.shift.y()) < kSameShift;
        };
        bool linesUp = false; // two nodes at one alignment, anywhere
        for (size_t i = 0; i < candidates.size() && !linesUp; ++i)
            for (size_t j = i + 1; j < candidates.size() && !linesUp; ++j)
                linesUp = same(candidates[i], candidates[j]);
        if (!linesUp && !candidates.empty()) {
            // No alignment lines up more than the one node (a rewrite that replaced everything
            // between the input and the output): the middles of the two sides at one place, so
            // that neither pane shows its side at one end with the rest of the pane empty.
            f.shift = f.b.center() - f.a.center();
        } else if (const Anchor *a = bestAnchor(candidates, f.a.adjusted(-60, -60, 60, 60))) {
            f.shift = a->shift;
            f.anchor = a->at;
            f.others = otherAlignments(candidates, *a, f.a.adjusted(-60, -60, 60, 60));
        }
        if (alignAt) // one of those alignments, asked for
            for (const auto &[box, shift] : f.others)
                if (shift == *alignAt) {
                    f.shift = shift;
                    f.anchor = box.center();
                }
    }
    fitFrame(f);
    if (!f.both.isEmpty())
        widen(f, nodes(true), nodes(false), shared);
    return f;
}

void CompareView::fitFrame(Frame &f) const
{
    // One fitted area for both panes (the smaller pane, clear of either legend).
    const QSizeF pane(std::max(1, std::min(m_left->width(), m_right->width())), std::max(1, std::min(m_left->height(), m_right->height())));
    f.both = f.a.united(f.b.translated(-f.shift));
    f.area = GraphCanvas::fitArea(pane, m_left->legendRect().united(m_right->legendRect()), f.both.size());
    f.fit = std::min({1.0, f.area.width() / std::max(f.both.width(), 1.0), f.area.height() / std::max(f.both.height(), 1.0)});
}

void CompareView::widen(Frame &f, const std::vector<const ir::Node *> &inA, const std::vector<const ir::Node *> &inB,
                        const std::vector<std::pair<QRectF, QRectF>> &shared) const
{
    const auto grow = [&](const QRectF &a, const QRectF &b, double least) {
        Frame g = f;
        g.a = a;
        g.b = b;
        fitFrame(g);
        if (g.fit < least)
            return false;
        f = g;
        return true;
    };
    // The titles of the frames around the nodes, innermost first: the user sees which module a
    // change is in.
    const auto titlesA = titlesAround(*m_left, inA), titlesB = titlesAround(*m_right, inB);
    const int deepest = std::max(titlesA.empty() ? -1 : titlesA.front().first, titlesB.empty() ? -1 : titlesB.front().first);
    for (int depth = deepest; depth >= 0 && f.fit >= kReadableScale; --depth) {
        QRectF a = f.a, b = f.b;
        for (const auto &[d, r] : titlesA)
            a = d == depth && !a.isEmpty() ? a.united(r) : a;
        for (const auto &[d, r] : titlesB)
            b = d == depth && !b.isEmpty() ? b.united(r) : b;
        if (!grow(a, b, kReadableScale))
            return;
    }
    // What did not change that one pane shows among the changes, the other shows too (the input
    // above a rewritten block), when that costs little zoom: the panes read alike.
    QRectF a = f.a, b = f.b;
    for (const auto &[ra, rb] : shared) {
        if (f.both.contains(ra))
            b = b.united(rb);
        if (f.both.contains(rb.translated(-f.shift)))
            a = a.united(ra);
    }
    grow(a, b, std::max(kReadableScale, 0.9 * f.fit));
}

void CompareView::mirrorExpansion(GraphCanvas *to, const QString &module, bool expanded)
{
    if (m_syncing)
        return;
    m_syncing = true;
    to->setExpanded(module, expanded);
    m_syncing = false;
    afterMirror(to);
}

void CompareView::mirrorUnstack(GraphCanvas *to, const QString &firstMember)
{
    if (m_syncing)
        return;
    m_syncing = true;
    to->unstackMembersOf(firstMember);
    m_syncing = false;
    afterMirror(to);
}

void CompareView::afterMirror(GraphCanvas *to)
{
    // Panes showing a change (nobody moved them since) show it again, fitted; else the other pane
    // follows the one the user clicked.
    if (m_autoFit)
        placeCurrent();
    else
        follow(to == m_left ? m_right : m_left, to, to == m_left ? *m_a : *m_b);
}

/// Shows in `to`, at the same zoom, the change shown where `from` shows it (while it is in view in
/// `from`: zooming or panning near it keeps it aligned), else the node `from` has at its centre
/// (the nearest item with a counterpart) where `from` has it.
void CompareView::follow(GraphCanvas *from, GraphCanvas *to, const ir::Graph &toGraph)
{
    if (m_syncing)
        return;
    m_syncing = true;
    const QPointF c = from->viewCentre();
    if (m_current >= 0) {
        const QRectF rf = from->nodesRect(shownNodes(from == m_left));
        const QRectF onScreen((rf.topLeft() - c) * from->scale() + QPointF(from->width() / 2.0, from->height() / 2.0),
                              rf.size() * from->scale());
        if (!rf.isEmpty() && onScreen.intersects(QRectF(from->rect()))) {
            const QPointF panes = (QPointF(to->width(), to->height()) - QPointF(from->width(), from->height())) / 2 / from->scale();
            to->setView(from->scale(), (from == m_left ? c + m_shift : c - m_shift) + panes);
            m_syncing = false;
            return;
        }
    }
    const auto &v = from->view();
    const auto &tv = to->view();
    auto boxKey = [](const layout::ViewItem &it) { return it.module + '#' + std::to_string(it.call); };
    std::unordered_map<std::string, int> boxes; // module boxes of `to` by module and call
    for (size_t k = 0; k < tv.items.size(); ++k)
        if (tv.items[k].kind == layout::ViewItem::Kind::Module)
            boxes.emplace(boxKey(tv.items[k]), int(k));
    double best = 1e300;
    QPointF target = to->viewCentre();
    for (const auto &it : v.items) {
        const double dx = it.x + it.w / 2 - c.x(), dy = it.y + it.h / 2 - c.y(), d = dx * dx + dy * dy;
        if (d >= best)
            continue;
        // Its counterpart: the same node (name in its module), or the same module box.
        int other = -1;
        if (it.node) {
            if (const ir::Node *n = toGraph.find(it.node->name());
                n && n->meta().modulePath() == it.node->meta().modulePath() && n->id() < tv.itemOfNode.size())
                other = tv.itemOfNode[n->id()];
        } else if (auto b = boxes.find(boxKey(it)); b != boxes.end()) {
            other = b->second;
        }
        if (other < 0)
            continue;
        best = d;
        const auto &o = tv.items[size_t(other)];
        target = QPointF(o.x + o.w / 2 - dx, o.y + o.h / 2 - dy);
    }
    to->setView(from->scale(), target);
    m_syncing = false;
}

CompareChooser::CompareChooser(RewriteHistory &h, QWidget *parent) : QDialog(parent)
{
    setWindowTitle(tr("Compare versions"));
    m_model = new HistoryModel(this);
    m_model->setGreyed(palette().color(QPalette::Disabled, QPalette::Text));
    m_model->setHistory(h.steps(), h.branches(), h.version());
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Pick the two versions to show side by side (bold: the version on screen; ↳ a branch's last "
                                    "version):"),
                                 this));
    auto *lists = new QHBoxLayout;
    auto list = [&](const QString &title, const QString &name, int row) {
        auto *col = new QVBoxLayout;
        col->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title), this));
        auto *v = new QListView(this);
        v->setObjectName(name);
        v->setModel(m_model);
        v->setCurrentIndex(m_model->index(row));
        v->setMinimumWidth(320);
        col->addWidget(v);
        lists->addLayout(col);
        return v;
    };
    m_listA = list(tr("A (left)"), QStringLiteral("versionA"), 0);
    m_listB = list(tr("B (right)"), QStringLiteral("versionB"), h.version());
    layout->addLayout(lists, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Compare"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_listB, &QListView::doubleClicked, this, &QDialog::accept);
    layout->addWidget(buttons);
    resize(760, 420);
}

namespace {
VersionChoice choiceAt(const QModelIndex &row)
{
    const QVariant branch = row.data(HistoryModel::BranchRole);
    return branch.isValid() ? VersionChoice(0, branch.toInt()) : VersionChoice(std::max(0, row.row()));
}
} // namespace

VersionChoice CompareChooser::a() const { return choiceAt(m_listA->currentIndex()); }
VersionChoice CompareChooser::b() const { return choiceAt(m_listB->currentIndex()); }

CompareView *compareVersions(GraphDocument &doc, VersionChoice a, VersionChoice b, QWidget *parent, QString *error)
{
    auto *h = doc.history();
    std::vector<rewrite::VersionCopy> copies(2);
    // Copying a branch's version lists it last afterwards: the later index first keeps the other valid.
    const bool same = a.version == b.version && a.branch == b.branch, bFirst = b.branch > a.branch;
    for (const int k : {bFirst ? 1 : 0, bFirst ? 0 : 1}) {
        const VersionChoice &c = k == 0 ? a : b;
        if (same && copies[size_t(1 - k)].graph) {
            copies[size_t(k)] = {copies[size_t(1 - k)].version, copies[size_t(1 - k)].label, copies[size_t(1 - k)].graph->clone()};
            continue;
        }
        auto one = c.branch >= 0 ? h->copyBranchTip(c.branch, error) : h->copyVersions({c.version}, error);
        if (one.size() != 1)
            return nullptr;
        copies[size_t(k)] = std::move(one.front());
    }
    auto *view = new CompareView(std::move(copies[0].graph), QString::fromStdString(copies[0].label), std::move(copies[1].graph),
                                 QString::fromStdString(copies[1].label), parent);
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    return view;
}

} // namespace fxlens::views
