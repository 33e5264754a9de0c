// SPDX-License-Identifier: MIT
// The option table: every option once (name, value, help, where it goes), the parser over it, the
// per-command check, and --help generated from the option and command tables.
#include "Cli.h"

#include "Version.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

namespace fxlens::cli {

namespace {

struct Option {
    const char *name;  ///< canonical ("-o", "--steps")
    const char *alias; ///< another spelling ("--output"), or nullptr
    const char *value; ///< the value's placeholder; nullptr for a flag
    const char *help;
    /// Stores the value (flags get ""); false with `err` when it is not valid.
    std::function<bool(Args &, const std::string &, std::string &)> set;
};

bool toInteger(const std::string &name, const std::string &v, long long lo, long long hi, long long &out, std::string &err)
{
    char *end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || !end || *end || errno == ERANGE || x < lo || x > hi) {
        err = name + " needs a " + (lo > 0 ? "positive" : "non-negative") + " integer, got '" + v + "'";
        return false;
    }
    out = x;
    return true;
}

template <typename T> auto integer(T Args::*field, long long lo, long long hi, const char *name)
{
    return [=](Args &a, const std::string &v, std::string &err) {
        long long x = 0;
        if (!toInteger(name, v, lo, hi, x, err))
            return false;
        a.*field = static_cast<T>(x);
        return true;
    };
}

auto text(std::string Args::*field)
{
    return [=](Args &a, const std::string &v, std::string &) {
        a.*field = v;
        return true;
    };
}

auto flag(bool Args::*field)
{
    return [=](Args &a, const std::string &, std::string &) {
        a.*field = true;
        return true;
    };
}

const std::vector<Option> &options()
{
    static const std::vector<Option> table = {
        {"-o", "--output", "FILE", "write to FILE instead of standard output", text(&Args::output)},
        {"--to", nullptr, "FORMAT", "convert: text, json, python, dot, svg, png", text(&Args::to)},
        {"--no-meta", nullptr, nullptr, "convert --to text: leave out the shape/dtype comments", flag(&Args::noMeta)},
        {"--preset", nullptr, "NAME", "the pattern preset (vertical, all); default all", text(&Args::preset)},
        {"--patterns", nullptr, "a,b", "these patterns instead of a preset", text(&Args::patterns)},
        {"--pattern-dir", nullptr, "DIR",
         "also load the pattern files (*.fxpat) of DIR; a file that does not compile is reported and skipped", text(&Args::patternDir)},
        {"--steps", nullptr, "K", "apply at most K rewrites", integer(&Args::steps, 0, LLONG_MAX, "--steps")},
        {"--trace", nullptr, "FILE", "optimize: the event log as JSON; profile: a Chrome trace (Perfetto)", text(&Args::trace)},
        {"--checked", nullptr, nullptr, "check every step (lint, value meta, a change) and roll back one that fails", flag(&Args::checked)},
        {"--verify", nullptr, nullptr, "run the input and the result, compare their outputs", flag(&Args::verify)},
        {"--verify-each", nullptr, nullptr, "run every version, roll back a step whose outputs differ", flag(&Args::verifyEach)},
        {"--freeze", nullptr, nullptr, "fold weight-only nodes (stacked, transposed weights) into weights", flag(&Args::freeze)},
        {"--random-weights", nullptr, nullptr,
         "optimize --freeze: allow a graph without (all of) its weights; seeded random values are frozen (benchmarks only)",
         flag(&Args::randomWeights)},
        {"--cuda-graph", nullptr, nullptr, "capture one run as a CUDA graph and replay it", flag(&Args::cudaGraph)},
        {"--device", nullptr, "D", "cpu, cuda or cuda:N (default cpu; profile: cuda when there is one)",
         [](Args &a, const std::string &v, std::string &) {
             a.device = v;
             a.deviceGiven = true;
             return true;
         }},
        {"--seed", nullptr, "S", "seed of random inputs and missing weights",
         [](Args &a, const std::string &v, std::string &err) {
             char *end = nullptr;
             a.seed = std::strtoull(v.c_str(), &end, 10);
             if (!end || *end || v.empty() || v[0] == '-') {
                 err = "--seed needs a non-negative integer, got '" + v + "'";
                 return false;
             }
             return true;
         }},
        {"--inputs", nullptr, "F", "inputs input:0, input:1, ... from a safetensors file", text(&Args::inputs)},
        {"--load-library", nullptr, "SO",
         "load a library of custom operators with C++ kernels first (torch.ops.load_library; e.g. torchvision's _C.so); repeatable",
         [](Args &a, const std::string &v, std::string &) {
             a.libraries.push_back(v);
             return true;
         }},
        {"--weights", nullptr, "F", "weights by name from a safetensors file", text(&Args::weights)},
        {"--random-inputs", nullptr, nullptr, "seeded random inputs even when the graph saved example inputs", flag(&Args::randomInputs)},
        {"--expect", nullptr, "F", "compare the outputs with tensors output:0, ... of a file", text(&Args::expect)},
        {"--repeat", nullptr, "K", "run K times; later runs must reproduce the first", integer(&Args::repeat, 1, 100000, "--repeat")},
        {"--compare", nullptr, "H", "profile a second version (graph or saved profile) and print the change", text(&Args::compare)},
        {"--compare-output", nullptr, "F", "save the second version's profile", text(&Args::compareOutput)},
        {"--optimize", nullptr, nullptr, "compare with the graph optimized by --preset / --patterns", flag(&Args::optimize)},
        {"--versions", nullptr, "LIST",
         "profile these versions of the greedy history (--preset / --patterns): 0,5,last  0-10  all  spread:10", text(&Args::versions)},
        {"--iters", nullptr, "K", "timed iterations (default 10)", integer(&Args::iters, 1, 100000, "--iters")},
        {"--warmup", nullptr, "W", "warm-up iterations (default 3)", integer(&Args::warmup, 0, 100000, "--warmup")},
        {"--raw-events", nullptr, "F", "write the recorded profiler events (tests reopen them)", text(&Args::rawEvents)},
        {"--compiled", nullptr, nullptr,
         "profile: compile with Inductor (through the Python companion: FXLENS_PYTHON, else python3) and attribute its kernels "
         "to FX nodes",
         flag(&Args::compiled)},
        {"--post-grad", nullptr, "PATHS",
         "profile --compiled: also run these pattern files (.fxpat files or folders, comma-separated) inside Inductor, on its "
         "post-grad graph right before it lowers it (fxlens.post_grad_pass)",
         text(&Args::postGrad)},
        {"--host-ops", nullptr, nullptr, "on CUDA, also record the ATen ops on the host", flag(&Args::hostOps)},
        {"--pattern", nullptr, "P", "explain: a pattern name or .fxpat file", text(&Args::pattern)},
        {"--node", nullptr, "NODE", "explain: the node to explain the match at", text(&Args::node)},
        {"--budget", nullptr, "SECONDS", "tune: stop starting measurements after this long (default 600)",
         [](Args &a, const std::string &v, std::string &err) {
             char *end = nullptr;
             a.budget = std::strtod(v.c_str(), &end);
             if (!end || *end || v.empty() || !(a.budget >= 0)) {
                 err = "--budget needs a number of seconds >= 0, got '" + v + "'";
                 return false;
             }
             return true;
         }},
        {"--report", nullptr, "F", "tune: write the report, one self-contained HTML page", text(&Args::report)},
        {"--devices", nullptr, "LIST",
         "tune: measure on these devices at once, one worker process each (cuda:0,cuda:1; `cuda` = every GPU)", text(&Args::devices)},
        {"--trials", nullptr, "N", "check-pattern: random instances to try (default 200)", integer(&Args::trials, 1, 100000, "--trials")},
    };
    return table;
}

const Option *findOption(const std::string &s)
{
    for (const auto &o : options())
        if (s == o.name || (o.alias && s == o.alias))
            return &o;
    return nullptr;
}

/// `text` wrapped to `width` columns, every line after the first indented by `indent`.
std::string wrap(const std::string &text, size_t indent, size_t width)
{
    std::string out, line;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(' ', start);
        if (end == std::string::npos)
            end = text.size();
        const std::string word = text.substr(start, end - start);
        if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
            out += line + "\n" + std::string(indent, ' ');
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        start = end + 1;
    }
    return out + line;
}

} // namespace

