// SPDX-License-Identifier: MIT
// The tuning report: one self-contained HTML page (no script or style from the network) that any
// browser opens: the original, greedy and tuned versions measured, the search's measurements as a
// chart, each step of the tuned version with its diff and the measured difference of its group,
// the steps left out for cost, and drawings of the changed region before and after (SVG from the
// canvas' own layered layout, core/layout).
#pragma once

#include "ir/Graph.h"
#include "rewrite/Tune.h"

#include <set>
#include <string>

namespace fxlens::report {

struct ReportInfo {
    std::string graphFile;
    std::string device;
    std::string costNote; ///< how versions were measured ("cuda:0, CUDA graph replay, median of 20")
};

/// The page for a finished search over `original`.
std::string tuneReportHtml(const ir::Graph &original, const rewrite::TuneResult &r, const ReportInfo &info);

/// An SVG drawing of `g` laid out as the canvas lays it out (every module expanded), cropped to the
/// region around the nodes named in `marked` (drawn with `markColor`), at most `maxItems` items.
/// The whole graph when `marked` is empty or names no node.
std::string regionSvg(const ir::Graph &g, const std::set<std::string> &marked, const std::string &markColor, size_t maxItems = 300);

/// Text for HTML element content and attribute values.
std::string htmlEscape(const std::string &s);

} // namespace fxlens::report
