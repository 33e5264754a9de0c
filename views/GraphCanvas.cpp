// SPDX-License-Identifier: MIT
#include "GraphCanvas.h"

#include "GraphDocument.h"

#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>

#include <QFile>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QThread>
#include <QWheelEvent>

#ifdef FXLENS_HAVE_GRAPHVIZ
#include "layout/GraphvizRender.h"
#endif

#include <memory>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace fxlens::views {

using layout::ViewItem;

namespace {

QColor categoryFill(const ViewItem &i, bool dark) { return GraphCanvas::categoryColour(i.category, dark); }

} // namespace

QColor GraphCanvas::heatTint(QColor fill, double h)
{
    if (h <= 0)
        return fill;
    const double a = 0.2 + 0.7 * h;
    return QColor(int(fill.red() * (1 - a) + 230 * a), int(fill.green() * (1 - a) + 60 * a), int(fill.blue() * (1 - a) + 40 * a));
}

GraphCanvas::GraphCanvas(QWidget *parent) : QWidget(parent)
{
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
    setMinimumSize(200, 150);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void GraphCanvas::setGraph(const ir::Graph *g)
{
    m_graph = g;
    m_expanded.clear();
    m_selected = -1;
    m_overlays.clearAll();
    m_unstacked.clear();
    findStacks();
    m_kernelGroups.clear();
    m_kernelGroup = -1;
    relayout(false);
    readableView();
    m_untouched = true;
}

void GraphCanvas::setDocument(GraphDocument *doc)
{
    connect(doc, &GraphDocument::aboutToReplace, this, [this] { setGraph(nullptr); });
    connect(doc, &GraphDocument::replaced, this, &GraphCanvas::setGraph);
    connect(doc, &GraphDocument::changed, this, &GraphCanvas::graphEdited);
}

void GraphCanvas::readableView()
{
    fitToView();
    // A tall graph whose whole would be unreadably small starts fitted to the width, at the top
    // (its inputs), where the text can be read; Ctrl+0 shows it whole.
    const double margin = 20;
    if (m_view.items.empty() || 32 * m_scale >= 10)
        return;
    const QRect vp = sceneViewport();
    if (m_view.height > m_view.width) {
        m_scale = std::clamp((vp.width() - 2 * margin) / std::max(m_view.width, 1.0), m_scale, 1.0);
        m_offset = QPointF((vp.width() - m_view.width * m_scale) / 2, margin);
    } else { // a wide graph: fitted to its height, from its left end
        m_scale = std::clamp((vp.height() - 2 * margin) / std::max(m_view.height, 1.0), m_scale, 1.0);
        m_offset = QPointF(margin, (vp.height() - m_view.height * m_scale) / 2);
    }
    settle(QRectF(), Settle::Hold);
    update();
    Q_EMIT viewChanged();
}

void GraphCanvas::graphEdited()
{
    for (Layer l : {Layer::Highlight, Layer::Search, Layer::Diff, Layer::Marked}) // they name nodes that may be gone
        m_overlays.clear(l);
    const QPointF center = toScene(viewportCentre());
    findStacks(); // a step may make a block differ from its siblings, or alike again
    if (m_stable && !m_view.items.empty() && m_engine == Engine::Layered) {
        // A step: what stayed stays where it was, what it made is green, what it removed a red
        // ghost (View ▸ Re-layout starts afresh). A drawing a run has shrunk (by a quarter or
        // more along a side) to what the widget shows whole at a legible zoom is shown whole, not
        // left small or cut in a corner of the view it had.
        // A drawing shown whole that a step made larger (blocks unstacked) stays whole while its
        // text is drawn, else shows as much of it as kLandScale holds; not enlarged past the view.
        const QSizeF before(m_view.width, m_view.height);
        const QRectF vp = sceneViewport();
        const auto whole = [&] { return m_content.width() * m_scale <= vp.width() + 1 && m_content.height() * m_scale <= vp.height() + 1; };
        const bool wasWhole = whole();
        relayout(true, Placement::StableStep);
        const double fit = std::min(vp.width() / std::max(m_content.width(), 1.0), vp.height() / std::max(m_content.height(), 1.0));
        const bool grownOut = wasWhole && !whole();
        const bool shrank = m_view.width < 0.75 * before.width() || m_view.height < 0.75 * before.height();
        if ((fit >= kLandScale && (grownOut || shrank)) || (grownOut && 32 * fit >= 14)) // (text drawn from 14/32)
            fitToView();
        else if (grownOut)
            fitWhole(kLandScale);
        else
            settle(QRectF(), Settle::Hold); // what the step moved (or left a ghost) is not cut at an edge
        update();
        return;
    }
    relayout(true);
    // When the view shrank past the point in the centre (a run straightened it), or fits the widget
    // at this zoom, it is shown whole.
    if (center.x() > m_view.width || center.y() > m_view.height ||
        (m_content.width() * m_scale <= sceneViewport().width() && m_content.height() * m_scale <= sceneViewport().height()))
        fitToView();
    else
        settle(QRectF(), Settle::Hold);
}

void GraphCanvas::relayoutFresh()
{
    m_ghosts.clear();
    m_overlays.clear(Layer::Diff);
    relayout(true);
}

bool GraphCanvas::relayout(bool keepCenter, Placement placement)
{
    const QPointF center = toScene(viewportCentre());
    std::string selectedName;
    if (m_selected >= 0 && size_t(m_selected) < m_view.items.size())
        selectedName = m_view.items[size_t(m_selected)].label;
    layout::ViewGraph previous = std::move(m_view);
    m_view = m_graph ? layout::buildView(*m_graph, m_expanded, m_viewOptions) : layout::ViewGraph{};
    m_ghosts.clear();
    if (placement == Placement::StableStep) {
        auto r = layout::placeStable(m_view, previous);
        m_ghosts = std::move(r.removed);
        CanvasOverlays::NodeValues added;
        for (uint32_t i : r.added)
            if (m_view.items[i].node)
                added.push_back({m_view.items[i].node, double(DiffMark::Added)});
        m_overlays.set(Layer::Diff, std::move(added), m_view);
    }
    const bool inPlace = placement == Placement::InPlace && layout::placeInPlace(m_view, previous);
    if (placement == Placement::Fresh || (placement == Placement::InPlace && !inPlace))
        layout::layeredLayout(m_view);
    indexEdges();
    m_selected = -1;
    for (size_t i = 0; i < m_view.items.size(); ++i)
        if (!selectedName.empty() && m_view.items[i].label == selectedName)
            m_selected = int(i);
    m_overlays.remap(m_view);
    computeFrames();
    rebuildIndex();
    placeKernelGroups();
    placeLabels();
    m_pixelColor.clear();
    renderMinimap();
    m_job = 0; // a running Graphviz job is for the previous view
    if (m_engine == Engine::Graphviz && !m_view.items.empty() && m_view.items.size() <= kGraphvizLimit)
        startGraphviz();
    if (keepCenter) {
        // Keep the same scene point under the widget centre where it still exists.
        const QPointF c(std::clamp(center.x(), 0.0, m_view.width), std::clamp(center.y(), 0.0, m_view.height));
        m_offset = viewportCentre() - c * m_scale;
    }
    update();
    return inPlace;
}

void GraphCanvas::rebuildIndex()
{
    m_cols = std::max(1, int(std::ceil(m_view.width / m_cell)));
    m_rows = std::max(1, int(std::ceil(m_view.height / m_cell)));
    m_grid.assign(size_t(m_cols) * size_t(m_rows), {});
    for (size_t i = 0; i < m_view.items.size(); ++i) {
        const auto &it = m_view.items[i];
        const int c0 = std::clamp(int(it.x / m_cell), 0, m_cols - 1), c1 = std::clamp(int((it.x + it.w) / m_cell), 0, m_cols - 1);
        const int r0 = std::clamp(int(it.y / m_cell), 0, m_rows - 1), r1 = std::clamp(int((it.y + it.h) / m_cell), 0, m_rows - 1);
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c)
                m_grid[size_t(r) * size_t(m_cols) + size_t(c)].push_back(uint32_t(i));
    }
    m_stamp.assign(m_view.items.size(), 0);
    m_stampNow = 0;
}

