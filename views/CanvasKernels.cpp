// SPDX-License-Identifier: MIT
// The canvas' kernel outlines: a compiled profile's kernels, each around the items of the FX nodes
// it covers, its name and time on the outline (see GraphCanvas.h).
#include "GraphCanvas.h"

#include "ProfilePanel.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace fxlens::views {

namespace {

constexpr double kMargin = 9, kStep = 6; ///< an outline's margin around its items; per outline inside it
constexpr int kMaxNesting = 4;           ///< outlines inside one that widen it (more share its margin)
constexpr int kLabelPixels = 10;

QColor outlineColour(bool dark) { return dark ? QColor(190, 150, 255) : QColor(120, 60, 190); }

bool inside(const QRectF &a, const QRectF &b) { return b.contains(a); }

} // namespace

void GraphCanvas::setKernelGroups(std::vector<KernelGroup> groups)
{
    m_kernelGroups = std::move(groups);
    m_kernelGroup = -1;
    placeKernelGroups();
    update();
}

void GraphCanvas::setSelectedKernelGroup(int g)
{
    m_kernelGroup = g >= 0 && size_t(g) < m_kernelGroups.size() ? g : -1;
    update();
}

QRectF GraphCanvas::kernelGroupRect(int g) const
{
    return g >= 0 && size_t(g) < m_kernelOutlines.size() ? m_kernelOutlines[size_t(g)].rect : QRectF();
}

QRectF GraphCanvas::kernelLabelRect(int g) const
{
    return g >= 0 && size_t(g) < m_kernelOutlines.size() ? m_kernelOutlines[size_t(g)].label : QRectF();
}

void GraphCanvas::placeKernelGroups()
{
    m_kernelOutlines.assign(m_kernelGroups.size(), {});
    std::vector<QRectF> raw(m_kernelGroups.size());
    auto rectOf = [this](int i) {
        const auto &it = m_view.items[size_t(i)];
        return QRectF(it.x, it.y, it.w, it.h);
    };
    std::vector<int> rings(m_view.items.size(), 0); // rings drawn around each item so far
    std::vector<int> alone(m_view.items.size(), 0); // kernels whose nodes all lie in this one collapsed module box
    for (const auto &k : m_kernelGroups) {
        int only = -1;
        for (const ir::Node *n : k.nodes)
            if (const int i = itemOf(n); i >= 0)
                only = only == -1 || only == i ? i : -2;
        if (only >= 0 && m_view.items[size_t(only)].kind == layout::ViewItem::Kind::Module)
            ++alone[size_t(only)];
    }
    for (size_t g = 0; g < m_kernelGroups.size(); ++g) {
        auto &o = m_kernelOutlines[g];
        o.text = groupLabel(m_kernelGroups[g]);
        for (const ir::Node *n : m_kernelGroups[g].nodes)
            if (const int i = itemOf(n); i >= 0 && std::find(o.items.begin(), o.items.end(), i) == o.items.end()) {
                o.items.push_back(i);
                raw[g] = raw[g].united(rectOf(i));
            }
        // Kernels inside one collapsed module box: the box stands for them until it is expanded
        // (an outline for each would only ring the box again and again).
        if (o.items.size() == 1 && alone[size_t(o.items[0])] > 1) {
            raw[g] = QRectF();
            continue;
        }
        // Scattered (its box would cover items of other kernels): a ring around each of its node
        // items (a collapsed module box stands for the kernels inside it, unless it has no other).
        bool scattered = false;
        for (const int i : itemsIn(raw[g]))
            scattered = scattered || (std::find(o.items.begin(), o.items.end(), i) == o.items.end() && raw[g].intersects(rectOf(i)));
        if (!scattered)
            continue;
        const auto isBox = [this](int i) { return m_view.items[size_t(i)].kind == layout::ViewItem::Kind::Module; };
        const bool nodesToo = !std::all_of(o.items.begin(), o.items.end(), isBox);
        for (const int i : o.items) {
            if (nodesToo && isBox(i))
                continue;
            const double m = kMargin + kStep * std::min(rings[size_t(i)]++, kMaxNesting);
            o.rings.push_back(rectOf(i).adjusted(-m, -m, m, m));
            o.rect = o.rect.united(o.rings.back());
        }
        raw[g] = QRectF();
    }
    // Nesting: an outline leaves room for each outline inside its rectangle (equal rectangles: the
    // later one outside), so every outline stays visible.
    for (size_t g = 0; g < raw.size(); ++g) {
        if (raw[g].isEmpty())
            continue;
        int within = 0;
        for (size_t h = 0; h < raw.size(); ++h)
            if (h != g && !raw[h].isEmpty() && inside(raw[h], raw[g]) && (raw[h] != raw[g] || h < g))
                ++within;
        for (const int i : m_kernelOutlines[g].items)
            within = std::max(within, rings[size_t(i)]);
        const double m = kMargin + kStep * std::min(within, kMaxNesting);
        m_kernelOutlines[g].rect = raw[g].adjusted(-m, -m, m, m);
    }
    // Labels: on the outline's top edge near its left corner (as a titled border), else further
    // along it, else on its bottom edge, shortened (elided) to the outline's width when it does not
    // fit whole: always within the outline's sides, so that it is cut by no canvas edge the outline
    // is not cut by; never over an item, an edge's label or another kernel's label.
    QFont f = font();
    f.setPixelSize(kLabelPixels);
    const QFontMetricsF fm(f);
    std::vector<QRectF> taken; // edge labels and the labels placed so far
    for (const auto &e : m_edgeLabels)
        taken.push_back(e.rect);
    const auto isFree = [&](const QRectF &r) {
        if (std::any_of(taken.begin(), taken.end(), [&](const QRectF &t) { return t.intersects(r); }))
            return false;
        const auto items = itemsIn(r);
        return std::none_of(items.begin(), items.end(), [&](int i) {
            const auto &it = m_view.items[size_t(i)];
            return r.intersects(QRectF(it.x, it.y, it.w, it.h));
        });
    };
    for (auto &o : m_kernelOutlines) {
        if (o.rect.isEmpty())
            continue;
        const QRectF box = o.rings.empty() ? o.rect : o.rings.front(); // a scattered kernel's label: on its first ring
        const double whole = std::min(fm.horizontalAdvance(o.text) + 6, 320.0), room = box.width() - 16, h = fm.height() + 2;
        for (const double w : {std::min(whole, room), std::min({whole, room, 90.0})}) {
            for (const double y : {box.top() - h / 2, box.bottom() - h / 2})
                for (double x = box.left() + 8; x <= box.right() - 8 - w && o.label.isEmpty(); x += 6)
                    if (const QRectF r(x, y, w, h); w >= 40 && isFree(r))
                        o.label = r;
            if (!o.label.isEmpty()) {
                taken.push_back(o.label);
                break;
            }
        }
    }
}

