// SPDX-License-Identifier: MIT
// Small text helpers shared by writers.
#pragma once

#include <string>

namespace fxlens {

/// Escapes `"` and `\` with a backslash and newlines as `\n`: valid inside a DOT or JSON string.
inline std::string escapeQuoted(const std::string &s)
{
    std::string o;
    o.reserve(s.size());
    for (char c : s) {
        if (c == '"' || c == '\\')
            o += '\\';
        if (c == '\n') {
            o += "\\n";
            continue;
        }
        o += c;
    }
    return o;
}

} // namespace fxlens
