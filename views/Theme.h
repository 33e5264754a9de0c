// SPDX-License-Identifier: MIT
// The light and dark palettes of the app.
#pragma once

#include <QPalette>

class QStyle;

namespace fxlens::views {

/// The dark palette (window, text, links and placeholders readable), or the style's standard one.
QPalette themePalette(bool dark, const QStyle *style);
/// What check boxes take in that theme: in the dark one, the box lighter than the panel it is on.
QPalette themeCheckBoxPalette(bool dark, const QStyle *style);

} // namespace fxlens::views
