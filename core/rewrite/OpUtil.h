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

namespace fxlens::rewrite {

/// Piece `index` of `src` along `dim` taken one slice at a time (an unbind output):
/// getitem(unbind(x, d), i), aten.select.int(x, d, i), squeeze(slice(x, d, i, i+1), d).
struct UnbindPiece {
    Node *node = nullptr;
    Node *src = nullptr;
    int64_t dim = 0; ///< non-negative, against src's rank
    int64_t index = 0;
};
std::optional<UnbindPiece> asUnbindPiece(Node *n);

/// A getitem of a split: the split, the piece index, and the piece's offset along the split dim.
struct SplitPiece {
    Node *node = nullptr;
    SplitView split;
    int64_t index = 0;
    int64_t offset = 0;
};
std::optional<SplitPiece> asSplitPiece(Node *n);

/// Static sizes of a node's tensor value; empty optional if unknown or symbolic.
std::optional<std::vector<int64_t>> staticShape(const Node *n);
/// True when the stride meta says the tensor is contiguous (unknown strides: false).
bool isContiguous(const Node *n);
/// Tensor meta with `shape`, the dtype of `like`, contiguous strides.
ir::ValueMeta tensorLike(const Node *like, const std::vector<int64_t> &shape);

/// Emitters that build view-like ops in the IR of the graph (`aten` picks ATen ops), with value meta.
struct Emit {
    Rewriter &rw;
    bool aten;
    Node *before;
    const Node *like; ///< module path / stack trace donor
    std::vector<std::string> replaced;

    Node *call(const std::string &target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs,
               const std::string &name, const ir::ValueMeta &val);
    /// x.narrow(dim, start, length) / aten.slice(x, dim, start, start + length).
    Node *narrow(Node *x, int64_t dim, int64_t start, int64_t length);
    /// torch.reshape / aten.view (contiguous input) or aten.reshape.
    Node *reshape(Node *x, const std::vector<int64_t> &shape);
    /// torch.movedim / aten.permute; returns x when src == dst.
    Node *movedim(Node *x, int64_t src, int64_t dst);
    Node *unsqueeze(Node *x, int64_t dim);
};

} // namespace fxlens::rewrite
