// SPDX-License-Identifier: MIT
// GraphCanvas: the frames of expanded modules (see GraphCanvas.h, Frame): one rectangle each, as
// the layout left room for them (layout::moduleFrames), painted under the items, hit by a
// double-click.
#include "GraphCanvas.h"

#include <QPainter>
#include <QPainterPath>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace fxlens::views {

using layout::ViewItem;

namespace {

/// Whether a frame of module `path` would hold another module's node (a module called several
/// times, its calls apart): such a frame is not drawn.
bool claimsOthers(const QPainterPath &shape, const std::vector<ViewItem> &items, const std::string &path)
{
    auto isMember = [&](const ViewItem &x) { return x.module == path || x.module.rfind(path + ".", 0) == 0; };
    for (const auto &x : items)
        if (!isMember(x) && shape.contains(QPointF(x.x + x.w / 2, x.y + x.h / 2)))
            return true;
    return false;
}

/// Frames around items at the scene's edge reach past it: the scene moves and grows to hold them.
void makeRoom(layout::ViewGraph &view, std::vector<GraphCanvas::Frame> &frames)
{
    double left = 0, top = 0;
    for (const auto &f : frames)
        left = std::min(left, f.rect.left()), top = std::min(top, f.rect.top());
    if (left < 0 || top < 0) {
        const double dx = -left + 2, dy = -top + 2;
        for (auto &it : view.items)
            it.x += dx, it.y += dy;
        for (auto &e : view.edges) {
            for (auto &pt : e.route)
                pt.x += dx, pt.y += dy;
            for (auto &pt : e.via)
                pt.x += dx, pt.y += dy;
        }
        view.width += dx;
        view.height += dy;
        for (auto &f : frames) {
            f.rect.translate(dx, dy);
            f.shape.translate(dx, dy);
        }
    }
    for (const auto &f : frames) {
        view.width = std::max(view.width, f.rect.right() + 2);
        view.height = std::max(view.height, f.rect.bottom() + 2);
    }
}

} // namespace

void GraphCanvas::computeFrames()
{
    m_frames.clear();
    constexpr size_t kFramedItems = 20000;
    if (m_expanded.empty() || m_view.items.empty() || m_view.items.size() > kFramedItems)
        return;
    for (const auto &f : layout::moduleFrames(m_view)) {
        const QRectF rect(QPointF(f.x0, f.y0), QPointF(f.x1, f.y1));
        QPainterPath shape;
        shape.addRect(rect);
        // Never claim another module's node (a layout that could not keep them apart).
        if (claimsOthers(shape, m_view.items, f.path))
            continue;
        m_frames.push_back({f.path, rect, f.depth, f.members, shape});
    }
    makeRoom(m_view, m_frames);
}

QRectF GraphCanvas::Frame::titleRect() const
{
    return QRectF(rect.left() + layout::kFramePad, rect.top() + 1, std::max(0.0, rect.width() - 2 * layout::kFramePad),
                  layout::kFrameTitle - 2);
}

QFont GraphCanvas::Frame::titleFont(int pixels)
{
    QFont f;
    f.setPixelSize(pixels);
    f.setBold(true);
    return f;
}

QRectF GraphCanvas::Frame::titlePlate(int pixels) const
{
    const QRectF band = titleRect();
    const QFontMetrics fm(titleFont(pixels));
    const QString title = fm.elidedText(QString::fromStdString(path), Qt::ElideLeft, int(band.width()));
    return QRectF(band.left() - 2, band.top(), std::min(band.width() + 2, double(fm.horizontalAdvance(title)) + 4), band.height());
}

/// A frame's tint and its translucent fill (as paintFrames draws them).
std::pair<QColor, QColor> GraphCanvas::frameColors(const Frame &fr, bool dark)
{
    const QColor tint = QColor::fromHsv((fr.depth * 47 + 200) % 360, 40, dark ? 90 : 250);
    QColor fill = tint;
    fill.setAlpha(dark ? 60 : 70);
    return {tint, fill};
}

void GraphCanvas::paintFrames(QPainter &p, const QRectF &sceneRect, double scale, bool everything)
{
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    for (const auto &fr : m_frames) {
        if (!everything && !sceneRect.intersects(fr.rect))
            continue;
        const auto [tint, fill] = frameColors(fr, dark);
        p.setPen(QPen(dark ? QColor(255, 255, 255, 40) : QColor(0, 0, 0, 36), 1.0 / std::max(scale, 0.05)));
        p.setBrush(fill);
        p.drawPath(fr.shape);
    }
}