std::vector<int> GraphCanvas::itemsIn(const QRectF &r) const
{
    std::vector<int> out;
    if (m_view.items.empty())
        return out;
    if (++m_stampNow == 0) {
        std::fill(m_stamp.begin(), m_stamp.end(), 0);
        m_stampNow = 1;
    }
    const int c0 = std::clamp(int(std::floor(r.left() / m_cell)), 0, m_cols - 1),
              c1 = std::clamp(int(std::floor(r.right() / m_cell)), 0, m_cols - 1);
    const int r0 = std::clamp(int(std::floor(r.top() / m_cell)), 0, m_rows - 1),
              r1 = std::clamp(int(std::floor(r.bottom() / m_cell)), 0, m_rows - 1);
    for (int row = r0; row <= r1; ++row)
        for (int c = c0; c <= c1; ++c)
            for (uint32_t i : m_grid[size_t(row) * size_t(m_cols) + size_t(c)]) {
                if (m_stamp[i] == m_stampNow)
                    continue;
                m_stamp[i] = m_stampNow;
                const auto &it = m_view.items[i];
                if (QRectF(it.x, it.y, it.w, it.h).intersects(r))
                    out.push_back(int(i));
            }
    return out;
}

int GraphCanvas::itemAt(QPointF pos) const
{
    if (QRectF(legendRect()).contains(pos)) // the legend's bar is over no item
        return -1;
    const QPointF s = toScene(pos);
    for (int i : itemsIn(QRectF(s.x() - 1, s.y() - 1, 2, 2))) {
        const auto &it = m_view.items[size_t(i)];
        if (QRectF(it.x, it.y, it.w, it.h).contains(s))
            return i;
    }
    return -1;
}