bool parseArgs(int argc, char **argv, Args &a, std::string &err)
{
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        if (s == "-h" || s == "--help") {
            a.help = true;
            continue;
        }
        if (s == "--version") {
            a.command = "version";
            continue;
        }
        if (s.size() > 1 && s[0] == '-') {
            const Option *o = findOption(s);
            if (!o) {
                err = "unknown option '" + s + "'";
                return false;
            }
            a.given.emplace_back(o->name);
            std::string v;
            if (o->value) {
                if (i + 1 >= argc) {
                    err = "option " + s + " needs a value";
                    return false;
                }
                v = argv[++i];
            }
            if (!o->set(a, v, err))
                return false;
            continue;
        }
        if (a.command.empty())
            a.command = s;
        else
            a.positional.push_back(s);
    }
    return true;
}

bool optionsApply(const Command &c, const Args &a, std::string &err)
{
    for (const std::string &o : a.given) {
        if (std::find_if(c.options.begin(), c.options.end(), [&](const char *x) { return o == x; }) != c.options.end())
            continue;
        std::string list;
        for (const char *x : c.options)
            list += (list.empty() ? "" : " ") + std::string(x);
        err = "option " + o + " does not apply to '" + c.name + "' (its options: " + (list.empty() ? "none" : list) + ")";
        return false;
    }
    return true;
}

