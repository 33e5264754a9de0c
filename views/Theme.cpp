// SPDX-License-Identifier: MIT
#include "Theme.h"

#include <QStyle>

namespace fxlens::views {

QPalette themePalette(bool dark, const QStyle *style)
{
    if (!dark)
        return style->standardPalette();
    QPalette p;
    p.setColor(QPalette::Window, QColor(45, 45, 48));
    p.setColor(QPalette::WindowText, QColor(220, 220, 220));
    p.setColor(QPalette::Base, QColor(30, 30, 32));
    p.setColor(QPalette::AlternateBase, QColor(45, 45, 48));
    p.setColor(QPalette::Text, QColor(220, 220, 220));
    p.setColor(QPalette::Button, QColor(55, 55, 58));
    p.setColor(QPalette::ButtonText, QColor(220, 220, 220));
    p.setColor(QPalette::Highlight, QColor(42, 130, 218));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Mid, QColor(90, 90, 95));
    p.setColor(QPalette::Link, QColor(120, 180, 255));
    p.setColor(QPalette::LinkVisited, QColor(190, 160, 255));
    p.setColor(QPalette::PlaceholderText, QColor(150, 150, 155));
    // Disabled buttons, actions and text are dimmed (setColor above set every group alike).
    const QColor dimmed(125, 125, 130);
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText, QPalette::HighlightedText})
        p.setColor(QPalette::Disabled, role, dimmed);
    p.setColor(QPalette::Disabled, QPalette::Button, QColor(48, 48, 51));
    p.setColor(QPalette::Disabled, QPalette::Base, QColor(40, 40, 42));
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(80, 80, 85));
    p.setColor(QPalette::Disabled, QPalette::Light, QColor(45, 45, 48)); // no embossed shadow under dimmed text
    return p;
}

QPalette themeCheckBoxPalette(bool dark, const QStyle *style)
{
    QPalette p = themePalette(dark, style);
    if (!dark)
        return p;
    // The box is drawn in Base, outlined in a shade of Window: both well lighter than the panel
    // (on the dark panel a Base-coloured box with a Window-dark outline is hard to see).
    p.setColor(QPalette::Base, QColor(120, 120, 126));
    p.setColor(QPalette::Window, QColor(200, 200, 206));
    p.setColor(QPalette::Text, Qt::white);                              // the check mark
    p.setColor(QPalette::Disabled, QPalette::Base, QColor(88, 88, 94)); // dimmer, still a box
    return p;
}

} // namespace fxlens::views
