// SPDX-License-Identifier: MIT
// Version lists (see VersionList.h).
#include "rewrite/VersionList.h"

#include <algorithm>
#include <cctype>

namespace fxlens::rewrite {

namespace {

std::string trim(const std::string &s)
{
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return s.substr(b, e - b);
}

/// A number, "last" or "current"; false when it is none of them.
bool oneVersion(const std::string &w, size_t latest, size_t current, size_t &v)
{
    if (w == "last" || w == "latest") {
        v = latest;
        return true;
    }
    if (w == "current") {
        v = current;
        return true;
    }
    if (w.empty() || w.size() > 9 || !std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return false;
    v = std::stoul(w);
    return true;
}

} // namespace

Result<std::vector<size_t>> parseVersionList(const std::string &text, size_t latest, size_t current)
{
    auto fail = [&](const std::string &m) { return Diagnostic{Diagnostic::Severity::Error, {}, 0, 0, {}, m}; };
    std::vector<size_t> out;
    size_t start = 0;
    const std::string all = trim(text);
    if (all.empty())
        return fail("no versions given (examples: 0,5,last  0-10  all  spread:10)");
    while (start <= all.size()) {
        const size_t comma = std::min(all.find(',', start), all.size());
        const std::string item = trim(all.substr(start, comma - start));
        start = comma + 1;
        size_t a = 0, b = 0;
        if (item == "all") {
            for (size_t v = 0; v <= latest; ++v)
                out.push_back(v);
        } else if (item.rfind("spread:", 0) == 0) {
            size_t n = 0;
            if (!oneVersion(item.substr(7), latest, current, n) || n < 1)
                return fail("'" + item + "': spread:N needs a count of 1 or more");
            n = std::min(n, latest + 1);
            for (size_t i = 0; i < n; ++i)
                out.push_back(n == 1 ? latest : (latest * i + (n - 1) / 2) / (n - 1));
        } else if (const size_t dash = item.find('-'); dash != std::string::npos) {
            if (!oneVersion(trim(item.substr(0, dash)), latest, current, a) ||
                !oneVersion(trim(item.substr(dash + 1)), latest, current, b) || a > b)
                return fail("'" + item + "' is not a range of versions (a-b with a <= b)");
            if (b > latest)
                return fail("'" + item + "' goes past the last version, " + std::to_string(latest));
            for (size_t v = a; v <= b; ++v)
                out.push_back(v);
        } else if (oneVersion(item, latest, current, a)) {
            if (a > latest)
                return fail("version " + item + " does not exist: the history has versions 0 to " + std::to_string(latest));
            out.push_back(a);
        } else {
            return fail("'" + item + "' is not a version (a number, last, current, a-b, all or spread:N)");
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::string versionLabel(const std::vector<Step> &history, size_t v)
{
    if (v == 0 || v > history.size())
        return v == 0 ? "original" : "";
    const Step &s = history[v - 1];
    return "step " + std::to_string(v) + " (" + s.pattern + " @ " + s.anchor + ")";
}

std::vector<VersionCopy> copyVersions(Session &s, const std::vector<size_t> &versions)
{
    std::vector<VersionCopy> out;
    if (std::any_of(versions.begin(), versions.end(), [&](size_t v) { return v > s.history().size(); }))
        return out;
    const size_t back = s.version();
    for (size_t v : versions) {
        s.checkout(v);
        out.push_back({v, versionLabel(s.history(), v), s.graph().clone()});
    }
    s.checkout(back);
    return out;
}

} // namespace fxlens::rewrite