std::string usageText()
{
    constexpr size_t kColumn = 39, kWidth = 110;
    std::string s = "usage: fxlens-cli <command> [options]   (fxlens-cli " FXLENS_VERSION ")\n\nCommands:\n";
    for (const Command &c : commands()) {
        std::string head = std::string("  ") + c.name + (c.synopsis[0] ? " " : "") + c.synopsis;
        std::string opts;
        for (const char *o : c.options) {
            const Option *opt = findOption(o);
            opts += std::string(" [") + o + (opt && opt->value ? std::string(" ") + opt->value : "") + "]";
        }
        if (!opts.empty())
            head += "\n" + std::string(4 + std::string(c.name).size(), ' ') + wrap(opts.substr(1), 4 + std::string(c.name).size(), kWidth);
        s += head;
        const std::string help = wrap(c.help, kColumn, kWidth);
        const size_t lastLine = head.size() - (head.rfind('\n') == std::string::npos ? 0 : head.rfind('\n') + 1);
        if (lastLine + 1 < kColumn)
            s += std::string(kColumn - lastLine, ' ') + help + "\n";
        else
            s += "\n" + std::string(kColumn, ' ') + help + "\n";
    }
    s += "\nOptions:\n";
    for (const auto &o : options()) {
        std::string head =
            std::string("  ") + o.name + (o.alias ? std::string(", ") + o.alias : "") + (o.value ? std::string(" ") + o.value : "");
        s += head + (head.size() + 1 < kColumn ? std::string(kColumn - head.size(), ' ') : "\n" + std::string(kColumn, ' ')) +
            wrap(o.help, kColumn, kWidth) + "\n";
    }
    s += "  --version                            print the version\n";
    s += "  -h, --help                           this help\n";
    s += "\nExit codes: 0 success, 1 the check failed (lint errors, outputs differ), 2 usage error, 3 unreadable or invalid input.\n";
    return s;
}

} // namespace fxlens::cli
