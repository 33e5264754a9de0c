// SPDX-License-Identifier: MIT
// fxlens._core: the torch-free core in a Python process (nanobind). A thin layer, as the CLI is:
// graphs cross as the file format's JSON text (no files), the engine is the CLI's `optimize`
// (same registry, presets, session and trace), pattern files compile with the CLI's diagnostics.
// The companion (python/fxlens/engine.py) turns torch.fx graphs into that text and back.
#include "BuiltinPatterns.h"
#include "Version.h"
#include "io/GraphJson.h"
#include "lang/PatternLang.h"
#include "rewrite/Session.h"
#include "rewrite/TraceRecorder.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace fxlens;

namespace {

/// A bad pattern file, an unknown preset or pattern name, a graph that does not parse: Python's
/// ValueError with the message the CLI would print.
struct InputError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

std::unique_ptr<ir::Graph> parse(const std::string &json, const std::string &name)
{
    auto g = io::parseGraphJson(json, name);
    if (!g)
        throw InputError(g.error().toString());
    return std::move(g.value());
}

/// The built-in patterns, the pattern files of the user's paths (directories of *.fxpat, or files),
/// and the choice a run makes from them.
class Engine {
public:
    Engine(const std::string &builtinDir, const std::vector<std::string> &paths)
    {
        if (std::string err = patterns::registerBuiltinPatterns(m_reg, builtinDir); !err.empty())
            throw InputError(err);
        std::set<std::string> before;
        for (const auto *p : m_reg.all())
            before.insert(p->name);
        for (const auto &path : paths) {
            std::error_code ec;
            if (std::filesystem::is_directory(path, ec))
                m_lib.loadDirectory(path, m_reg);
            else if (std::filesystem::is_regular_file(path, ec))
                m_lib.loadFile(path, m_reg);
            else
                throw InputError(path + ": no such pattern file or directory");
        }
        if (std::string d = m_lib.diagnostics(); !d.empty())
            throw InputError(d);
        for (const auto *p : m_reg.all())
            if (!before.count(p->name))
                m_user.push_back(p->name);
    }
    Engine(const Engine &) = delete; // the registry owns its patterns
    Engine &operator=(const Engine &) = delete;

    /// (name, labels joined by ',', benefit, phase, description) per registered pattern.
    nb::list patterns() const
    {
        nb::list out;
        for (const auto *p : m_reg.all()) {
            std::string labels;
            for (const auto &l : p->labels)
                labels += (labels.empty() ? "" : ",") + l;
            nb::dict d;
            d["name"] = p->name;
            d["labels"] = labels;
            d["benefit"] = p->benefit;
            d["phase"] = p->phase;
            d["description"] = p->description;
            d["user"] = std::find(m_user.begin(), m_user.end(), p->name) != m_user.end();
            out.append(d);
        }
        return out;
    }

    const std::vector<std::string> &userPatterns() const { return m_user; }

    /// The patterns a run uses: a preset (with the user's pattern files always added) or names.
    std::vector<const rewrite::Pattern *> select(const std::string &preset, const std::string &names) const
    {
        std::string err;
        auto chosen = names.empty() ? m_reg.preset(preset, err) : m_reg.byNames(names, err);
        if (!err.empty())
            throw InputError(err + " (see fxlens.patterns())");
        if (names.empty())
            for (const auto &n : m_user)
                if (const auto *p = m_reg.find(n); std::find(chosen.begin(), chosen.end(), p) == chosen.end())
                    chosen.push_back(p);
        return chosen;
    }

