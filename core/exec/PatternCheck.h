// SPDX-License-Identifier: MIT
// Equivalence check of a pattern file: instantiate the pattern on random shapes and values, keep the
// instances on which the pattern matches (so its constraints hold), apply the replacement, and run
// both versions through the executor. Any difference is a counterexample.
#pragma once

#include "exec/Executor.h"
#include "lang/PatternLang.h"

#include <string>
#include <vector>

namespace fxlens::exec {

struct PatternCheckReport {
    int trials = 0;                           ///< instances drawn
    int runnable = 0;                         ///< instances the executor ran
    int matched = 0;                          ///< instances the pattern matched (constraints hold)
    int passed = 0;                           ///< matched instances whose replacement computes the same outputs
    std::vector<std::string> counterexamples; ///< values, shapes and the output difference
    std::string firstSkip;                    ///< why the first instance could not be used
    bool ok() const { return counterexamples.empty() && passed > 0; }
    std::string summary() const;
};

PatternCheckReport checkPattern(const lang::FilePattern &p, int trials, uint64_t seed, const std::string &device = "cpu");

} // namespace fxlens::exec
