// SPDX-License-Identifier: MIT
// Meta: what fxlens knows about the value a node produces and where it came from.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fxlens::ir {

/// A dimension: a static size or a symbolic one ("s0"); symbolic dims keep their name.
struct Dim {
    int64_t value = 0;
    std::string symbol; ///< empty for static dims
    bool isStatic() const { return symbol.empty(); }
    bool operator==(const Dim &o) const { return value == o.value && symbol == o.symbol; }
};

/// Meta of one tensor value (torch.fx's TensorMetadata / FakeTensor fields).
struct TensorMeta {
    std::vector<Dim> shape;
    std::string dtype; ///< "float32", "int64", ...
    std::vector<int64_t> stride;
    bool requiresGrad = false;
    bool operator==(const TensorMeta &o) const
    {
        return shape == o.shape && dtype == o.dtype && stride == o.stride && requiresGrad == o.requiresGrad;
    }
    /// Static sizes (symbolic dims map to -1).
    std::vector<int64_t> sizes() const;
    std::string toString() const; ///< "f32[64, 32]"
};

/// The value a node produces: nothing known, a tensor, a sequence of values (tuple/list outputs of
/// split/unbind, ...), or a non-tensor scalar written as text.
struct ValueMeta {
    enum class Kind : uint8_t { Unknown, Tensor, Sequence, Scalar };
    Kind kind = Kind::Unknown;
    TensorMeta tensor;
    std::vector<ValueMeta> items;
    std::string scalar; ///< JSON text of a scalar value (e.g. "3", "true")

    static ValueMeta ofTensor(TensorMeta t)
    {
        ValueMeta v;
        v.kind = Kind::Tensor;
        v.tensor = std::move(t);
        return v;
    }
    bool isTensor() const { return kind == Kind::Tensor; }
    bool operator==(const ValueMeta &o) const { return kind == o.kind && tensor == o.tensor && items == o.items && scalar == o.scalar; }
    std::string toString() const;
};

/// One level of nn_module_stack: the FX key, the qualified module path and the module's class.
struct ModuleFrame {
    std::string key;
    std::string path;
    std::string type;
    bool operator==(const ModuleFrame &o) const { return key == o.key && path == o.path && type == o.type; }
};

/// Where a rewritten node came from: which pattern created/replaced it, at which step.
struct Provenance {
    std::string pattern;
    int64_t step = -1;
    std::vector<std::string> replaced; ///< names of the nodes this one stands in for
    bool operator==(const Provenance &o) const { return pattern == o.pattern && step == o.step && replaced == o.replaced; }
};

/// node.meta: the fields fxlens models. Unknown meta keys are not kept.
struct Meta {
    ValueMeta val;
    std::vector<ModuleFrame> moduleStack;
    std::string stackTrace;
    std::string sourceFnName;   ///< source_fn_stack[-1][0]
    std::string sourceFnTarget; ///< source_fn_stack[-1][1]
    std::optional<Provenance> provenance;
    /// What PyTorch ran for this call when it was exported (a Python-level function traced to ATen
    /// ops): a graph document (docs/FORMAT.md, "decomposition") whose placeholders are the node's
    /// input nodes in order. The executor runs it when the call itself has no ATen operator or fits
    /// none; an edit of the call's target or arguments drops it (Graph::setArgs, ...).
    std::shared_ptr<const std::string> decomposition;
    /// A custom operator's kernel as the exporter found it: "cpp" (a C++ library registered it:
    /// --load-library), "python" (torch.library.custom_op: only Python runs it), "" unknown.
    std::string customOp;

    /// The innermost module path ("" at top level).
    const std::string &modulePath() const;
    bool operator==(const Meta &o) const
    {
        return val == o.val && moduleStack == o.moduleStack && stackTrace == o.stackTrace && sourceFnName == o.sourceFnName &&
            sourceFnTarget == o.sourceFnTarget && provenance == o.provenance &&
            (decomposition == o.decomposition || (decomposition && o.decomposition && *decomposition == *o.decomposition)) &&
            customOp == o.customOp;
    }
};

} // namespace fxlens::ir
