// SPDX-License-Identifier: MIT
// The interpreter: evaluates one fx node with LibTorch (call_function, call_method and call_module
// targets; operator.*, getitem, Python-level functions whose signature differs from their ATen op,
// common leaf modules). Internal to core/exec.
#pragma once

#include "exec/Aten.h"
#include "ir/Graph.h"

#include <unordered_map>

namespace fxlens::exec::detail {

using ir::Argument;
using ir::Node;
using ir::OpKind;

struct Interp {
    const ir::Graph &g;
    const std::unordered_map<std::string, at::Tensor> &params;
    const std::vector<at::Tensor> &inputs;
    std::vector<IValue> &env; // by node id
    std::unordered_map<const Node *, Slot> &slots;

    IValue natural(const Argument &a) const;

    std::vector<IValue> positional(const Node *n, size_t from = 0) const;
    std::vector<std::pair<std::string, IValue>> keywords(const Node *n) const;

    static std::vector<IValue> items(const IValue &v);

    static bool isNumber(const IValue &v) { return v.isInt() || v.isDouble() || v.isBool(); }

    IValue getitem(const IValue &c, const IValue &idx) const;
    static IValue sliceSequence(const IValue &c, const std::vector<IValue> &slice);

    std::vector<at::indexing::TensorIndex> tensorIndices(const IValue &idx) const;

    /// Evaluates a getitem index argument: slices become 3-tuples, tuples become lists.
    IValue indexArg(const Argument &a) const;

    IValue binary(std::string op, IValue a, IValue b) const;

    const at::Tensor &param(const std::string &name) const;
    IValue optParam(const std::string &name) const;

    /// Multi-head attention as torch.nn.functional.multi_head_attention_forward computes it in eval
    /// mode (inputs sequence-first [L, B, E] unless batchFirst); returns (output, weights or None).
    static IValue attention(at::Tensor q, at::Tensor k, at::Tensor v, int64_t heads, const at::Tensor &inW, const IValue &inB,
                            const at::Tensor &qW, const at::Tensor &kW, const at::Tensor &vW, const at::Tensor &outW, const IValue &outB,
                            const IValue &keyPadding, bool needWeights, const IValue &attnMask, bool average, bool batchFirst, bool causal);

    /// torch.nn.functional.multi_head_attention_forward, by its Python signature.
    IValue multiHeadAttentionForward(std::vector<IValue> pos, std::vector<std::pair<std::string, IValue>> kw) const;

    static std::string lower(std::string s);
    /// A leaf module built with inplace=True writes its result into its input.
    static IValue inplaceModule(const ir::ModuleInfo *m, const IValue &x, IValue r);

    IValue callModule(const Node *n) const;
    IValue callAttentionModule(const Node *n, const ir::ModuleInfo *m, const std::vector<IValue> &in) const;

    /// The position of a torch.nn.functional activation's `inplace` parameter (0: none).
    static size_t inplacePosition(const std::string &base);

    /// Reads and removes the `inplace` flag of a call (keyword, or a functional activation's positional).
    static bool takeInplace(const Node *n, const std::string &base, std::vector<IValue> &pos);

    /// aten::`base`_ on pos[0] when it exists; else the functional op, copied into pos[0] (the
    /// semantics of every in-place call: the first operand holds the result).
    IValue callInPlace(const std::string &base, std::vector<IValue> pos, const std::vector<std::pair<std::string, IValue>> &kw) const;

    /// callAten, and when the values fit no overload, once more with the trailing ints from `from`
    /// on packed into one list: torch.ones(2, 3), x.view(2, 3), x.permute(1, 0), x.repeat(2, 1).
    static IValue callPacked(const std::string &name, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw,
                             size_t from);

    /// Positional argument `i`, or the keyword `name` (removed from kw); None when neither is given.
    static IValue take(std::vector<IValue> &pos, std::vector<std::pair<std::string, IValue>> &kw, size_t i,
                       std::initializer_list<const char *> names);

    /// getattr(x, name) on a tensor: the attributes torch.fx graphs read.
    static IValue tensorAttr(const at::Tensor &t, const std::string &attr);
    static std::vector<int64_t> reversedDims(int64_t d);

    /// Tensors for an index list argument of the inductor pooling prims.
    static std::vector<int64_t> ints(const IValue &v);

    /// prims._low_memory_max_pool_with_offsets and ..._offsets_to_indices (Inductor's post-grad max
    /// pooling): Python-defined prims that LibTorch lacks, computed here as Inductor's reference does.
    static IValue lowMemoryMaxPool(const std::string &t, const std::vector<IValue> &pos);

    /// Operators PyTorch has for the CPU only, which graphs captured on the CPU name, computed by
    /// device-portable operators when the run is on another device; nullopt for other calls
    /// (InterpFunctions.cpp).
    static std::optional<IValue> cpuOnlyTwin(const std::string &base, std::vector<IValue> pos,
                                             std::vector<std::pair<std::string, IValue>> kw);

    /// torch.tensor(data, dtype, device): Python numbers (nested lists of them) with Python's dtype
    /// rules (ints int64, floats the default float32, bools bool), or a tensor (copied).
    static IValue tensorFrom(const IValue &data, const IValue &dtype, const IValue &device);

    IValue callFunction(const Node *n) const;
    std::optional<IValue> callCustomOperator(const Node *n) const;
    std::string unknownTargetMessage(const Node *n) const;
    IValue callOperator(const Node *n, const std::string &op) const;
    IValue callAtenOverload(const Node *n) const;
    IValue callPrims(const Node *n) const;
    std::optional<IValue> callBuiltin(const Node *n) const;
    std::optional<IValue> callPythonSignature(const std::string &t, const std::string &base, std::vector<IValue> &pos,
                                              std::vector<std::pair<std::string, IValue>> &kw) const;

    IValue callMethod(const Node *n) const;

    /// x.to(...), x.type(dtype), x.cpu(), x.cuda(): every spelling of a device and dtype conversion.
    static IValue convert(const std::string &m, const at::Tensor &self, const std::vector<IValue> &pos,
                          const std::vector<std::pair<std::string, IValue>> &kw);

    enum class Fast : uint8_t { None, Tanh, Relu, Sigmoid, Add, Sub, Mul, Div, Linear, LayerNorm, Cat };

    /// The ops a graph runs most, compiled into unboxed plan steps when their arguments are plain.
    static Fast fastKind(const Node *n);

    IValue evalNode(const Node *n);

    /// The ATen ops PyTorch ran for `n` when it was exported (meta.decomposition), run on n's
    /// inputs; nullopt when there are none or the inputs no longer fit them (Decomposition.cpp).
    std::optional<IValue> runDecomposition(const Node *n) const;
};

} // namespace fxlens::exec::detail
