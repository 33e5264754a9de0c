// SPDX-License-Identifier: MIT
#include "exec/PatternCheck.h"

#include "rewrite/Rewriter.h"

namespace fxlens::exec {

std::string PatternCheckReport::summary() const
{
    std::string s = std::to_string(trials) + " instances drawn, " + std::to_string(runnable) + " ran, " + std::to_string(matched) +
        " matched the pattern, " + std::to_string(passed) + " kept their outputs after the replacement\n";
    for (const auto &c : counterexamples)
        s += "counterexample: " + c + "\n";
    if (matched == 0)
        s += "no instance satisfied the pattern's constraints" + (firstSkip.empty() ? std::string() : " (first: " + firstSkip + ")") + "\n";
    s += ok() ? "equivalent on every matched instance\n" : "NOT shown equivalent\n";
    return s;
}

PatternCheckReport checkPattern(const lang::FilePattern &p, int trials, uint64_t seed, const std::string &device)
{
    PatternCheckReport rep;
    for (int t = 0; t < trials; ++t) {
        ++rep.trials;
        std::string why, desc;
        auto g = lang::instantiate(p, seed + uint64_t(t) * 7919, why, desc);
        auto skip = [&](const std::string &reason) {
            if (rep.firstSkip.empty())
                rep.firstSkip = reason;
        };
        if (!g) {
            skip(why);
            if (why.find("cannot be") != std::string::npos || why.find("no pattern") != std::string::npos)
                break; // no sample will ever work
            continue;
        }
        ExecOptions o;
        o.device = device;
        o.seed = seed + uint64_t(t);
        auto runner = Runner::create(*g, o);
        if (!runner) {
            skip(runner.error().message);
            continue;
        }
        auto before = runner.value()->run(*g);
        if (!before) {
            skip(desc + ": " + before.error().toString());
            continue;
        }
        ++rep.runnable;
        ir::Node *anchor = g->outputNode()->args()[0].items()[0].toNode();
        rewrite::GraphMatchContext ctx(*g);
        rewrite::Match m;
        m.context = &ctx;
        rewrite::MatchFailure mf;
        if (!p.match(anchor, m, mf)) {
            skip(desc + ": " + mf.toString());
            continue;
        }
        ++rep.matched;
        auto after = g->clone();
        ir::Node *a2 = after->outputNode()->args()[0].items()[0].toNode();
        rewrite::GraphMatchContext ctx2(*after);
        rewrite::Match m2;
        m2.context = &ctx2;
        if (!p.match(a2, m2, mf)) {
            rep.counterexamples.push_back(desc + ": matched once but not on a copy: " + mf.toString());
            continue;
        }
        try {
            rewrite::Rewriter rw(*after);
            rw.setContext(p.name, 0);
            p.rewrite(m2, rw);
        } catch (const std::exception &e) {
            rep.counterexamples.push_back(desc + ": the replacement failed: " + e.what());
            continue;
        }
        if (auto lint = after->lint(); !lint.empty()) {
            rep.counterexamples.push_back(desc + ": the replaced graph fails lint: " + lint.front().toString());
            continue;
        }
        auto out = runner.value()->run(*after);
        if (!out) {
            rep.counterexamples.push_back(desc + ": the replacement does not run: " + out.error().toString());
            continue;
        }
        auto cmp = runner.value()->compare(*before.value(), *out.value());
        if (!cmp.pass) {
            std::string s = cmp.summary();
            while (!s.empty() && s.back() == '\n')
                s.pop_back();
            for (auto &c : s)
                if (c == '\n')
                    c = ';';
            rep.counterexamples.push_back(desc + ": " + s);
            continue;
        }
        ++rep.passed;
    }
    return rep;
}

} // namespace fxlens::exec