QRectF GraphCanvas::itemRect(int item) const
{
    if (item < 0 || size_t(item) >= m_view.items.size())
        return {};
    const auto &it = m_view.items[size_t(item)];
    return onScreen(QRectF(it.x, it.y, it.w, it.h));
}

void GraphCanvas::setExpanded(const QString &module, bool expanded)
{
    const std::string m = module.toStdString();
    if (expanded == (m_expanded.count(m) > 0))
        return;
    // The picture stays where it was on screen: every item outside the module keeps its place
    // (placeInPlace), so one of them is held still; should the view be laid out afresh instead,
    // the module's box before expanding becomes its frame's top (and the frame's top the box).
    auto inModule = [&](const layout::ViewItem &it) { return it.module == m || it.module.rfind(m + ".", 0) == 0; };
    auto topOf = [&]() -> std::optional<QPointF> {
        for (const auto &f : m_frames)
            if (f.path == m)
                return QPointF(f.rect.center().x(), f.rect.top());
        for (const auto &it : m_view.items)
            if (inModule(it))
                return QPointF(it.x + it.w / 2, it.y);
        return std::nullopt;
    };
    std::string still;
    QPointF stillOnScreen;
    for (const auto &it : m_view.items)
        if (!inModule(it)) {
            still = it.label;
            stillOnScreen = QPointF(it.x, it.y) * m_scale + m_offset;
            break;
        }
    const auto before = topOf();
    const QPointF onScreen = before ? *before * m_scale + m_offset : QPointF();
    if (expanded)
        m_expanded.insert(m);
    else {
        // Collapsing a module collapses what lies inside it too.
        for (auto it = m_expanded.begin(); it != m_expanded.end();)
            it = (*it == m || it->rfind(m + ".", 0) == 0) ? m_expanded.erase(it) : std::next(it);
    }
    const bool inPlace = relayout(true, Placement::InPlace);
    bool held = false;
    for (const auto &it : m_view.items)
        if (inPlace && it.label == still) {
            m_offset = stillOnScreen - QPointF(it.x, it.y) * m_scale;
            held = true;
            break;
        }
    if (const auto after = topOf(); !held && before && after)
        m_offset = onScreen - *after * m_scale;
    for (const Frame &f : m_frames)
        if (expanded && f.path == m)
            bringIn(f.rect);          // opened past an edge: what it holds comes into view
    settle(focusOf(m), Settle::Hold); // nothing cut at an edge, the module and the titles around it in view
    update();
    Q_EMIT viewChanged();
    Q_EMIT moduleToggled(module, expanded);
}

