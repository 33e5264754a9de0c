// SPDX-License-Identifier: MIT
// GraphCanvas: the whole scene as SVG or PNG, the view as PNG (see GraphCanvas.h).
#include "GraphCanvas.h"

#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>

namespace fxlens::views {

bool GraphCanvas::exportSvg(const QString &path)
{
    QSaveFile file(path); // atomic: the previous file stays until the new one is complete
    if (!file.open(QIODevice::WriteOnly))
        return false;
    QSvgGenerator gen;
    gen.setOutputDevice(&file);
    gen.setSize(QSize(int(std::ceil(m_view.width)) + 40, int(std::ceil(m_view.height)) + 40));
    gen.setViewBox(QRectF(-20, -20, m_view.width + 40, m_view.height + 40));
    gen.setTitle(QStringLiteral("fxlens graph"));
    QPainter p;
    if (!p.begin(&gen))
        return false;
    paintScene(p, QRectF(0, 0, m_view.width, m_view.height), 1.0, true);
    p.end();
    return file.commit();
}

bool GraphCanvas::exportPng(const QString &path)
{
    QSaveFile file(path);
    return file.open(QIODevice::WriteOnly) && grab().save(&file, "PNG") && file.commit();
}

bool GraphCanvas::exportScenePng(const QString &path, double scale, double *usedScale)
{
    constexpr double kMaxSide = 16384;
    scale = std::min({scale, kMaxSide / std::max(m_view.width + 40, 1.0), kMaxSide / std::max(m_view.height + 40, 1.0)});
    if (usedScale)
        *usedScale = scale;
    QImage image(QSize(std::max(1, int(std::ceil((m_view.width + 40) * scale))), std::max(1, int(std::ceil((m_view.height + 40) * scale)))),
                 QImage::Format_ARGB32_Premultiplied);
    image.fill(palette().color(QPalette::Base));
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.scale(scale, scale);
    p.translate(20, 20);
    paintScene(p, QRectF(0, 0, m_view.width, m_view.height), 1.0, true);
    p.end();
    QSaveFile file(path);
    return file.open(QIODevice::WriteOnly) && image.save(&file, "PNG") && file.commit();
}

} // namespace fxlens::views
