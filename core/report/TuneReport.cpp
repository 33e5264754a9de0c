// SPDX-License-Identifier: MIT
#include "report/TuneReport.h"

#include "ir/GraphDiff.h"
#include "layout/Layered.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace fxlens::report {

using rewrite::TuneResult;
using rewrite::TuneTrial;

std::string htmlEscape(const std::string &s)
{
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

namespace {

std::string fmt(const char *f, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string ms(double seconds) { return fmt("%.3f", seconds * 1e3) + " ms"; }
std::string signedMs(double seconds) { return fmt("%+.3f", seconds * 1e3) + " ms"; }

const char *fillOf(layout::OpCategory c)
{
    using C = layout::OpCategory;
    switch (c) {
    case C::Input: return "#d3ecd3";
    case C::Output: return "#f4d3d3";
    case C::Constant: return "#eee4cf";
    case C::MatMulConv: return "#cddff7";
    case C::Elementwise: return "#e3eefb";
    case C::Reduction: return "#e7dcf3";
    case C::ViewReshape: return "#e6e6e6";
    case C::DataMovement: return "#fbe3c9";
    case C::Normalization: return "#d2efec";
    case C::Module: return "#f5ecd9";
    case C::Other: return "#ffffff";
    }
    return "#ffffff";
}

std::string shortened(const std::string &s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "\u2026"; }

struct Box {
    double x0, y0, x1, y1;
    bool overlaps(const layout::ViewItem &it) const { return it.x < x1 && it.x + it.w > x0 && it.y < y1 && it.y + it.h > y0; }
};

/// The crop: the marked items near the first one (in reading order), with a margin.
Box cropAround(const layout::ViewGraph &v, const std::vector<size_t> &marked)
{
    if (marked.empty())
        return {0, 0, v.width, v.height};
    const auto &f = v.items[marked.front()];
    Box b{f.x, f.y, f.x + f.w, f.y + f.h};
    for (size_t i : marked) {
        const auto &it = v.items[i];
        if (std::abs(it.y - f.y) < 700 && std::abs(it.x - f.x) < 900)
            b = {std::min(b.x0, it.x), std::min(b.y0, it.y), std::max(b.x1, it.x + it.w), std::max(b.y1, it.y + it.h)};
    }
    const double m = 90;
    return {b.x0 - m, b.y0 - m, b.x1 + m, b.y1 + m};
}

void drawItem(std::ostringstream &o, const layout::ViewItem &it, bool mark, const std::string &markColor)
{
    o << "<g><rect x='" << it.x << "' y='" << it.y << "' width='" << it.w << "' height='" << it.h << "' rx='4' fill='"
      << fillOf(it.category) << "' stroke='" << (mark ? markColor : std::string("#7a7a7a")) << "' stroke-width='" << (mark ? 3 : 1)
      << "'/>";
    o << "<text x='" << it.x + 6 << "' y='" << it.y + 15 << "' font-size='11' font-family='sans-serif'>"
      << htmlEscape(shortened(it.label, size_t(std::max(4.0, it.w / 6.5)))) << "</text>";
    if (it.h > 26 && !it.detail.empty())
        o << "<text x='" << it.x + 6 << "' y='" << it.y + 28 << "' font-size='9' fill='#555' font-family='sans-serif'>"
          << htmlEscape(shortened(it.detail, size_t(std::max(4.0, it.w / 5.5)))) << "</text>";
    o << "<title>" << htmlEscape(it.label + (it.detail.empty() ? "" : " \u2014 " + it.detail) + (it.value.empty() ? "" : " " + it.value))
      << "</title></g>\n";
}

} // namespace

std::string regionSvg(const ir::Graph &g, const std::set<std::string> &marked, const std::string &markColor, size_t maxItems)
{
    layout::ViewGraph v = layout::buildView(g, layout::allModules(g));
    layout::layeredLayout(v);
    std::vector<size_t> hits;
    for (size_t i = 0; i < v.items.size(); ++i)
        if (v.items[i].node && marked.count(v.items[i].node->name()))
            hits.push_back(i);
    std::sort(hits.begin(), hits.end(),
              [&](size_t a, size_t b) { return v.items[a].y != v.items[b].y ? v.items[a].y < v.items[b].y : v.items[a].x < v.items[b].x; });
    Box crop = cropAround(v, hits);
    std::vector<size_t> shown;
    for (size_t i = 0; i < v.items.size() && shown.size() < maxItems; ++i)
        if (crop.overlaps(v.items[i]))
            shown.push_back(i);
    std::ostringstream o;
    o << "<svg xmlns='http://www.w3.org/2000/svg' class='graph' viewBox='" << crop.x0 << " " << crop.y0 << " " << crop.x1 - crop.x0 << " "
      << crop.y1 - crop.y0 << "' width='" << std::min(900.0, crop.x1 - crop.x0) << "'>\n";
    o << "<defs><marker id='arrow' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='6' markerHeight='6' orient='auto'>"
         "<path d='M0,0 L10,5 L0,10 z' fill='#888'/></marker></defs>\n";
    std::vector<uint8_t> in(v.items.size(), 0);
    for (size_t i : shown)
        in[i] = 1;
    for (const auto &e : v.edges) {
        if ((!in[e.from] && !in[e.to]) || e.route.size() < 2)
            continue;
        o << "<polyline fill='none' stroke='#999' stroke-width='1.2' marker-end='url(#arrow)' points='";
        for (const auto &p : e.route)
            o << p.x << "," << p.y << " ";
        o << "'/>\n";
    }
    for (size_t i : shown) {
        const auto &it = v.items[i];
        drawItem(o, it, it.node && marked.count(it.node->name()), markColor);
    }
    o << "</svg>\n";
    return o.str();
}

namespace {

/// Bars of every measurement in search order; the original and greedy times as lines.
std::string chartSvg(const TuneResult &r)
{
    const double w = 900, h = 240, left = 60, bottom = 30;
    double top = std::max(r.original.seconds, r.greedy.seconds);
    for (const auto &t : r.trials)
        top = std::max(top, t.seconds);
    top = top > 0 ? top * 1.1 : 1;
    const size_t n = std::max<size_t>(1, r.trials.size());
    const double bw = (w - left - 10) / double(n);
    auto y = [&](double s) { return (h - bottom) - (h - bottom - 10) * (s / top); };
    std::ostringstream o;
    o << "<svg xmlns='http://www.w3.org/2000/svg' class='chart' viewBox='0 0 " << w << " " << h << "' width='" << w << "'>\n";
    o << "<line x1='" << left << "' y1='" << h - bottom << "' x2='" << w << "' y2='" << h - bottom << "' stroke='#444'/>\n";
    for (int k = 0; k <= 4; ++k) {
        double s = top * k / 4;
        o << "<text x='" << left - 4 << "' y='" << y(s) + 4 << "' font-size='10' text-anchor='end' font-family='sans-serif'>"
          << fmt("%.3g", s * 1e3) << "</text>";
    }
    o << "<text x='4' y='12' font-size='10' font-family='sans-serif'>ms</text>\n";
    for (size_t i = 0; i < r.trials.size(); ++i) {
        const TuneTrial &t = r.trials[i];
        const char *fill = !t.error.empty() ? "#d9534f"
            : t.kind == "original"          ? "#9e9e9e"
            : t.kind == "greedy"            ? "#4a7fc1"
            : t.accepted                    ? "#3c9d5d"
                                            : "#c9d6e3";
        double yy = t.error.empty() ? y(t.seconds) : y(top * 0.05);
        o << "<rect x='" << left + bw * double(i) + 1 << "' y='" << yy << "' width='" << std::max(1.0, bw - 2) << "' height='"
          << (h - bottom) - yy << "' fill='" << fill << "'><title>"
          << htmlEscape(std::to_string(t.index) + " " + t.kind + ": " + t.decision)
          << (t.error.empty() ? " \u2014 " + ms(t.seconds) : " \u2014 " + htmlEscape(t.error)) << "</title></rect>\n";
    }
    for (auto [s, c, label] : {std::tuple{r.original.seconds, "#9e9e9e", "original"}, std::tuple{r.greedy.seconds, "#4a7fc1", "greedy"},
                               std::tuple{r.tuned.seconds, "#3c9d5d", "tuned"}}) {
        o << "<line x1='" << left << "' x2='" << w << "' y1='" << y(s) << "' y2='" << y(s) << "' stroke='" << c
          << "' stroke-dasharray='4 3'/><text x='" << w - 4 << "' y='" << y(s) - 3 << "' font-size='10' text-anchor='end' fill='" << c
          << "' font-family='sans-serif'>" << label << "</text>\n";
    }
    o << "</svg>\n";
    return o.str();
}

/// Per group and per pattern: the measured time with the steps minus without them (from the
/// trials that left them out).
std::map<std::string, double> measuredDeltas(const TuneResult &r)
{
    std::map<std::string, double> d;
    for (const auto &t : r.trials)
        if (!t.dropped.empty() && t.error.empty() && t.baseSeconds > 0)
            d[t.dropped] = t.baseSeconds - t.seconds;
    return d;
}

void stepsSection(std::ostringstream &o, const TuneResult &r)
{
    auto deltas = measuredDeltas(r);
    o << "<h2>Steps of the tuned version (" << r.steps.size() << ")</h2>\n";
    o << "<p class='note'>\u0394: measured time with the step's group minus without it, when the search measured that group "
         "(or its pattern); negative: the steps save that much "
         "time.</p>\n<table><tr><th>#</th><th>pattern</th><th>anchor</th><th>\u0394</th>"
         "<th>diff</th></tr>\n";
    const size_t shown = std::min<size_t>(r.steps.size(), 500);
    for (size_t i = 0; i < shown; ++i) {
        const auto &s = r.steps[i];
        auto it = deltas.find(s.group);
        if (it == deltas.end())
            it = deltas.find(s.pattern);
        o << "<tr><td>" << i + 1 << "</td><td>" << htmlEscape(s.pattern) << "</td><td>" << htmlEscape(s.anchor) << "</td><td>"
          << (it == deltas.end() ? std::string("\u2013") : signedMs(it->second)) << "</td><td><details><summary>"
          << std::count(s.diff.begin(), s.diff.end(), '\n') << " line(s)</summary><pre>" << htmlEscape(s.diff)
          << "</pre></details></td></tr>\n";
    }
    o << "</table>\n";
    if (shown < r.steps.size())
        o << "<p class='note'>" << r.steps.size() - shown << " more step(s) not listed.</p>\n";
}

void leftOutSection(std::ostringstream &o, const TuneResult &r)
{
    o << "<h2>Left out for cost (" << r.leftOut.size() << ")</h2>\n";
    if (r.leftOut.empty()) {
        o << "<p>Every greedy step was kept: leaving any out did not save time beyond the noise band (" << ms(r.band) << ").</p>\n";
        return;
    }
    o << "<table><tr><th>what</th><th>steps</th><th>measured cost of keeping it</th></tr>\n";
    for (const auto &l : r.leftOut)
        o << "<tr><td>" << htmlEscape(l.what) << "</td><td>" << l.steps << "</td><td>" << signedMs(l.deltaSeconds) << "</td></tr>\n";
    o << "</table>\n";
}

void trialsSection(std::ostringstream &o, const TuneResult &r)
{
    o << "<h2>Every measurement (" << r.trials.size() << ")</h2>\n" << chartSvg(r);
    o << "<table><tr><th>#</th><th>kind</th><th>version</th><th>time</th><th>\u00b1</th><th>nodes</th><th>steps</th><th>taken</th></tr>\n";
    for (const auto &t : r.trials)
        o << "<tr" << (t.accepted ? " class='taken'" : "") << "><td>" << t.index << "</td><td>" << t.kind << "</td><td>"
          << htmlEscape(t.decision) << "</td><td>" << (t.error.empty() ? ms(t.seconds) : htmlEscape(t.error)) << "</td><td>" << ms(t.spread)
          << "</td><td>" << t.nodes << "</td><td>" << t.steps << "</td><td>" << (t.accepted ? "\u2713" : "") << "</td></tr>\n";
    o << "</table>\n";
}

const char *kStyle =
    "body{font-family:sans-serif;margin:24px;max-width:1100px;color:#222}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}"
    "tr.taken td{background:#e6f4ea}.note{color:#555;font-size:13px}pre{font-size:11px;margin:0;white-space:pre-wrap}"
    ".pair{display:flex;gap:16px;flex-wrap:wrap}.pair>div{flex:1;min-width:420px;border:1px solid #ddd;padding:6px;overflow:auto}"
    "svg.graph,svg.chart{max-width:100%;height:auto;background:#fff}";

/// Marks in the page how many drawings have a size once laid out (a test in a headless browser reads
/// `data-rendered` from the DOM).
const char *kCheck = "<script>window.addEventListener('load',function(){var n=0;"
                     "document.querySelectorAll('svg').forEach(function(s){var b=s.getBBox();if(b.width>0&&b.height>0)n++;});"
                     "document.body.setAttribute('data-rendered',String(n));"
                     "document.body.setAttribute('data-drawings',String(document.querySelectorAll('svg').length));});</script>";

} // namespace

std::string tuneReportHtml(const ir::Graph &original, const TuneResult &r, const ReportInfo &info)
{
    std::ostringstream o;
    o << "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>fxlens tune: " << htmlEscape(info.graphFile)
      << "</title><style>" << kStyle << "</style></head><body>\n";
    o << "<h1>fxlens tune</h1>\n<p>" << htmlEscape(info.graphFile) << " on " << htmlEscape(info.device) << "; " << htmlEscape(info.costNote)
      << "; noise band " << ms(r.band) << "; search " << fmt("%.1f", r.seconds) << " s"
      << (r.budgetReached ? " (budget reached)"
              : r.stopped ? " (stopped)"
                          : "")
      << ".</p>\n";
    o << "<table><tr><th>version</th><th>time</th><th>nodes</th><th>steps</th><th>plan</th></tr>\n";
    size_t greedyNodes = 0;
    for (const auto &t : r.trials)
        if (t.kind == "greedy")
            greedyNodes = t.nodes;
    o << "<tr><td>original</td><td>" << ms(r.original.seconds) << "</td><td>" << original.size()
      << "</td><td>0</td><td>as given</td></tr>\n";
    o << "<tr><td>greedy</td><td>" << ms(r.greedy.seconds) << "</td><td>" << greedyNodes << "</td><td>" << r.greedySteps
      << "</td><td>every match</td></tr>\n";
    o << "<tr class='taken'><td>tuned</td><td>" << ms(r.tuned.seconds) << "</td><td>" << (r.graph ? r.graph->size() : 0) << "</td><td>"
      << r.steps.size() << "</td><td>" << htmlEscape(r.best.describe()) << "</td></tr>\n</table>\n";
    if (r.graph) {
        ir::GraphDiff d = ir::diffGraphs(original, *r.graph);
        auto removed = d.removed(), added = d.added();
        o << "<h2>Before and after</h2>\n<p class='note'>" << removed.size() << " node(s) removed (red), " << added.size()
          << " added (green); the region around the first change.</p>\n<div class='pair'><div><b>original</b>\n"
          << regionSvg(original, {removed.begin(), removed.end()}, "#d9534f") << "</div><div><b>tuned</b>\n"
          << regionSvg(*r.graph, {added.begin(), added.end()}, "#3c9d5d") << "</div></div>\n";
    }
    leftOutSection(o, r);
    trialsSection(o, r);
    stepsSection(o, r);
    o << kCheck << "\n</body></html>\n";
    return o.str();
}

} // namespace fxlens::report
