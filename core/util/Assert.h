// SPDX-License-Identifier: MIT
// FXLENS_ASSERT(cond, "message"): an internal invariant (never a check of input: bad input gets a
// Diagnostic). Checked in debug builds and with FXLENS_EXPENSIVE_CHECKS; a failure prints where and
// why and aborts, so that a broken invariant is found where it breaks, not later.
#pragma once

#include <cstdio>
#include <cstdlib>

#if !defined(NDEBUG) || defined(FXLENS_EXPENSIVE_CHECKS)
#define FXLENS_ASSERT(cond, msg)                                                                                                           \
    do {                                                                                                                                   \
        if (!(cond)) {                                                                                                                     \
            std::fprintf(stderr, "%s:%d: fxlens internal error: %s (%s)\n", __FILE__, __LINE__, msg, #cond);                               \
            std::abort();                                                                                                                  \
        }                                                                                                                                  \
    } while (0)
#else
#define FXLENS_ASSERT(cond, msg)                                                                                                           \
    do {                                                                                                                                   \
        (void)sizeof(cond);                                                                                                                \
    } while (0)
#endif

namespace fxlens {
/// Built with FXLENS_EXPENSIVE_CHECKS: every rewrite session runs in checked mode (lint, value meta
/// and "applied => changed" after each step), as the test suite's builds do.
#ifdef FXLENS_EXPENSIVE_CHECKS
inline constexpr bool kExpensiveChecks = true;
#else
inline constexpr bool kExpensiveChecks = false;
#endif
} // namespace fxlens