void GraphCanvas::expandAll()
{
    if (!m_graph)
        return;
    m_expanded = layout::allModules(*m_graph);
    relayout(false);
    readableView();
}

void GraphCanvas::collapseAll()
{
    m_expanded.clear();
    relayout(false);
    fitToView();
}

int GraphCanvas::itemOf(const ir::Node *n) const { return n && n->id() < m_view.itemOfNode.size() ? m_view.itemOfNode[n->id()] : -1; }

bool GraphCanvas::selectNode(const QString &name)
{
    if (!m_graph)
        return false;
    const ir::Node *node = nullptr;
    for (ir::Node *n = m_graph->first(); n; n = n->next())
        if (QString::fromStdString(n->name()) == name)
            node = n;
    if (!node)
        return false;
    if (std::exchange(m_untouched, false) && itemOf(node) >= 0) {
        // A file's first selection (its first candidate) opens no module: the overview it opened
        // with when legible, else the box that holds the node centred; it is outlined.
        m_selected = itemOf(node);
        if (!revealInOverview(m_selected))
            landOn(m_selected, true); // from the view it opened with (its inputs), panned the least
        update();
        Q_EMIT viewChanged();
        return true;
    }
    revealNodes({node});                   // expand the modules that hide it
    if (m_view.itemOfNode[node->id()] < 0) // a constant nobody reads (hidden)
        return false;
    m_selected = m_view.itemOfNode[node->id()];
    landOn(m_selected);
    update();
    Q_EMIT viewChanged();
    return true;
}

void GraphCanvas::revealNodes(const std::vector<const ir::Node *> &nodes)
{
    bool changed = false;
    for (const ir::Node *n : nodes)
        for (const auto &f : layout::displayModules(n))
            if (!f.path.empty() && m_expanded.insert(f.path).second)
                changed = true;
    if (changed)
        relayout(false, Placement::InPlace);
}

QString GraphCanvas::selectedLabel() const
{
    return m_selected >= 0 ? QString::fromStdString(m_view.items[size_t(m_selected)].label) : QString();
}