void GraphCanvas::paintKernelGroups(QPainter &p, double scale) const
{
    if (m_kernelOutlines.empty())
        return;
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    const QColor ink = outlineColour(dark), strong(230, 110, 0);
    const double px = 1.0 / std::max(scale, 0.05);
    p.save();
    p.setBrush(Qt::NoBrush);
    for (size_t g = 0; g < m_kernelOutlines.size(); ++g) {
        const auto &o = m_kernelOutlines[g];
        if (o.rect.isEmpty() || int(g) == m_kernelGroup)
            continue;
        p.setPen(QPen(ink, 1.5 * px));
        for (const QRectF &r : o.rings.empty() ? std::vector<QRectF>{o.rect} : o.rings)
            p.drawRoundedRect(r, 8, 8);
    }
    if (const auto *sel = m_kernelGroup >= 0 ? &m_kernelOutlines[size_t(m_kernelGroup)] : nullptr; sel && !sel->rect.isEmpty()) {
        QColor wash = strong;
        wash.setAlpha(40);
        p.setPen(QPen(strong, 3 * px));
        p.setBrush(wash);
        for (const QRectF &r : sel->rings.empty() ? std::vector<QRectF>{sel->rect} : sel->rings)
            p.drawRoundedRect(r, 8, 8);
        p.setBrush(Qt::NoBrush);
        for (const int i : sel->items) {
            const auto &it = m_view.items[size_t(i)];
            p.drawRoundedRect(QRectF(it.x, it.y, it.w, it.h).adjusted(-2, -2, 2, 2), 7, 7);
        }
    }
    if (kLabelPixels * scale >= 7) { // labels once legible
        QFont f = font();
        f.setPixelSize(kLabelPixels);
        p.setFont(f);
        const QColor base = palette().color(QPalette::Base);
        for (size_t g = 0; g < m_kernelOutlines.size(); ++g) {
            const auto &o = m_kernelOutlines[g];
            if (o.label.isEmpty())
                continue;
            const bool selected = int(g) == m_kernelGroup;
            p.setPen(Qt::NoPen);
            p.setBrush(base);
            p.drawRect(o.label);
            p.setPen(selected ? strong : ink);
            p.drawText(o.label.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter,
                       QFontMetricsF(f).elidedText(o.text, Qt::ElideMiddle, o.label.width() - 6));
        }
    }
    p.restore();
}

int GraphCanvas::kernelGroupAt(QPointF pos) const
{
    const QPointF s = toScene(pos);
    const double tol = 4 / std::max(m_scale, 0.05);
    int best = -1;
    double bestArea = 0;
    for (size_t g = 0; g < m_kernelOutlines.size(); ++g) {
        const auto &o = m_kernelOutlines[g];
        if (o.label.contains(s))
            return int(g);
        if (o.rect.isEmpty())
            continue;
        for (const QRectF &r : o.rings.empty() ? std::vector<QRectF>{o.rect} : o.rings) {
            const bool onEdge = r.adjusted(-tol, -tol, tol, tol).contains(s) && !r.adjusted(tol, tol, -tol, -tol).contains(s);
            const double area = r.width() * r.height();
            if (onEdge && (best < 0 || area < bestArea))
                best = int(g), bestArea = area;
        }
    }
    return best;
}

QString GraphCanvas::kernelToolTip(int g) const
{
    const auto &k = m_kernelGroups[size_t(g)];
    QStringList names;
    for (const ir::Node *n : k.nodes)
        names << QString::fromStdString(n->name()).toHtmlEscaped();
    return tr("<b>%1</b><br>%2 per iteration · covers %n FX node(s): %3<br><i>click to select the kernel</i>", nullptr, int(names.size()))
        .arg(k.name.toHtmlEscaped(), ProfilePanel::formatTime(k.usPerIteration), names.join(QStringLiteral(", ")));
}

} // namespace fxlens::views
