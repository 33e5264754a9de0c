// SPDX-License-Identifier: MIT
// Graphviz rendering of DOT text through the Graphviz C library (libgvc).
#pragma once

#include "util/Diagnostic.h"

#include <string>

namespace fxlens::layout {

/// Lays out `dot` with the given engine ("dot", "sfdp", ...) and renders it in `format`
/// ("svg", "png", "plain", "xdot"). Graphviz is not thread safe: calls are serialized.
Result<std::string> renderDot(const std::string &dot, const std::string &format, const std::string &engine = "dot");

struct ViewGraph;

/// Lays a canvas view out with Graphviz `dot` instead of the layered layout (small views: dot's
/// crossing minimisation is better, and it needs seconds at 2k items and minutes at 20k). Item
/// sizes are kept; positions are replaced.
Status graphvizLayout(ViewGraph &v);

} // namespace fxlens::layout