void GraphCanvas::paintScene(QPainter &p, const QRectF &sceneRect, double scale, bool everything)
{
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    const QColor text = palette().color(QPalette::WindowText), edge = dark ? QColor(140, 140, 150) : QColor(120, 120, 130);
    std::vector<int> items;
    if (everything) {
        items.resize(m_view.items.size());
        for (size_t i = 0; i < items.size(); ++i)
            items[i] = int(i);
    } else {
        items = itemsIn(sceneRect);
    }
    // Edges of visible items, and those crossing the view (edgesToDraw).
    // With thousands of items in view, edges are a grey wash that costs most of the frame.
    paintFrames(p, sceneRect, scale, everything);
    // What the last step removed: red ghosts where the nodes were.
    for (const auto &g : m_ghosts) {
        const QRectF r(g.x, g.y, g.w, g.h);
        if (!everything && !sceneRect.intersects(r))
            continue;
        p.setPen(QPen(QColor(200, 40, 40), 1.0 / std::max(scale, 0.05), Qt::DashLine));
        p.setBrush(QColor(240, 120, 120, 70));
        p.drawRoundedRect(r, 6, 6);
        if (32 * scale >= 14 || everything) {
            p.setPen(QColor(170, 40, 40));
            QFont gf = p.font();
            gf.setPixelSize(11);
            gf.setStrikeOut(true);
            p.setFont(gf);
            p.drawText(r.adjusted(6, 2, -6, -2), Qt::AlignLeft | Qt::AlignTop, QString::fromStdString(g.label));
            gf.setStrikeOut(false);
            p.setFont(gf);
        }
    }
    if (everything || items.size() <= kEdgeItemLimit)
        paintEdges(p, items, sceneRect, scale, everything, edge);
    paintFrameTitles(p, sceneRect, scale, everything);
    if (!everything && 32 * scale < 3 && p.device() && p.device()->devType() == QInternal::Image) {
        // Items smaller than a few pixels: write them straight into the image (a painter call per
        // item costs more than the pixels it changes).
        paintPixels(*static_cast<QImage *>(p.device()), p.transform(), items, dark);
        return;
    }
    const bool boxesOnly = !everything && scale < 0.25;
    const bool textLegible = everything || 32 * scale >= 14;
    QFont f = font();
    f.setPixelSize(12);
    p.setFont(f);
    for (int i : items) {
        const auto &it = m_view.items[size_t(i)];
        const QRectF r(it.x, it.y, it.w, it.h);
        QColor fill = heatTint(categoryFill(it, dark), heatOf(i));
        if (const auto d = diffOf(i); d != DiffMark::None)
            fill = diffColour(d, dark);
        const int hl = highlightOf(i);
        if (boxesOnly && hl == 0 && i != m_selected && !isSearchHit(i)) {
            p.fillRect(r, fill);
            continue;
        }
        const bool hit = isSearchHit(i);
        QPen pen(hl == 2               ? QColor(220, 40, 40)
                     : hl == 1         ? QColor(240, 140, 0)
                     : i == m_selected ? text
                     : hit             ? QColor(200, 160, 0)
                                       : fill.darker(160));
        const bool strong = hl || i == m_selected || hit;
        pen.setWidthF((strong ? 3.0 : 1.0) / std::max(scale, 0.05));
        if (scale < 0.05)
            pen.setWidthF(strong ? 3.0 / scale : 0.0);
        p.setPen(pen);
        p.setBrush(fill);
        if (it.kind == ViewItem::Kind::Module)
            p.drawRect(r);
        else
            p.drawRoundedRect(r, 6, 6);
        if (isMarked(i)) { // a red dot ringed in the base colour: seen on a red-tinted box too
            p.setPen(QPen(palette().color(QPalette::Base), 2));
            p.setBrush(QColor(220, 40, 40));
            p.drawEllipse(QPointF(it.x + it.w - 6, it.y + 6), 3.5, 3.5);
        }
        if (textLegible) {
            p.setPen(text);
            const QRectF inner = r.adjusted(6, 2, -6, -2);
            const QString detail = QString::fromStdString(it.value.empty() ? it.detail : it.detail + "  " + it.value);
            p.drawText(inner, Qt::AlignLeft | Qt::AlignTop, boxTitle(it, p.fontMetrics(), int(inner.width())));
            QFont small = f;
            small.setPixelSize(10);
            p.setFont(small);
            p.drawText(inner, Qt::AlignLeft | Qt::AlignBottom,
                       it.kind == ViewItem::Kind::Module ? elideDetail(detail, QFontMetrics(small), int(inner.width()))
                                                         : QFontMetrics(small).elidedText(detail, Qt::ElideMiddle, int(inner.width())));
            paintAnchorNote(p, i);
            p.setFont(f);
        }
    }
    paintKernelGroups(p, scale);
}

/// Items as single-colour rectangles written into the image.
void GraphCanvas::paintPixels(QImage &image, const QTransform &t, const std::vector<int> &items, bool dark)
{
    QImage *img = &image;
    // Items smaller than a few pixels: write them straight into the image (a painter call per
    // item costs more than the pixels it changes).
    const double sx = t.m11(), sy = t.m22(), dx = t.dx(), dy = t.dy();
    const int W = img->width(), H = img->height();
    if (m_pixelColor.size() != m_view.items.size()) {
        m_pixelColor.resize(m_view.items.size());
        for (size_t k = 0; k < m_view.items.size(); ++k)
            m_pixelColor[k] = heatTint(categoryFill(m_view.items[k], dark).darker(125), heatOf(int(k))).rgba();
    }
    for (int i : items) {
        const auto &it = m_view.items[size_t(i)];
        const int x0 = std::max(0, int(it.x * sx + dx)), x1 = std::min(W - 1, std::max(x0, int((it.x + it.w) * sx + dx)));
        const int y0 = std::max(0, int(it.y * sy + dy)), y1 = std::min(H - 1, std::max(y0, int((it.y + it.h) * sy + dy)));
        if (x0 >= W || y0 >= H)
            continue;
        const QRgb c = highlightOf(i) == 0 ? m_pixelColor[size_t(i)] : qRgb(240, 140, 0);
        for (int y = y0; y <= y1; ++y) {
            auto *line = reinterpret_cast<QRgb *>(img->scanLine(y));
            for (int x = x0; x <= x1; ++x)
                line[x] = c;
        }
    }
}

