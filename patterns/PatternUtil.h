// SPDX-License-Identifier: MIT
// Helpers shared by the built-in pattern files.
#pragma once

#include "ir/Target.h"
#include "rewrite/OpUtil.h"
#include "rewrite/PatternGraph.h"
#include "rewrite/Rewriter.h"

#include <cctype>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fxlens::patterns {

using namespace fxlens::rewrite;

/// The calling thread's own state of type T for one pattern object. Patterns are shared by sessions
/// and match queries on several threads (the debugger's run on the GUI thread, the match counter on
/// a worker): what a pattern keeps between calls (a cache, the match its rewrite reuses) must not be
/// shared between them.
template <typename T> T &perThread(const void *owner)
{
    thread_local std::unordered_map<const void *, T> states;
    return states[owner];
}
using ir::OpKind;

inline bool fail(MatchFailure &why, const Node *n, std::string element, std::string expected, std::string found)
{
    why = {std::move(element), n ? n->name() : std::string("?"), std::move(expected), std::move(found)};
    return false;
}

inline std::vector<Argument> intList(const std::vector<int64_t> &v)
{
    std::vector<Argument> out;
    out.reserve(v.size());
    for (auto x : v)
        out.push_back(Argument::integer(x));
    return out;
}

inline std::vector<Argument> nodeList(const std::vector<Node *> &v)
{
    std::vector<Argument> out;
    out.reserve(v.size());
    for (auto *x : v)
        out.push_back(Argument::node(x));
    return out;
}

inline std::string joinInts(const std::vector<int64_t> &v)
{
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

inline bool isAten(const Node *n) { return ir::Target::parse(n->target()).isAten(); }

/// The node name torch.fx gives a get_attr of a qualified name ("blocks.0.weight" -> "blocks_0_weight").
inline std::string attrNodeName(std::string qualified)
{
    for (auto &c : qualified)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            c = '_';
    if (qualified.empty() || std::isdigit(static_cast<unsigned char>(qualified[0])))
        qualified.insert(qualified.begin(), '_');
    return qualified;
}

/// Emit helper positioned before `before`, copying module path/stack trace from `like`.
inline Emit emitAt(Rewriter &rw, Node *before, const Node *like, bool aten, std::vector<std::string> replaced = {})
{
    return Emit{rw, aten, before, like, std::move(replaced)};
}

/// Creates `split(input, sizes, dim)` in the IR of `like` plus one getitem per piece, before `before`.
std::vector<Node *> emitSplit(Rewriter &rw, const SplitView &like, Node *input, const std::vector<int64_t> &sizes, int64_t dim,
                              Node *before, const std::vector<std::string> &replaced);

/// Replaces a call by a canonical call (same node when only the inputs change; a new node
/// otherwise, taking over its uses and meta).
void canonicalize(Rewriter &rw, Node *n, const std::string &target, std::vector<Argument> args,
                  std::vector<std::pair<std::string, Argument>> kwargs);

/// Rebuilds a cat with a new tensor list (a cat of one tensor is replaced by that tensor).
void setCatInputs(Rewriter &rw, Node *cat, const std::vector<Node *> &inputs);

/// The tensor a call reads first (args[0] or its keyword: input / self).
Node *firstInput(const Node *n);
/// reshape / view in either IR (torch.reshape, Tensor.reshape/view, aten.view/_unsafe_view/reshape).
bool isViewLike(const Node *n);

/// stack(ts, dim): the tensor list and the non-negative dim (against the output rank).
struct StackView {
    std::vector<Node *> inputs;
    int64_t dim = 0;
};
std::optional<StackView> asStack(Node *n, MatchFailure &why);

/// The nodes that must move before `first` so that `operands` are defined there: every operand after
/// it, with what it reads from there on, in program order. Null (and `blocker` set) when one of them
/// is a graph input or in `pinned` (a group's members), which cannot move.
std::optional<std::vector<Node *>> hoistBefore(Node *first, const std::vector<Node *> &operands, const std::unordered_set<Node *> &pinned,
                                               Node *&blocker);

/// Every section of the split has the size of the first.
bool equalSections(const SplitView &s);

/// The pieces of an equal split of `s.input` arranged along `dim` as one view chain: stacked (a new
/// dim of size n at `dim`) or, with `concatShape`, concatenated to that shape.
Node *piecesAlong(Emit &e, const SplitView &s, int64_t dim, const std::vector<int64_t> *concatShape);

/// Runs of consecutive pieces of one split along the cat dim inside a cat list.
struct PieceRun {
    size_t start = 0; ///< position in the cat list
    size_t len = 0;
    SplitView split;
    int64_t firstIndex = 0; ///< index of the first piece in the split
    int64_t offset = 0;     ///< offset of the first piece along the split dim
    int64_t width = 0;      ///< sum of the run's section sizes
    bool full() const { return firstIndex == 0 && len == split.sizes.size(); }
};
std::vector<PieceRun> pieceRuns(const std::vector<Node *> &inputs, int64_t catDim, bool requireSameDim = true);

/// Runs of consecutive unbind pieces (getitem(unbind), select, squeeze(slice)) of one source.
struct UnbindRun {
    size_t start = 0;
    size_t len = 0;
    Node *src = nullptr;
    int64_t dim = 0;
    int64_t firstIndex = 0;
    bool full() const;
};
std::vector<UnbindRun> unbindRuns(const std::vector<Node *> &inputs);

/// Threshold on run length above which partial runs are turned into slices (Optimus' threshold_to_cat).
constexpr size_t kThresholdToCat = 10;

/// narrow(x) to an equal-size run of split pieces, unflattened at the split dim into [len, width].
Node *unflattenRun(Emit &e, const PieceRun &run);

/// Anchors of the split, cat and stack patterns (Torch and ATen spellings).
extern const std::vector<AnchorKey> kSplitKeys, kCatKeys, kStackKeys;
/// Pieces [first, first + len) of a split have one size.
bool sameSizes(const SplitView &s, size_t first, size_t len);
/// Replaces cat inputs [start, start+len) by `with` (nullptr: drop them) and erases dead pieces.
void replaceRun(Rewriter &rw, Node *cat, const std::vector<Node *> &inputs, size_t start, size_t len, Node *with);

/// Adds the built-in C++ patterns to a registry, each with the benefit the benefit table
/// (BuiltinPatterns.cpp) gives its name. The first problem (a duplicate name, a name the table
/// lacks) is kept and later patterns are not added.
class Registrar {
public:
    explicit Registrar(PatternRegistry &r) : m_registry(r) {}
    void add(std::unique_ptr<Pattern> p);
    const std::string &error() const { return m_error; }

private:
    PatternRegistry &m_registry;
    std::string m_error;
};

// The families, one file each, in the order registerBuiltinPatterns calls them.
void registerNormalizations(Registrar &r);
void registerCleanupPatterns(Registrar &r);
void registerSplitPatterns(Registrar &r);
void registerStackPatterns(Registrar &r);
void registerViewPatterns(Registrar &r);
void registerAtenPatterns(Registrar &r);
void registerHorizontalPatterns(Registrar &r);
void registerLinearPatterns(Registrar &r);
void registerEmbeddingPatterns(Registrar &r);
void registerViewChainPatterns(Registrar &r);

} // namespace fxlens::patterns
