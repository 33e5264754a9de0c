// SPDX-License-Identifier: MIT
// libFuzzer target for the rewrite engine: the bytes choose a small, well-formed Torch IR graph
// (inputs, weights, unary and binary ops, split/unbind with their getitems, cat, stack, reshape,
// transpose, unsqueeze, linear, an occasional in-place write) and a set of built-in patterns; the
// session runs them to a fixpoint in checked mode. Lint must hold after every step (checked mode
// rolls a failing step back and reports it: a finding), and after the run.
#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "rewrite/Session.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace fxlens;
using json = nlohmann::json;

namespace {

struct Bytes {
    const uint8_t *p;
    size_t n, i = 0;
    uint8_t next() { return i < n ? p[i++] : 0; }
    size_t pick(size_t k) { return k ? next() % k : 0; }
    bool done() const { return i >= n; }
};

struct Value {
    std::string name;
    std::vector<int64_t> shape;
};

json tensorMeta(const std::vector<int64_t> &shape)
{
    std::vector<int64_t> stride(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;)
        stride[i - 1] = stride[i] * shape[i];
    return {{"tensor", {{"shape", shape}, {"dtype", "float32"}, {"stride", stride}, {"requires_grad", false}}}};
}

struct Builder {
    Bytes &b;
    json nodes = json::array(), params = json::array();
    std::vector<Value> vals;
    int counter = 0;
    std::string fresh(const char *base) { return std::string(base) + "_" + std::to_string(counter++); }
    json ref(const Value &v) { return {{"node", v.name}}; }
    Value add(const char *base, const char *op, const std::string &target, json args, json kwargs, std::vector<int64_t> shape)
    {
        Value v{fresh(base), shape};
        nodes.push_back(
            {{"name", v.name}, {"op", op}, {"target", target}, {"args", args}, {"kwargs", kwargs}, {"meta", {{"val", tensorMeta(shape)}}}});
        vals.push_back(v);
        return v;
    }
    /// A tuple-valued call and one getitem per piece.
    std::vector<Value> pieces(const char *base, const std::string &target, json args, json kwargs,
                              const std::vector<std::vector<int64_t>> &shapes)
    {
        json seq = json::array();
        for (const auto &s : shapes)
            seq.push_back(tensorMeta(s));
        const std::string name = fresh(base);
        nodes.push_back({{"name", name},
                         {"op", "call_function"},
                         {"target", target},
                         {"args", args},
                         {"kwargs", kwargs},
                         {"meta", {{"val", {{"seq", seq}}}}}});
        std::vector<Value> out;
        for (size_t i = 0; i < shapes.size(); ++i)
            if (b.pick(4) != 0 || i == 0)
                out.push_back(add("getitem", "call_function", "operator.getitem", json::array({json{{"node", name}}, int64_t(i)}),
                                  json::object(), shapes[i]));
        return out;
    }
    const Value &any() { return vals[b.pick(vals.size())]; }
    std::vector<const Value *> sameShape(const Value &v)
    {
        std::vector<const Value *> out;
        for (const auto &x : vals)
            if (x.shape == v.shape)
                out.push_back(&x);
        return out;
    }
};

std::string buildGraph(Bytes &b)
{
    Builder g{b};
    const int64_t sizes[] = {2, 3, 4, 6, 8};
    const size_t inputs = 1 + b.pick(3);
    for (size_t i = 0; i < inputs; ++i) {
        std::vector<int64_t> shape(2 + b.pick(2));
        for (auto &d : shape)
            d = sizes[b.pick(5)];
        g.add("x", "placeholder", "x" + std::to_string(i), json::array(), json::object(), shape);
    }
    const size_t ops = 2 + b.pick(14);
    for (size_t k = 0; k < ops && !b.done(); ++k) {
        const Value v = g.any();
        const int64_t rank = int64_t(v.shape.size());
        const int64_t d = int64_t(b.pick(size_t(rank)));
        switch (b.pick(12)) {
        case 0: {
            static const char *const unary[] = {"torch.relu", "torch.tanh", "torch.sigmoid", "torch.nn.functional.relu", "torch.detach"};
            g.add("u", "call_function", unary[b.pick(5)], json::array({g.ref(v)}), json::object(), v.shape);
            break;
        }
        case 1: {
            auto same = g.sameShape(v);
            const Value w = *same[b.pick(same.size())];
            static const char *const binary[] = {"operator.add", "torch.add", "operator.mul", "torch.mul", "torch.sub"};
            g.add("bin", "call_function", binary[b.pick(5)], json::array({g.ref(v), g.ref(w)}), json::object(), v.shape);
            break;
        }
        case 2: { // split into equal or unequal sections
            const int64_t n = v.shape[size_t(d)];
            std::vector<std::vector<int64_t>> shapes;
            json sections;
            if (b.pick(2) && n > 1) {
                const int64_t first = 1 + int64_t(b.pick(size_t(n - 1)));
                sections = json::array({first, n - first});
                for (int64_t s : {first, n - first}) {
                    auto sh = v.shape;
                    sh[size_t(d)] = s;
                    shapes.push_back(sh);
                }
            } else {
                int64_t k2 = 1;
                for (int64_t c : {2, 3, 1})
                    if (n % c == 0) {
                        k2 = c;
                        break;
                    }
                sections = n / k2;
                for (int64_t i = 0; i < k2; ++i) {
                    auto sh = v.shape;
                    sh[size_t(d)] = n / k2;
                    shapes.push_back(sh);
                }
            }
            g.pieces("split", "torch.split", json::array({g.ref(v), sections}), {{"dim", b.pick(2) ? d : d - rank}}, shapes);
            break;
        }
        case 3: {
            auto sh = v.shape;
            sh.erase(sh.begin() + d);
            if (sh.empty())
                break;
            g.pieces("unbind", "torch.unbind", json::array({g.ref(v)}), {{"dim", d}},
                     std::vector<std::vector<int64_t>>(size_t(v.shape[size_t(d)]), sh));
            break;
        }
        case 4: { // cat of values that agree except on d
            json list = json::array();
            auto sh = v.shape;
            sh[size_t(d)] = 0;
            for (const auto &x : g.vals) {
                if (x.shape.size() != v.shape.size() || list.size() >= 6)
                    continue;
                bool fits = true;
                for (int64_t i = 0; i < rank; ++i)
                    fits = fits && (i == d || x.shape[size_t(i)] == v.shape[size_t(i)]);
                if (fits && b.pick(3)) {
                    list.push_back(g.ref(x));
                    sh[size_t(d)] += x.shape[size_t(d)];
                }
            }
            if (list.empty())
                break;
            g.add("cat", "call_function", b.pick(2) ? "torch.cat" : "torch.concat", json::array({list}), {{"dim", d}}, sh);
            break;
        }
        case 5: {
            json list = json::array();
            for (const Value *x : g.sameShape(v))
                if (b.pick(2) && list.size() < 8)
                    list.push_back(g.ref(*x));
            if (list.empty())
                break;
            const int64_t sd = int64_t(b.pick(size_t(rank + 1)));
            auto sh = v.shape;
            sh.insert(sh.begin() + sd, int64_t(list.size()));
            g.add("stack", "call_function", "torch.stack", json::array({list}), {{"dim", sd}}, sh);
            break;
        }
        case 6: {
            if (rank < 2)
                break;
            auto sh = v.shape;
            sh[size_t(rank - 2)] *= sh[size_t(rank - 1)];
            sh.pop_back();
            g.add("reshape", "call_function", "torch.reshape", json::array({g.ref(v), sh}), json::object(), sh);
            break;
        }
        case 7: {
            if (rank < 2)
                break;
            auto sh = v.shape;
            std::swap(sh[0], sh[1]);
            g.add("t", "call_function", "torch.transpose", json::array({g.ref(v), 0, 1}), json::object(), sh);
            break;
        }
        case 8: {
            auto sh = v.shape;
            sh.insert(sh.begin() + d, 1);
            g.add("unsq", "call_function", "torch.unsqueeze", json::array({g.ref(v), d}), json::object(), sh);
            break;
        }
        case 9: { // linear with a weight of the module
            const int64_t kdim = v.shape.back(), m = sizes[b.pick(5)];
            const std::string w = "w" + std::to_string(g.counter), bias = "b" + std::to_string(g.counter);
            g.params.push_back({{"name", w}, {"kind", "parameter"}, {"shape", {m, kdim}}, {"dtype", "float32"}});
            g.params.push_back({{"name", bias}, {"kind", "parameter"}, {"shape", {m}}, {"dtype", "float32"}});
            Value wv = g.add("wt", "get_attr", w, json::array(), json::object(), {m, kdim});
            Value bv = g.add("bias", "get_attr", bias, json::array(), json::object(), {m});
            auto sh = v.shape;
            sh.back() = m;
            g.add("linear", "call_function", "torch.nn.functional.linear", json::array({g.ref(v), g.ref(wv), g.ref(bv)}), json::object(),
                  sh);
            break;
        }
        case 10: // an in-place write
            g.add("inplace", "call_method", "add_", json::array({g.ref(v), 1}), json::object(), v.shape);
            break;
        default: g.add("clone", "call_function", "torch.clone", json::array({g.ref(v)}), json::object(), v.shape); break;
        }
    }
    json outs = json::array();
    const size_t nout = 1 + b.pick(3);
    for (size_t i = 0; i < nout; ++i)
        outs.push_back(g.ref(g.vals[g.vals.size() - 1 - b.pick(std::min<size_t>(g.vals.size(), 4))]));
    g.nodes.push_back({{"name", "output"},
                       {"op", "output"},
                       {"target", "output"},
                       {"args", json::array({outs})},
                       {"kwargs", json::object()},
                       {"meta", json::object()}});
    json root = {{"format", "fxlens-graph"}, {"version", io::kFormatVersion},
                 {"name", "fuzz"},           {"ir", "torch"},
                 {"source", "dynamo"},       {"params", g.params},
                 {"nodes", g.nodes}};
    return root.dump();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rewrite::PatternRegistry reg;
    static std::vector<const rewrite::Pattern *> all = [] {
        std::string err = patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR);
        if (!err.empty()) {
            std::fprintf(stderr, "%s\n", err.c_str());
            std::abort();
        }
        return reg.all();
    }();
    Bytes b{data, size};
    const std::string text = buildGraph(b);
    // FXLENS_FUZZ_GRAPH=path writes the generated graph (to keep a finding as a regression file).
    if (const char *dump = std::getenv("FXLENS_FUZZ_GRAPH"); dump && *dump)
        if (FILE *f = std::fopen(dump, "w")) {
            std::fwrite(text.data(), 1, text.size(), f);
            std::fclose(f);
        }
    auto r = io::parseGraphJson(text, "fuzz.json");
    if (!r || !r.value()->lint().empty()) {
        std::fprintf(stderr, "generated graph does not load or lint:\n%s\n", text.c_str());
        std::abort(); // the generator must make valid graphs
    }
    // A subset of the patterns (a quarter of them, chosen by the next bytes), or all.
    std::vector<const rewrite::Pattern *> chosen;
    const bool every = b.pick(2);
    for (const auto *p : all)
        if (every || b.pick(4) == 0)
            chosen.push_back(p);
    rewrite::SessionConfig cfg;
    cfg.checked = true;
    cfg.maxSteps = 500;
    // A step that fails checked mode (or matches and changes nothing) is rolled back and ends with
    // applied = false: a finding.
    struct Rollbacks : rewrite::RewriteListener {
        std::string first;
        void notifyPatternEnd(const std::string &pattern, bool applied) override
        {
            if (!applied && first.empty())
                first = pattern;
        }
    } rollbacks;
    rewrite::Session s(*r.value(), chosen, cfg);
    s.addListener(&rollbacks);
    const rewrite::RunResult res = s.run();
    static const bool verbose = std::getenv("FXLENS_FUZZ_VERBOSE") != nullptr;
    if (verbose)
        std::fprintf(stderr, "steps %zu nodes %zu\n", res.steps, r.value()->size());
    if (!rollbacks.first.empty()) {
        std::fprintf(stderr, "pattern %s rolled back: %s\n%s\n", rollbacks.first.c_str(), s.lastError().c_str(), text.c_str());
        std::abort();
    }
    if (!r.value()->lint().empty())
        std::abort();
    return 0;
}