void GraphCanvas::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_view.items.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, m_graph ? tr("empty graph") : tr("Open a graph (File ▸ Open, or drop a file here)"));
        return;
    }
    const QRect vp = sceneViewport();
    const QRectF visible(toScene(vp.topLeft()), toScene(QPointF(vp.right() + 1, vp.bottom() + 1)));
    p.setClipRect(vp); // the legend's bar below is never drawn over
    if (32 * m_scale < 3) {
        // Items of a few pixels are written into an image directly (see paintScene).
        if (m_frame.size() != size())
            m_frame = QImage(size(), QImage::Format_ARGB32_Premultiplied);
        m_frame.fill(palette().color(QPalette::Base));
        QPainter ip(&m_frame);
        ip.translate(m_offset);
        ip.scale(m_scale, m_scale);
        paintScene(ip, visible, m_scale, false);
        ip.end();
        p.drawImage(0, 0, m_frame);
    } else {
        p.setRenderHint(QPainter::Antialiasing, m_scale > 0.3);
        p.translate(m_offset);
        p.scale(m_scale, m_scale);
        paintScene(p, visible, m_scale, false);
        p.resetTransform();
    }
    if (const QRect mr = minimapRect(); !mr.isEmpty()) {
        // Faint where it lies over nodes, so that they show through it (its outline and the red
        // rectangle of the view stay).
        const bool faint = minimapOverItems(mr);
        p.setOpacity(faint ? kFaintMinimap : 0.85);
        if (!faint) {
            p.fillRect(mr.adjusted(-3, -3, 3, 3), palette().color(QPalette::Window));
            p.fillRect(mr, palette().color(QPalette::Base));
        }
        p.drawImage(mr.topLeft(), m_minimapImage);
        p.setOpacity(1);
        // The part of the scene in view.
        const double sx = mr.width() / std::max(m_view.width, 1.0), sy = mr.height() / std::max(m_view.height, 1.0);
        QRectF vr(mr.left() + visible.left() * sx, mr.top() + visible.top() * sy, visible.width() * sx, visible.height() * sy);
        p.setPen(QPen(QColor(220, 40, 40), 1.5));
        p.setBrush(Qt::NoBrush);
        p.drawRect(vr.intersected(QRectF(mr).adjusted(-1, -1, 1, 1)));
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(mr.adjusted(-3, -3, 3, 3));
    }
    paintContextTitle(p);
    p.setClipping(false);
    if (!legendRect().isEmpty())
        paintLegend(p);
}

bool GraphCanvas::minimapOverItems(const QRect &minimap) const
{
    const QRectF cover = QRectF(minimap).adjusted(-3, -3, 3, 3);
    const auto items = itemsIn(QRectF(toScene(cover.topLeft()), cover.size() / m_scale));
    return std::any_of(items.begin(), items.end(), [&](int i) { return itemRect(i).intersects(cover); });
}

QRect GraphCanvas::minimapRect() const
{
    const QRect vp = sceneViewport();
    const QRectF visible(toScene(vp.topLeft()), toScene(QPointF(vp.right() + 1, vp.bottom() + 1)));
    if (!m_minimap || m_minimapImage.isNull() || visible.contains(m_content))
        return {};
    return QRect(QPoint(vp.right() + 1 - m_minimapImage.width() - 12, vp.bottom() + 1 - m_minimapImage.height() - 12),
                 m_minimapImage.size());
}

