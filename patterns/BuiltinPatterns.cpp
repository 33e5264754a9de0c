// SPDX-License-Identifier: MIT
#include "BuiltinPatterns.h"

#include "PatternUtil.h"
#include "lang/PatternLang.h"

#include <filesystem>

namespace fxlens::patterns {

const std::vector<std::pair<const char *, int>> &benefitTable()
{
    // Normalizations first (every later pattern sees one spelling), then the cleanups, the vertical
    // patterns by how much they remove, and the horizontal batching last.
    static const std::vector<std::pair<const char *, int>> table = {
        {"numpy_compat", 110},
        {"normalize_split", 100},
        {"normalize_unbind", 100},
        {"normalize_cat", 100},
        {"normalize_stack", 100},
        {"normalize_squeeze", 100},
        {"normalize_reshape", 100},
        {"normalize_clamp", 100},
        {"normalize_detach", 100},
        {"normalize_cat_aten", 100},
        {"normalize_split_aten", 100},
        {"normalize_split_with_size_aten", 100},
        {"dead_code", 100},
        {"functionalize_inplace", 99},
        {"remove_split_with_size_one", 50},
        {"merge_stack_tanh_unbind", 46},
        {"merge_split_squeeze", 45},
        {"stack_unbind", 45},
        {"unbind_stack", 44},
        {"unbind_stack_to_slices", 43},
        {"stack_runs_to_cat_view", 43},
        {"unbind_run_in_stack", 42},
        {"cast_through_stack", 41},
        {"merge_splits", 40},
        {"fold_view", 36},
        {"fold_view_chain", 35},
        {"move_reshape_out_of_split_stack", 34},
        {"split_view_chains", 34},
        {"unbind_cat_to_view", 33},
        {"move_view_after_cat", 33},
        {"split_stack_to_cats", 32},
        {"split_cat", 31},
        {"split_cat_other_dim", 31},
        {"merge_getitem_cat", 30},
        {"split_run_in_stack_cat", 30},
        {"mutate_cat", 29},
        {"split_cat_to_slices", 28},
        {"merge_split_cat_aten", 28},
        {"batch_linear", 5},
        {"batch_layernorm", 5},
        {"batch_tanh", 5},
        {"batch_sigmoid", 5},
        {"batch_relu", 5},
        {"batch_detach", 5},
        {"batch_nan_to_num", 5},
        {"batch_clamp", 5},
        {"batch_dropout", 5},
        {"batch_add", 5},
        {"batch_mul", 5},
        {"batch_linear_post_grad", 5},
        {"batch_layernorm_aten", 5},
        {"batch_aten_tanh", 5},
        {"batch_aten_sigmoid", 5},
        {"batch_aten_relu", 5},
        {"batch_aten_add", 5},
        {"batch_aten_sub", 5},
        {"batch_aten_mul", 5},
        {"batch_aten_div", 5},
        {"batch_embedding", 5},
        {"batch_linear_lhs", 4}, // after batch_linear: one batched matmul over several inputs beats one per input
        {"dedupe_views", 2},
        {"remove_dead_views", 1},
    };
    return table;
}

int builtinBenefit(const std::string &name)
{
    for (const auto &[n, b] : benefitTable())
        if (name == n)
            return b;
    return -1;
}

std::string registerBuiltinPatterns(rewrite::PatternRegistry &r, const std::string &patternDir)
{
    Registrar reg(r);
    for (auto family :
         {registerNormalizations, registerCleanupPatterns, registerSplitPatterns, registerStackPatterns, registerViewPatterns,
          registerAtenPatterns, registerHorizontalPatterns, registerLinearPatterns, registerEmbeddingPatterns, registerViewChainPatterns})
        family(reg);
    if (!reg.error().empty() || patternDir.empty())
        return reg.error();
    // Patterns written in the pattern language (patterns/*.fxpat) join the built-in ones.
    lang::PatternLibrary lib;
    if (lib.loadDirectory(patternDir, r) > 0)
        return "built-in pattern files do not compile:\n" + lib.diagnostics();
    if (lib.files().empty())
        return "no pattern files (*.fxpat) in " + patternDir + "; set FXLENS_PATTERN_DIR to the fxlens patterns directory";
    return {};
}

} // namespace fxlens::patterns
