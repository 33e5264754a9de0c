// SPDX-License-Identifier: MIT
// Counts in the views' text ("1 node", "3 nodes"): fxlens::countOf (util/Text.h) as a QString, one
// rule for every panel, the canvas and the status line.
#pragma once

#include "util/Text.h"

#include <QString>

#include <algorithm>

namespace fxlens::views {

/// "1 step", "2 steps", "1 match", "0 matches"; `plural` when "s"/"es" is not it ("1 op", "2 ops").
inline QString counted(qint64 n, const char *singular, const char *plural = "")
{
    return QString::fromStdString(fxlens::countOf(size_t(std::max<qint64>(n, 0)), singular, plural));
}

} // namespace fxlens::views