void GraphCanvas::changeEvent(QEvent *e)
{
    QWidget::changeEvent(e);
    if (e->type() == QEvent::PaletteChange) {
        renderMinimap();
        update();
    }
}

void GraphCanvas::renderMinimap()
{
    m_minimapImage = QImage();
    if (m_view.items.empty())
        return;
    const double aspect = m_view.width / std::max(m_view.height, 1.0);
    constexpr int maxW = 180, maxH = 110;
    int w = maxW, h = int(maxW / std::max(aspect, 1e-3));
    if (h > maxH) {
        h = maxH;
        w = std::max(20, int(maxH * aspect));
    }
    h = std::max(h, 12);
    w = std::min(w, maxW);
    m_minimapImage = QImage(w, h, QImage::Format_ARGB32_Premultiplied);
    m_minimapImage.fill(Qt::transparent); // on the plate paintEvent lays, or over the drawing
    const double sx = w / std::max(m_view.width, 1.0), sy = h / std::max(m_view.height, 1.0);
    QPainter p(&m_minimapImage);
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    for (const auto &it : m_view.items)
        p.fillRect(QRectF(it.x * sx, it.y * sy, std::max(1.0, it.w * sx), std::max(1.0, it.h * sy)), categoryFill(it, dark).darker(115));
}

void GraphCanvas::setMinimapVisible(bool on)
{
    m_minimap = on;
    update();
}

void GraphCanvas::setEngine(Engine e)
{
    if (e == m_engine)
        return;
    m_engine = e;
    relayout(false);
    fitToView();
}

void GraphCanvas::cancelLayout()
{
    if (!m_job)
        return;
    m_job = 0;
    Q_EMIT layoutFinished(false, tr("cancelled"));
}

void GraphCanvas::startGraphviz()
{
#ifdef FXLENS_HAVE_GRAPHVIZ
    const uint64_t id = ++m_jobs;
    m_job = id;
    auto input = std::make_shared<layout::ViewGraph>(m_view);
    auto error = std::make_shared<QString>();
    QThread *t = QThread::create([input, error] {
        auto r = layout::graphvizLayout(*input);
        if (!r)
            *error = QString::fromStdString(r.error().message);
    });
    connect(t, &QThread::finished, this, [this, t, id, input, error] {
        t->deleteLater();
        if (m_job != id)
            return; // cancelled or superseded
        m_job = 0;
        if (!error->isEmpty()) {
            Q_EMIT layoutFinished(false, *error);
            return;
        }
        m_view = std::move(*input);
        indexEdges(); // the routes Graphviz drew
        computeFrames();
        rebuildIndex();
        placeKernelGroups();
        placeLabels();
        renderMinimap();
        fitToView();
        Q_EMIT layoutFinished(true, QString());
    });
    Q_EMIT layoutStarted();
    t->start();
#else
    Q_EMIT layoutFinished(false, tr("this build has no Graphviz"));
#endif
}

void GraphCanvas::wheelEvent(QWheelEvent *e)
{
    const double steps = e->angleDelta().y() / 120.0;
    zoomBy(std::pow(1.25, steps), e->position());
    e->accept();
}

void GraphCanvas::mousePressEvent(QMouseEvent *e)
{
    if (e->button() != Qt::LeftButton)
        return;
    m_afterDoubleClick = false;
    if (minimapRect().contains(e->pos())) {
        // Centre the view on the scene point under the click.
        const QRect mr = minimapRect();
        const QPointF s((e->position().x() - mr.left()) / mr.width() * m_view.width,
                        (e->position().y() - mr.top()) / mr.height() * m_view.height);
        m_offset = viewportCentre() - s * m_scale;
        m_dragging = true; // not a selection click
        update();
        Q_EMIT viewChanged();
        return;
    }
    m_dragFrom = e->pos();
    m_dragging = scrollToContextTitle(e->pos()); // then not a selection click
}

void GraphCanvas::mouseMoveEvent(QMouseEvent *e)
{
    if (!(e->buttons() & Qt::LeftButton))
        return;
    const QPoint d = e->pos() - m_dragFrom;
    if (!m_dragging && d.manhattanLength() < 4)
        return;
    m_dragging = true;
    m_untouched = false;
    m_offset += d;
    m_dragFrom = e->pos();
    update();
    Q_EMIT viewChanged();
}

