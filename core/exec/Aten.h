// SPDX-License-Identifier: MIT
// The executor's LibTorch side, shared by its sources (never included outside core/exec): dtype
// names, the coercion of fx argument values to ATen schema types, overload resolution (callAten)
// and the run's device.
#pragma once

#include "io/Safetensors.h"
#include "util/Diagnostic.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>
#include <vector>

namespace fxlens::ir {
class Argument;
}

namespace fxlens::exec::detail {

using c10::IValue;

std::optional<at::ScalarType> scalarType(const std::string &d);
std::string dtypeName(at::ScalarType t);
/// A dtype argument's value: graph dtypes evaluate to "dtype:<name>" strings, so that an int argument
/// is never taken for a dtype (x.view(-1) must not bind view.dtype); a bare enum value is read too.
std::optional<at::ScalarType> dtypeOf(const c10::IValue &v);
std::string firstLine(const std::string &s);

/// A call that cannot be made (thrown inside the executor, turned into a Diagnostic at its border).
struct CallError {
    std::string message;
};

/// Coerces a "natural" value (what an fx argument evaluates to) to a schema type.
/// `lenient` also allows number <-> 0-dim tensor and int <-> bool conversions.
bool coerce(const IValue &v, const c10::TypePtr &type, const c10::Argument &arg, IValue &out, bool lenient);

/// Binds positional + keyword values to a schema; false with a reason when they do not fit. `plan`
/// receives where each schema argument came from (see Slot::plan).
bool bindSchema(const c10::FunctionSchema &s, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw,
                bool lenient, std::vector<IValue> &stack, std::string &why, std::vector<int> *plan = nullptr);

/// The device of the run in progress: every tensor a graph creates (arange, zeros, full, a device
/// argument given as 'cpu' when it was exported) is created there, as every input and weight is.
extern thread_local std::optional<c10::Device> t_runDevice;

/// Sets the run's device for a scope (a run, a freeze).
struct DeviceScope {
    std::optional<c10::Device> saved = t_runDevice;
    explicit DeviceScope(c10::Device d) { t_runDevice = d; }
    ~DeviceScope() { t_runDevice = saved; }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;
};

/// Runs a call with its device arguments on the run's device.
void callOnRunDevice(const c10::OperatorHandle &op, std::vector<IValue> &stack);
/// callOnRunDevice, then the call's value (a tuple when the op returns several).
IValue finish(const c10::OperatorHandle &op, std::vector<IValue> &stack);

/// Per node: the overload its call bound to last time (valid while the node's target is the same).
struct Slot {
    std::string target;
    std::optional<c10::OperatorHandle> op;
    bool lenient = false;
    /// Where each schema argument came from last time: >= 0 positional index, <= -2 keyword
    /// -(j + 2), -1 default. Valid for calls with the same positional count and keyword names.
    std::vector<int> plan;
    size_t nPos = 0;
    std::vector<std::string> kwNames;

    void remember(const c10::OperatorHandle &h, bool len, std::vector<int> p, const std::vector<IValue> &pos,
                  const std::vector<std::pair<std::string, IValue>> &kw)
    {
        op = h;
        lenient = len;
        plan = std::move(p);
        nPos = pos.size();
        kwNames.clear();
        for (const auto &kv : kw)
            kwNames.push_back(kv.first);
    }
    /// Binds by the remembered plan (no name matching, no search); false when it does not apply.
    bool bind(const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw, std::vector<IValue> &stack) const
    {
        if (!op || pos.size() != nPos || kw.size() != kwNames.size())
            return false;
        for (size_t j = 0; j < kw.size(); ++j)
            if (kw[j].first != kwNames[j])
                return false;
        const auto &args = op->schema().arguments();
        if (plan.size() != args.size())
            return false;
        stack.resize(args.size());
        for (size_t k = 0; k < args.size(); ++k) {
            const int src = plan[k];
            if (src == -1) {
                stack[k] = *args[k].default_value();
                continue;
            }
            const IValue &v = src >= 0 ? pos[size_t(src)] : kw[size_t(-src - 2)].second;
            if (!coerce(v, args[k].real_type(), args[k], stack[k], lenient))
                return false;
        }
        return true;
    }
};
/// The slot of the node being evaluated; the first callAten of that node reads and fills it.
extern thread_local Slot *t_slot;

/// Whether the dispatcher has an operator of this name ("aten::add_").
bool hasAtenOp(const std::string &name);

/// Calls aten::`name` with the first overload the values bind to (strict pass, then lenient).
IValue callAten(const std::string &name, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw = {});

/// Every tensor in a value (lists, tuples and dicts flattened in order).
void flattenTensors(const IValue &v, std::vector<at::Tensor> &out);
Diagnostic diag(std::string msg, std::string node = {});
at::Tensor fromSafe(const io::SafeTensor &t);
/// A tensor as safetensors stores it; throws std::runtime_error (why, and what to do instead) for a
/// dtype safetensors has no code for and for a sparse or other non-strided tensor.
io::SafeTensor toSafe(const at::Tensor &x);
/// flattenTensors of the output node's value `v` (its argument `a` evaluated), with the name of the
/// node each tensor came from ("output" for a tensor written in the output node itself).
void flattenOutputs(const ir::Argument &a, const IValue &v, std::vector<at::Tensor> &out, std::vector<std::string> &nodes);
/// A tensor's values as a dense CPU float64 tensor (complex: torch.view_as_real's pairs, quantized:
/// dequantized); throws for dtypes without numeric values (bits, sub-byte integers, float4).
at::Tensor asDouble(const at::Tensor &t);
/// The sum of absolute values (complex: magnitudes); NaN for a dtype with no numeric values.
double absSum(const at::Tensor &t);

} // namespace fxlens::exec::detail
