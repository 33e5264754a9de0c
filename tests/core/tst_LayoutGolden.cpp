// SPDX-License-Identifier: MIT
// The layered layout gives the same picture as before a change: every bundled example (collapsed
// and expanded, under each layering) and a few generated views are laid out and compared with
// golden numbers (tests/data/layout/golden.txt): each item's layer and position exactly (a hash
// of them in views of over 500 items), and a hash of every edge's route and via points. Modules
// expanded and collapsed in place (placeInPlace) on a few examples are compared the same way.
// After a change that means to move items, write new numbers with
//   FXLENS_WRITE_GOLDEN=tests/data/layout/golden.txt build/tests/tst_LayoutGolden
// and say why in the commit.
#include "io/GraphJson.h"
#include "layout/Layered.h"

#include <QDir>
#include <QtTest>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace fxlens;

namespace {

constexpr const char *kGolden = FXLENS_TEST_DATA "/layout/golden.txt";
/// Larger views keep a hash of their items' numbers instead of one line per item.
constexpr size_t kListedItems = 500;

/// FNV-1a over the bit patterns of the numbers.
struct Hash {
    uint64_t h = 1469598103934665603ull;
    void add(double d)
    {
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        for (int k = 0; k < 8; ++k) {
            h ^= (bits >> (8 * k)) & 0xff;
            h *= 1099511628211ull;
        }
    }
};

std::string num(double d)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    return buf;
}

/// The picture as text: a header line, one line per item, one line for the edges.
std::string describe(const std::string &name, const layout::ViewGraph &v)
{
    std::ostringstream s;
    s << "view " << name << " " << v.items.size() << " " << v.edges.size() << " " << num(v.width) << " " << num(v.height) << "\n";
    if (v.items.size() <= kListedItems) {
        for (const auto &it : v.items)
            s << "  " << it.layer << " " << num(it.x) << " " << num(it.y) << "\n";
    } else {
        Hash items;
        for (const auto &it : v.items) {
            items.add(it.layer);
            items.add(it.x);
            items.add(it.y);
        }
        s << "  items " << std::hex << items.h << std::dec << "\n";
    }
    Hash h;
    size_t back = 0;
    for (const auto &e : v.edges) {
        back += e.back;
        h.add(e.back ? 1 : 0);
        for (const auto *pts : {&e.via, &e.route}) {
            h.add(double(pts->size()));
            for (const auto &p : *pts) {
                h.add(p.x);
                h.add(p.y);
            }
        }
    }
    s << "  edges " << back << " " << std::hex << h.h << std::dec << "\n";
    return s.str();
}

/// A deterministic random view: `n` items in program order, edges mostly forward (a few reach
/// far, a few go back), items in nested modules when `modules` is set.
layout::ViewGraph generated(uint32_t seed, size_t n, bool modules)
{
    uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
    auto next = [&](uint32_t bound) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return uint32_t((state >> 33) % bound);
    };
    layout::ViewGraph v;
    for (size_t i = 0; i < n; ++i) {
        layout::ViewItem it;
        it.label = "n" + std::to_string(i);
        it.w = 60 + next(120);
        it.h = next(4) ? 32 : 40;
        if (modules && next(3)) {
            it.cluster = "m" + std::to_string(i * 6 / n);
            if (next(2))
                it.cluster += ".s" + std::to_string(next(3));
        }
        v.items.push_back(std::move(it));
    }
    for (uint32_t i = 1; i < n; ++i) {
        const uint32_t edges = 1 + next(2);
        for (uint32_t k = 0; k < edges; ++k) {
            const uint32_t span = next(10) == 0 ? 1 + next(i) : 1 + next(std::min<uint32_t>(i, 4));
            layout::ViewEdge e;
            e.from = i - span;
            e.to = i;
            v.edges.push_back(e);
        }
        if (modules && next(40) == 0) { // a cycle between boxes
            layout::ViewEdge e;
            e.from = i;
            e.to = next(i);
            v.edges.push_back(e);
        }
    }
    return v;
}

std::unique_ptr<ir::Graph> example(const QString &name)
{
    auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES "/") + name.toStdString());
    return r ? std::move(r.value()) : nullptr;
}

/// Modules expanded and collapsed in place (placeInPlace), one change after another from the
/// collapsed layered layout: the first top-level module opened, then its first submodule, then a
/// second top-level module, the submodule closed, everything closed at once (several boxes), and
/// two modules opened at once. A change placeInPlace refuses is laid out afresh (and marked).
void inPlacePictures(std::vector<std::string> &out)
{
    for (const char *file : {"resnet50_fx.json.gz", "ctr_dynamo.json", "transformer_aten.json"}) {
        auto g = example(QString::fromLatin1(file));
        if (!g)
            continue;
        // Modules that show more items when opened: the first two top-level ones (a, b) and the
        // first submodule of a.
        auto opens = [&](std::set<std::string> expanded, const std::string &m) {
            const size_t before = layout::buildView(*g, expanded).items.size();
            expanded.insert(m);
            return layout::buildView(*g, expanded).items.size() > before;
        };
        std::string a, b, sub;
        for (const auto &m : layout::allModules(*g))
            if (m.find('.') == std::string::npos && b.empty() && opens({}, m))
                (a.empty() ? a : b) = m;
        for (const auto &m : layout::allModules(*g))
            if (sub.empty() && !a.empty() && m.rfind(a + ".", 0) == 0 && opens({a}, m))
                sub = m;
        if (b.empty())
            b = a;
        const std::vector<std::pair<const char *, std::set<std::string>>> steps = {{"open-a", {a}},         {"open-sub", {a, sub}},
                                                                                   {"open-b", {a, sub, b}}, {"close-sub", {a, b}},
                                                                                   {"close-all", {}},       {"open-ab", {a, b}}};
        layout::ViewGraph previous = layout::buildView(*g, {});
        layout::layeredLayout(previous);
        for (const auto &[name, expanded] : steps) {
            std::set<std::string> e = expanded;
            e.erase(std::string());
            layout::ViewGraph v = layout::buildView(*g, e);
            const bool inPlace = layout::placeInPlace(v, previous);
            if (!inPlace)
                layout::layeredLayout(v);
            out.push_back(describe(std::string("in-place ") + file + " " + name + (inPlace ? "" : " afresh"), v));
            previous = std::move(v);
        }
    }
}