void GraphCanvas::mouseReleaseEvent(QMouseEvent *e)
{
    if (e->button() != Qt::LeftButton || m_dragging || std::exchange(m_afterDoubleClick, false)) {
        // A drag pans; the release of a double-click selects nothing: the layout has moved
        // another item under the pointer (what was double-clicked was selected by its first click).
        m_dragging = false;
        return;
    }
    const int i = itemAt(e->position());
    if (i < 0 && !QRectF(legendRect()).contains(e->position()))
        if (const int g = kernelGroupAt(e->position()); g >= 0) {
            setSelectedKernelGroup(g);
            Q_EMIT kernelGroupClicked(g);
            return;
        }
    m_selected = i;
    update();
    if (i >= 0 && m_view.items[size_t(i)].node)
        Q_EMIT nodeSelected(QString::fromStdString(m_view.items[size_t(i)].label));
    else if (i >= 0 && m_view.items[size_t(i)].kind == ViewItem::Kind::Module)
        Q_EMIT moduleSelected(QString::fromStdString(m_view.items[size_t(i)].module));
    else if (i < 0)
        Q_EMIT nodeSelected(QString()); // nothing there: nothing selected (the panels follow)
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent *e)
{
    m_afterDoubleClick = e->button() == Qt::LeftButton;
    const int i = itemAt(e->position());
    if (i < 0) { // on a frame: fold its module
        if (const int f = frameAt(e->position()); f >= 0 && !QRectF(legendRect()).contains(e->position()))
            setExpanded(QString::fromStdString(m_frames[size_t(f)].path), false);
        return;
    }
    const auto &it = m_view.items[size_t(i)];
    if (it.kind == ViewItem::Kind::Module && it.stacked)
        unstack(it.stack);
    else if (it.kind == ViewItem::Kind::Module)
        setExpanded(QString::fromStdString(it.module), true);
    else if (!it.module.empty())
        setExpanded(QString::fromStdString(it.module), false); // double-click a node: fold its module
}

void GraphCanvas::keyPressEvent(QKeyEvent *e)
{
    const QPointF c = viewportCentre();
    if (e->key() == Qt::Key_Plus || e->key() == Qt::Key_Equal)
        zoomBy(1.25, c);
    else if (e->key() == Qt::Key_Minus)
        zoomBy(0.8, c);
    else if (e->key() == Qt::Key_0 || e->key() == Qt::Key_F) {
        fitToView();
        m_untouched = false;
    } else
        QWidget::keyPressEvent(e);
}

void GraphCanvas::addLayoutStatus(QStatusBar *bar)
{
    auto *busy = new QProgressBar(bar);
    busy->setRange(0, 0);
    busy->setMaximumWidth(120);
    busy->hide();
    auto *cancel = new QPushButton(tr("Cancel layout"), bar);
    cancel->hide();
    bar->addWidget(busy);
    bar->addWidget(cancel);
    connect(cancel, &QPushButton::clicked, this, &GraphCanvas::cancelLayout);
    connect(this, &GraphCanvas::layoutStarted, bar, [bar, busy, cancel] {
        busy->show();
        cancel->show();
        bar->showMessage(tr("Graphviz layout running…"));
    });
    connect(this, &GraphCanvas::layoutFinished, bar, [bar, busy, cancel](bool applied, const QString &error) {
        busy->hide();
        cancel->hide();
        bar->showMessage(applied ? tr("Graphviz layout done") : tr("Graphviz layout: %1").arg(error), 4000);
    });
}

void GraphCanvas::setView(double scale, QPointF sceneCentre)
{
    m_scale = std::clamp(scale, 1e-5, 8.0);
    m_offset = QPointF(width() / 2.0, height() / 2.0) - sceneCentre * m_scale;
    update();
}

QPointF GraphCanvas::viewCentre() const { return toScene(QPointF(width() / 2.0, height() / 2.0)); }

} // namespace fxlens::views
