// SPDX-License-Identifier: MIT
// Tooltips computed from the position (canvas items and edges, timeline events, chart bars).
#pragma once

#include <QEvent>
#include <QHelpEvent>
#include <QToolTip>
#include <QWidget>

namespace fxlens::views {

/// For a widget's event(): on a tooltip request, shows `textAt(position)` (or hides the tooltip
/// when it is empty) and returns true; false for any other event.
template <class TextAt> bool showToolTip(QWidget *w, QEvent *e, TextAt textAt)
{
    if (e->type() != QEvent::ToolTip)
        return false;
    auto *he = static_cast<QHelpEvent *>(e);
    const QString text = textAt(he->pos());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(he->globalPos(), text, w);
    return true;
}

} // namespace fxlens::views