void GraphCanvas::paintFrameTitles(QPainter &p, const QRectF &sceneRect, double scale, bool everything)
{
    // Zoomed out, the title grows in scene pixels (up to its band's height) to stay 7 screen
    // pixels high, as far as the band holds it: titles stay where node text is still drawn.
    const int pixels = everything ? 11 : int(std::clamp(std::ceil(7 / std::max(scale, 1e-3)), 11.0, layout::kFrameTitle - 2));
    if (m_frames.empty() || !(everything || pixels * scale >= 6))
        return;
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    const QFont f = Frame::titleFont(pixels);
    const QFontMetrics fm(f);
    p.setFont(f);
    for (const auto &fr : m_frames) {
        if (!everything && !sceneRect.intersects(fr.rect))
            continue;
        // The name at the top-left, in the frame's own title band (frames nest with a band each),
        // over the edges that cross the band: its plate is the frames' colours without them.
        const QRectF band = fr.titleRect();
        const QString title = fm.elidedText(QString::fromStdString(fr.path), Qt::ElideLeft, int(band.width()));
        const QRectF plate = fr.titlePlate(pixels);
        p.setPen(Qt::NoPen);
        p.setBrush(palette().color(QPalette::Base));
        p.drawRect(plate);
        for (const auto &outer : m_frames)
            if (outer.rect.contains(plate)) // outermost first, as painted
                p.setBrush(frameColors(outer, dark).second), p.drawRect(plate);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(band, Qt::AlignLeft | Qt::AlignVCenter, title);
    }
}

std::pair<int, QRect> GraphCanvas::contextTitle() const
{
    const QRect vp = sceneViewport();
    constexpr int kBody = 48; // of the frame below the edge: a sliver needs no name
    int inner = -1;
    for (size_t k = 0; k < m_frames.size(); ++k) { // outermost first: the last across is the innermost
        const QRectF r = onScreen(m_frames[k].rect);
        if (r.top() < vp.top() && r.bottom() > vp.top() + kBody && r.right() > vp.left() && r.left() < vp.right())
            inner = int(k);
    }
    if (inner < 0 || onScreen(m_frames[size_t(inner)].titlePlate()).bottom() > vp.top() + 2)
        return {-1, {}}; // none, or its title still shows
    const QFontMetrics fm(Frame::titleFont());
    const QString path = QString::fromStdString(m_frames[size_t(inner)].path);
    const int width = std::min(fm.horizontalAdvance(path) + 16, vp.width() - 16); // 6 px either side, 4 to spare
    const QRect plate(vp.left() + 8, vp.top() + 4, std::max(width, 0), fm.height() + 6);
    // A frame title shown right there says the path already (titles are whole paths).
    for (const Frame &f : m_frames)
        if (onScreen(f.titlePlate()).intersects(plate))
            return {-1, {}};
    return {inner, plate};
}

void GraphCanvas::paintContextTitle(QPainter &p) const
{
    const auto [f, plate] = contextTitle();
    if (f < 0 || plate.width() < 24)
        return;
    const Frame &fr = m_frames[size_t(f)];
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    p.setPen(Qt::NoPen);
    p.setBrush(palette().color(QPalette::Base));
    p.drawRoundedRect(plate, 3, 3);
    p.setBrush(frameColors(fr, dark).first);
    p.setPen(palette().color(QPalette::Mid));
    p.drawRoundedRect(QRectF(plate).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
    p.setFont(Frame::titleFont());
    p.setPen(palette().color(QPalette::WindowText));
    const QRect text = plate.adjusted(6, 0, -6, 0);
    p.drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(QString::fromStdString(fr.path), Qt::ElideLeft, text.width()));
}

bool GraphCanvas::scrollToContextTitle(QPoint pos)
{
    const auto [f, plate] = contextTitle();
    if (f < 0 || !plate.contains(pos))
        return false;
    const QRectF title = m_frames[size_t(f)].titlePlate();
    m_offset.ry() += sceneViewport().top() + 12 - (title.top() * m_scale + m_offset.y());
    m_untouched = false;
    update();
    Q_EMIT viewChanged();
    return true;
}

int GraphCanvas::frameAt(QPointF pos) const
{
    const QPointF s = toScene(pos);
    int best = -1;
    for (size_t k = 0; k < m_frames.size(); ++k) // outermost first: the last hit is the innermost
        if (m_frames[k].shape.contains(s))
            best = int(k);
    return best;
}

QString GraphCanvas::elideDetail(const QString &detail, const QFontMetrics &fm, int width)
{
    if (fm.horizontalAdvance(detail) <= width)
        return detail;
    // The class path is the first word ("transformers.models.bert.modeling_bert.BertEmbeddings, 5 ops · 5 weights").
    const qsizetype end = detail.indexOf(QRegularExpression(QStringLiteral("[ ,]")));
    const QString path = end < 0 ? detail : detail.left(end), rest = end < 0 ? QString() : detail.mid(end);
    const QString ellipsis = QStringLiteral("…");
    for (qsizetype dot = path.indexOf(QLatin1Char('.')); dot >= 0; dot = path.indexOf(QLatin1Char('.'), dot + 1)) {
        const QString shorter = ellipsis + path.mid(dot + 1) + rest;
        if (fm.horizontalAdvance(shorter) <= width)
            return shorter;
    }
    const qsizetype last = path.lastIndexOf(QLatin1Char('.'));
    return fm.elidedText(last < 0 ? detail : ellipsis + path.mid(last + 1) + rest, Qt::ElideRight, width);
}

QString GraphCanvas::boxTitle(const layout::ViewItem &it, const QFontMetrics &fm, int width)
{
    const QString label = QString::fromStdString(it.label);
    return it.kind == ViewItem::Kind::Module ? elideDetail(label, fm, width) : fm.elidedText(label, Qt::ElideRight, width);
}

} // namespace fxlens::views
