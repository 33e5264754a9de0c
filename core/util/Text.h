// SPDX-License-Identifier: MIT
// Small text helpers shared by writers and views.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

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

/// A count with its noun in the right number: "1 node", "3 nodes", "0 matches". The plural is
/// the singular with "s" (or "es" after s, x, z, ch, sh) unless given.
inline std::string countOf(size_t n, std::string_view singular, std::string_view plural = {})
{
    std::string noun(singular);
    if (n != 1) {
        if (!plural.empty()) {
            noun = plural;
        } else {
            const auto ends = [&](std::string_view e) {
                return noun.size() >= e.size() && noun.compare(noun.size() - e.size(), e.size(), e) == 0;
            };
            noun += ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh") ? "es" : "s";
        }
    }
    return std::to_string(n) + ' ' + noun;
}

} // namespace fxlens
