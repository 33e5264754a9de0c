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
constexpr int kLabelPixels = 11;
constexpr double kLegible = 6.5; ///< a label's least size on screen (pixels): a node's op line at the readable zoom

QColor outlineColour(bool dark) { return dark ? QColor(190, 150, 255) : QColor(120, 60, 190); }

bool inside(const QRectF &a, const QRectF &b) { return b.contains(a); }

/// `text` on `lines` lines at most `width` pixels wide, broken after a '_' (a kernel name's
/// words, each line as full as it goes); empty when it does not fit so.
QStringList wrapped(const QString &text, const QFontMetricsF &fm, double width, int lines)
{
    QStringList out{QString()};
    for (qsizetype from = 0; from < text.size();) {
        const qsizetype cut = text.indexOf(QLatin1Char('_'), from);
        const QString word = text.mid(from, cut < 0 ? -1 : cut - from + 1);
        if (!out.back().isEmpty() && fm.horizontalAdvance(out.back() + word) > width)
            out << QString();
        out.back() += word;
        from += word.size();
    }
    const bool fits = std::all_of(out.begin(), out.end(), [&](const QString &l) { return fm.horizontalAdvance(l) <= width; });
    return fits && out.size() <= lines ? out : QStringList();
}

} // namespace

void GraphCanvas::setKernelGroups(std::vector<KernelGroup> groups)
{
    m_kernelGroups = std::move(groups);
    m_kernelGroup = -1;
    placeKernelGroups();
    placeLabels();
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

std::vector<QRectF> GraphCanvas::kernelOutlineRects(int g) const
{
    if (g < 0 || size_t(g) >= m_kernelOutlines.size() || m_kernelOutlines[size_t(g)].rect.isEmpty())
        return {};
    const auto &o = m_kernelOutlines[size_t(g)];
    return o.rings.empty() ? std::vector<QRectF>{o.rect} : o.rings;
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
}

void GraphCanvas::placeLabels()
{
    placeEdgeLabels();
    placeKernelLabels();
    measureContent(); // labels moved: what a fit shows
}

void GraphCanvas::measureContent()
{
    // What is drawn, labels included (a layout leaves room around it for labels it may not need).
    QRectF r;
    for (const auto &it : m_view.items)
        r |= QRectF(it.x, it.y, it.w, it.h);
    for (const auto &g : m_ghosts)
        r |= QRectF(g.x, g.y, g.w, g.h);
    for (const auto &f : m_frames)
        r |= f.rect;
    for (const auto &l : m_edgeLabels)
        r |= l.rect;
    for (const auto &k : m_kernelOutlines)
        r |= k.rect | k.label;
    m_content = r.isEmpty() ? QRectF(0, 0, m_view.width, m_view.height) : r.intersected(QRectF(0, 0, m_view.width, m_view.height));
}

void GraphCanvas::placeKernelLabels()
{
    // Labels: on the outline's top edge near its left corner (as a titled border), else further
    // along it, else on its bottom edge, else just above or below the outline. The text whole on one
    // line within the outline's sides, else on one line running on past its right side (not past the
    // nodes' right end), else broken after a '_' onto two or three lines within its sides, else shortened
    // (elided) to its width. Never over an item, an edge's label or another kernel's label.
    QFont f = font();
    f.setPixelSize(kLabelPixels);
    const QFontMetricsF fm(f);
    std::vector<QRectF> taken; // edge labels and the labels placed so far
    for (const auto &e : m_edgeLabels)
        taken.push_back(e.rect);
    const QRectF drawing(0, 0, m_view.width, m_view.height);
    double nodesRight = 0; // a label running on past its outline ends by the nodes' right end (a fit shows them)
    for (const auto &it : m_view.items)
        nodesRight = std::max(nodesRight, it.x + it.w);
    const auto isFree = [&](const QRectF &r) {
        if (!drawing.contains(r) || std::any_of(taken.begin(), taken.end(), [&](const QRectF &t) { return t.intersects(r); }))
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
        const double room = std::min(box.width() - 16, 320.0);
        struct Way {
            QStringList lines;
            double reach; ///< how far right of the outline's left side (and its 8-pixel inset) it may end
        };
        const double sides = box.width() - 16, past = nodesRight - box.left() - 8;
        std::vector<Way> ways{{{o.text}, sides}, {{o.text}, past}}; // most readable first
        for (const int n : {2, 3})
            if (const QStringList lines = wrapped(o.text, fm, room - 6, n); !lines.isEmpty()) {
                ways.push_back({lines, sides});
                break;
            }
        ways.push_back({{fm.elidedText(o.text, Qt::ElideMiddle, room - 6)}, sides});
        ways.push_back({{fm.elidedText(o.text, Qt::ElideMiddle, std::min(room, 90.0) - 6)}, sides});
        for (const Way &way : ways) {
            double w = 0;
            for (const QString &l : way.lines)
                w = std::max(w, fm.horizontalAdvance(l) + 6);
            const double h = fm.height() + fm.lineSpacing() * double(way.lines.size() - 1) + 2;
            for (const double y : {box.top() - h / 2, box.bottom() - h / 2, box.top() - h - 1, box.bottom() + 1})
                for (double x = box.left() + 8; x + w <= box.left() + 8 + way.reach && x <= box.right() - 48 && o.label.isEmpty(); x += 6)
                    if (const QRectF r(x, y, w, h); w >= 40 && isFree(r))
                        o.label = r;
            if (!o.label.isEmpty()) {
                o.lines = way.lines;
                taken.push_back(o.label);
                break;
            }
        }
    }
}

bool GraphCanvas::kernelLabelsDrawn() const { return kLabelPixels * m_scale >= kLegible; }

QStringList GraphCanvas::kernelLabelLines(int g) const
{
    return g >= 0 && size_t(g) < m_kernelOutlines.size() ? m_kernelOutlines[size_t(g)].lines : QStringList();
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
    if (kLabelPixels * scale >= kLegible) { // labels once legible (kernelLabelsDrawn)
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
            p.drawText(o.label.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter, o.lines.join(QLatin1Char('\n')));
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
