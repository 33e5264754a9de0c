// SPDX-License-Identifier: MIT
// OpUtil: read split/cat/stack/unbind/getitem nodes in any spelling (torch function, Tensor method,
// ATen overload) as one normalized view, so each pattern is written once for both IRs.
#pragma once

#include "ir/Node.h"
#include "rewrite/Pattern.h"

#include <optional>
#include <string>
#include <vector>

namespace fxlens::rewrite {

/// A split-like node: torch.split, Tensor.split, aten.split.Tensor, aten.split_with_sizes.default.
struct SplitView {
    Node *node = nullptr;
    Node *input = nullptr;
    std::vector<int64_t> sizes; ///< resolved section sizes (from meta for int split sizes)
    int64_t dim = 0;            ///< non-negative
    bool aten = false;
};

/// A cat-like node: torch.cat, torch.concat, aten.cat.default.
struct CatView {
    Node *node = nullptr;
    std::vector<Node *> inputs; ///< the tensor list (must be all node references)
    int64_t dim = 0;            ///< non-negative
    bool aten = false;
};

/// Rank of a node's tensor value, -1 if unknown.
int rankOf(const Node *n);
/// Normalizes a possibly negative dim against a rank; nullopt if out of range or rank unknown.
std::optional<int64_t> normalizeDim(int64_t dim, int rank);

bool isGetItem(const Node *n);
/// getitem(src, k) with an int index: returns k, else -1.
int64_t getItemIndex(const Node *n, Node **src = nullptr);

std::optional<SplitView> asSplit(Node *n, MatchFailure *why = nullptr);
std::optional<CatView> asCat(Node *n, MatchFailure *why = nullptr);
/// Users of a tuple-producing node grouped by index; false if some user is not an int getitem.
bool getItemUsers(Node *n, std::vector<std::vector<Node *>> &byIndex, size_t count);

/// Tensor meta of piece `i` when `input` is split along `dim` into `sizes`.
ir::ValueMeta pieceMeta(const Node *input, int64_t dim, int64_t size);

} // namespace fxlens::rewrite