/// Every view the golden file holds, laid out now, in order.
std::vector<std::string> currentPictures()
{
    std::vector<std::string> out;
    const QDir dir(QStringLiteral(FXLENS_EXAMPLES));
    auto files = dir.entryList({QStringLiteral("*.json"), QStringLiteral("*.json.gz")}, QDir::Files, QDir::Name);
    files.removeIf([](const QString &f) { return f.contains(QStringLiteral(".fxprof.")); });
    const std::pair<const char *, layout::Layering> layerings[] = {
        {"auto", layout::Layering::Auto}, {"longest", layout::Layering::LongestPath}, {"simplex", layout::Layering::NetworkSimplex}};
    for (const QString &f : files) {
        auto g = example(f);
        if (!g)
            continue;
        for (const bool expand : {false, true}) {
            const auto base = layout::buildView(*g, expand ? layout::allModules(*g) : std::set<std::string>{});
            for (const auto &[name, layering] : layerings) {
                if (layering != layout::Layering::Auto && base.items.size() > 3000)
                    continue; // (the large views take one layering whatever is asked: once is enough)
                layout::ViewGraph v = base;
                layout::LayoutOptions o;
                o.layering = layering;
                layout::layeredLayout(v, o);
                out.push_back(describe(f.toStdString() + (expand ? " expanded " : " collapsed ") + name, v));
            }
        }
    }
    struct Gen {
        uint32_t seed;
        size_t n;
        bool modules;
    };
    for (const Gen &gen :
         {Gen{1, 12, false}, Gen{2, 40, true}, Gen{3, 150, true}, Gen{4, 600, true}, Gen{5, 2600, true}, Gen{6, 6000, false}}) {
        for (const bool wrap : {false, true}) {
            layout::ViewGraph v = generated(gen.seed, gen.n, gen.modules);
            layout::LayoutOptions o;
            if (wrap) {
                o.minWrapWidth = 500;
                o.wrapItems = 0;
                o.layering = layout::Layering::LongestPath;
            }
            layout::layeredLayout(v, o);
            out.push_back(describe("generated " + std::to_string(gen.seed) + " " + std::to_string(gen.n) + (wrap ? " wrapped" : ""), v));
        }
    }
    inPlacePictures(out);
    return out;
}

std::vector<std::string> readGolden()
{
    std::ifstream in(kGolden);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("view ", 0) == 0)
            out.emplace_back();
        if (!out.empty())
            out.back() += line + "\n";
    }
    return out;
}

/// The first line where two pictures differ.
std::string firstDifference(const std::string &want, const std::string &got)
{
    std::istringstream a(want), b(got);
    std::string la, lb;
    for (int line = 1;; ++line) {
        const bool ha = bool(std::getline(a, la)), hb = bool(std::getline(b, lb));
        if (!ha && !hb)
            return {};
        if (la != lb || ha != hb)
            return "line " + std::to_string(line) + ": want \"" + la + "\", got \"" + lb + "\"";
    }
}

} // namespace

class TestLayoutGolden : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sameAsGolden()
    {
        const auto now = currentPictures();
        if (const char *path = std::getenv("FXLENS_WRITE_GOLDEN")) {
            std::ofstream out(path);
            out << "# tst_LayoutGolden: layered layouts of resources/examples and generated views, and in-place expansions\n"
                   "# (one view per block: header `view NAME ITEMS EDGES WIDTH HEIGHT`, then per item `LAYER X Y` or `items HASH`,\n"
                   "# then `edges BACK ROUTE-HASH`).\n";
            for (const auto &p : now)
                out << p;
            QVERIFY(out.good());
            QSKIP("golden numbers written");
        }
        const auto golden = readGolden();
        QCOMPARE(now.size(), golden.size());
        QVERIFY(now.size() >= 40);
        for (size_t k = 0; k < now.size(); ++k) {
            const std::string header = golden[k].substr(0, golden[k].find('\n'));
            QVERIFY2(now[k] == golden[k], qPrintable(QString::fromStdString(header + ": " + firstDifference(golden[k], now[k]))));
        }
    }
};

QTEST_GUILESS_MAIN(TestLayoutGolden)
#include "tst_LayoutGolden.moc"
