// SPDX-License-Identifier: MIT
// Mutation and aliasing: which calls write to an input, which values may share storage, and so which
// nodes no rewrite may touch. The engine refuses a match that reads or replaces a value whose storage
// is written in place (or a view of it), and a step that makes a graph output alias a graph input.
#pragma once

#include "ir/Graph.h"
#include "rewrite/Pattern.h"

#include <cstdint>
#include <vector>

namespace fxlens::rewrite {

class Rewriter;
struct Edit;

/// The call writes to one of its inputs: an in-place target (`x.add_`, `aten.copy_.default`,
/// `operator.iadd` on a tensor), `inplace=True`, an `out=` keyword, or a leaf module built with
/// `inplace=True` (nn.ReLU(inplace=True)).
bool mutatesInput(const ir::Node *n);

/// The call's result depends on its input's memory layout, not only on its values: `as_strided`
/// (any spelling) reads raw storage at given strides; `stride()`, `storage_offset()`, `data_ptr()`,
/// `is_contiguous()` and storage queries return layout facts. A rewrite that changes the layout of
/// such an input (a fused producer whose pieces are strided views, a folded view chain) changes
/// what these calls see, so the engine treats their inputs like values written in place.
bool observesLayout(const ir::Node *n);

/// A `view` call (Tensor.view with a shape, aten.view, aten._unsafe_view): unlike reshape it fails
/// when its input's strides do not allow the view.
bool isStrictView(const ir::Node *n);

/// `value` may now have other strides than before (a rewrite replaced what it reads, or it is a piece
/// of a fused output): every strict view reached from it through aliasing calls becomes a reshape
/// (the same values: a view where the strides allow one, a copy where `view` would fail). Returns
/// how many were changed.
size_t relaxViewsOf(Rewriter &rw, ir::Node *value);

/// After a step: every call whose first input the step replaced reads a value whose strides may
/// differ; strict views among them and after them become reshapes (relaxViewsOf).
size_t relaxViewsAfterStep(Rewriter &rw, const std::vector<struct Edit> &edits);

/// The call has an effect beyond its value (mutation, assertions, printing, RNG seeding, profiler
/// ranges, a call_module whose type is not known to be pure): dead-code elimination keeps it.
bool hasSideEffects(const ir::Node *n);

/// The call's value may share storage with its first tensor input (views, reshape, split pieces,
/// getitem of a split/unbind, contiguous/to/detach/expand, in-place calls).
bool mayAliasInput(const ir::Node *n);

/// For one graph version: nodes whose value shares storage with a tensor that some call mutates.
class AliasInfo {
public:
    explicit AliasInfo(const ir::Graph &g);
    bool any() const { return m_any; }
    /// The node's value may be (a view of) storage written in place or whose layout a call observes,
    /// or the node writes in place / observes layout.
    bool tainted(const ir::Node *n) const { return n->id() < m_tainted.size() && m_tainted[n->id()]; }
    /// Tainted by a layout observer only (no write): what explain says.
    bool layoutOnly(const ir::Node *n) const { return tainted(n) && m_tainted[n->id()] == kLayout; }
    static constexpr uint8_t kWrite = 1, kLayout = 2;

private:
    bool m_any = false;
    std::vector<uint8_t> m_tainted;
};

/// The engine's mutation rule for one match: false (with why) when a matched node is, or reads,
/// storage written in place. `Pattern::mutationAware` patterns are exempt; the caller checks that.
bool mutationSafe(const AliasInfo &alias, const std::vector<Node *> &matched, MatchFailure &why);

/// The graph input (placeholder or get_attr) whose storage the value of `n` may share, following
/// aliasing calls back; nullptr when the value is fresh.
const ir::Node *aliasedInput(const ir::Node *n);

/// For every graph output value (the output node's tensors, in order): the graph input it aliases.
std::vector<const ir::Node *> outputAliases(const ir::Graph &g);

} // namespace fxlens::rewrite
