// SPDX-License-Identifier: MIT
// The light and dark palettes of the app.
#pragma once

#include <QPalette>

class QStyle;

namespace fxlens::views {

/// The dark palette (window, text, links and placeholders readable), or the style's standard one.
QPalette themePalette(bool dark, const QStyle *style);

} // namespace fxlens::views
