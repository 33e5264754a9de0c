// SPDX-License-Identifier: MIT
// Op schemas: the parameter names and defaults of the calls patterns look at, so that every spelling
// of a call (positional, keyword, default, Tensor method, ATen overload) reads as one positional list.
#pragma once

#include "ir/Node.h"

#include <optional>
#include <string>
#include <vector>

namespace fxlens::rewrite {

struct ParamSpec {
    std::string name;
    std::optional<ir::Argument> dflt; ///< nullopt: required
};

struct OpSchema {
    OpSchema(std::vector<ParamSpec> p = {}, int va = -1, std::vector<std::pair<std::string, std::string>> al = {})
        : params(std::move(p)), varargs(va), aliases(std::move(al))
    {
    }
    std::vector<ParamSpec> params;
    /// Index of a `*args` parameter (x.view(2, 3), einsum(eq, a, b)): positional values from here on
    /// are packed into one list. -1: none.
    int varargs;
    /// Keyword spellings of other libraries that mean a parameter (numpy's axis -> dim, ...).
    std::vector<std::pair<std::string, std::string>> aliases;
};

/// The torch keyword a numpy spelling stands for (axis -> dim, keepdims -> keepdim, x/a/x1 -> input,
/// x2 -> other); nullptr for any other name.
const char *numpyKeyword(const std::string &name);

/// Whether a call target writes to one of its inputs: Tensor methods and ATen ops ending in `_`
/// (`x.add_`, `aten.add_.Tensor`) and Python's augmented operators (`operator.iadd`). Such calls
/// are never dead, never batched, never folded.
bool writesInPlace(const std::string &target);

/// The schema of (op, target); nullptr when fxlens has none (such calls are read as written).
const OpSchema *schemaFor(ir::OpKind op, const std::string &target);

/// The inputs of a call in schema order: out[i] is the argument for params[i] (the node's own
/// argument, or the default), nullptr when absent without default. False (with `error`) when the
/// call does not fit the schema: too many positionals, an unknown or repeated keyword.
bool normalizedArgs(const ir::Node *n, const OpSchema &s, std::vector<ir::Argument> &out, std::string *error = nullptr);

} // namespace fxlens::rewrite