    nb::dict optimize(const std::string &json, const std::string &name, const std::string &preset, const std::string &names, long maxSteps,
                      bool checked, bool trace) const
    {
        auto chosen = select(preset, names);
        auto g = parse(json, name);
        if (auto errors = g->lint(); !errors.empty()) {
            std::string msg = name + ": the graph fails lint (" + std::to_string(errors.size()) + " error(s)); nothing rewritten";
            for (size_t i = 0; i < errors.size() && i < 5; ++i)
                msg += "\n  " + errors[i].toString();
            throw InputError(msg);
        }
        const size_t before = g->size();
        rewrite::SessionConfig cfg;
        cfg.checked = checked;
        if (maxSteps >= 0)
            cfg.maxSteps = size_t(maxSteps);
        rewrite::Session session(*g, chosen, cfg);
        rewrite::TraceRecorder recorder(false);
        if (trace)
            session.addListener(&recorder);
        rewrite::RunResult r;
        {
            nb::gil_scoped_release unlocked; // the engine touches no Python object
            r = session.run();
        }
        auto lint = g->lint();
        if (!lint.empty())
            throw std::runtime_error(name + ": the rewritten graph fails lint: " + lint.front().toString());
        nb::dict d;
        d["graph"] = io::writeGraphJson(*g);
        d["nodes_before"] = before;
        d["nodes_after"] = g->size();
        d["seconds"] = r.seconds;
        d["attempts"] = r.attempts;
        d["stop_reason"] = std::string(rewrite::stopReasonName(r.reason));
        nb::list steps;
        for (const auto &s : session.history()) {
            nb::dict st;
            st["pattern"] = s.pattern;
            st["anchor"] = s.anchor;
            st["summary"] = s.summary;
            steps.append(st);
        }
        d["steps"] = steps;
        nb::list rollbacks;
        for (const auto &rb : r.rollbacks) {
            nb::dict x;
            x["pattern"] = rb.pattern;
            x["anchor"] = rb.anchor;
            x["reason"] = rb.reason;
            rollbacks.append(x);
        }
        d["rollbacks"] = rollbacks;
        nb::dict byPattern;
        for (const auto &[pattern, count] : r.rewritesByPattern)
            byPattern[nb::str(pattern.c_str())] = count;
        d["rewrites_by_pattern"] = byPattern;
        d["trace"] = trace ? nb::object(nb::str(recorder.toJson(session, r, name).c_str())) : nb::none();
        return d;
    }

private:
    rewrite::PatternRegistry m_reg;
    lang::PatternLibrary m_lib;
    std::vector<std::string> m_user;
};

/// The graph's lint errors ("node: message"), [] when it is well formed.
std::vector<std::string> lintGraph(const std::string &json, const std::string &name)
{
    std::vector<std::string> out;
    for (const auto &e : parse(json, name)->lint())
        out.push_back(e.toString());
    return out;
}

/// The JSON text parsed and written again by the core: the file format as the CLI writes it.
std::string normalize(const std::string &json, const std::string &name) { return io::writeGraphJson(*parse(json, name)); }

/// Compiles one pattern file's text: "" when it compiles, else the rendered diagnostic (file, line,
/// column, the source line and a caret).
std::string checkPatternSource(const std::string &source, const std::string &file)
{
    auto r = lang::compilePattern(source, file);
    return r ? std::string() : lang::renderDiagnostic(r.error(), source);
}

} // namespace

NB_MODULE(_core, m)
{
    nb::set_leak_warnings(false); // engines cached for the process (fxlens.engine.engine_for) live until exit
    m.doc() = "fxlens' torch-free core (graph format, engine, built-in patterns, pattern language) in-process";
    nb::register_exception_translator([](const std::exception_ptr &p, void *) {
        try {
            std::rethrow_exception(p);
        } catch (const InputError &e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        }
    });
    m.attr("__version__") = FXLENS_VERSION;
    nb::class_<Engine>(m, "Engine")
        .def(nb::init<const std::string &, const std::vector<std::string> &>(), nb::arg("builtin_dir"), nb::arg("paths"))
        .def("patterns", &Engine::patterns)
        .def_prop_ro("user_patterns", &Engine::userPatterns)
        .def("optimize", &Engine::optimize, nb::arg("graph_json"), nb::arg("name") = "graph", nb::arg("preset") = "all",
             nb::arg("names") = "", nb::arg("max_steps") = -1, nb::arg("checked") = false, nb::arg("trace") = false);
    m.def("lint", &lintGraph, nb::arg("graph_json"), nb::arg("name") = "graph");
    m.def("normalize", &normalize, nb::arg("graph_json"), nb::arg("name") = "graph");
    m.def("check_pattern_source", &checkPatternSource, nb::arg("source"), nb::arg("file") = "<pattern>");
}
