// SPDX-License-Identifier: MIT
// The LibTorch interpreter over the core IR. call_function / call_method targets resolve to ATen
// operators through the dispatcher; arguments are bound to each overload's schema (positional, by
// name, defaults) and coerced to its types, and the first overload that binds is called — the way
// TorchScript picks overloads. Python-level functions whose signature differs from their ATen op
// (torch.split, F.batch_norm, F.embedding, ...), operator.*, getitem and common leaf modules are
// handled here. The only file that includes ATen.
#include "exec/Executor.h"
#include "exec/CudaGraph.h"

#include "io/Safetensors.h"
#include "rewrite/Freeze.h"
#include "rewrite/Mutation.h"
#include "rewrite/Schema.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <functional>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace fxlens::exec {

using c10::IValue;
using ir::Argument;
using ir::Node;
using ir::OpKind;

namespace {

// --- dtypes ---------------------------------------------------------------------------------------

std::optional<at::ScalarType> scalarType(const std::string &d)
{
    static const std::pair<const char *, at::ScalarType> table[] = {
        {"float32", at::kFloat}, {"float64", at::kDouble}, {"float16", at::kHalf}, {"bfloat16", at::kBFloat16},
        {"int64", at::kLong},    {"int32", at::kInt},      {"int16", at::kShort},  {"int8", at::kChar},
        {"uint8", at::kByte},    {"bool", at::kBool},      {"complex64", at::kComplexFloat}};
    for (const auto &[n, t] : table)
        if (d == n)
            return t;
    return std::nullopt;
}

std::string dtypeName(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kLong: return "int64";
    case at::kInt: return "int32";
    case at::kShort: return "int16";
    case at::kChar: return "int8";
    case at::kByte: return "uint8";
    case at::kBool: return "bool";
    default: return c10::toString(t);
    }
}

/// A dtype argument's value: graph dtypes evaluate to "dtype:<name>" strings, so that an int argument
/// is never taken for a dtype (x.view(-1) must not bind view.dtype); a bare enum value is read too.
std::optional<at::ScalarType> dtypeOf(const c10::IValue &v)
{
    if (v.isString() && v.toStringRef().rfind("dtype:", 0) == 0)
        return scalarType(v.toStringRef().substr(6));
    if (v.isInt() && v.toInt() >= 0 && v.toInt() < int64_t(at::ScalarType::NumOptions))
        return static_cast<at::ScalarType>(v.toInt());
    return std::nullopt;
}

std::string firstLine(const std::string &s)
{
    auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
}

// --- the operator table -----------------------------------------------------------------------------

/// aten::name -> overloads without out= arguments, default overload first. In-place ops have names of
/// their own (aten::add_), so they never shadow the functional overloads.
class OpTable {
public:
    static const OpTable &get()
    {
        static OpTable t;
        return t;
    }
    const std::vector<c10::OperatorHandle> *find(const std::string &name) const
    {
        auto it = m_ops.find(name);
        return it == m_ops.end() ? nullptr : &it->second;
    }

private:
    OpTable()
    {
        auto &d = c10::Dispatcher::singleton();
        for (const auto &on : d.getAllOpNames()) {
            if (on.name.rfind("aten::", 0) != 0)
                continue;
            auto h = d.findSchema(on);
            if (!h || !h->hasSchema())
                continue;
            const auto &s = h->schema();
            bool out = false;
            for (const auto &a : s.arguments())
                out = out || a.is_out();
            const bool inPlace = !on.name.empty() && on.name.back() == '_';
            if (out || (s.is_mutable() && !inPlace) || on.overload_name.find("out") != std::string::npos)
                continue;
            auto &list = m_ops[on.name];
            if (on.overload_name.empty())
                list.insert(list.begin(), *h);
            else
                list.push_back(*h);
        }
    }
    std::unordered_map<std::string, std::vector<c10::OperatorHandle>> m_ops;
};

// --- values ---------------------------------------------------------------------------------------

struct CallError {
    std::string message;
};

/// Coerces a "natural" value (what an fx argument evaluates to) to a schema type.
/// `lenient` also allows number <-> 0-dim tensor and int <-> bool conversions.
bool coerce(const IValue &v, const c10::TypePtr &type, const c10::Argument &arg, IValue &out, bool lenient)
{
    using K = c10::TypeKind;
    switch (type->kind()) {
    case K::TensorType:
        if (v.isTensor()) {
            out = v;
            return true;
        }
        if (lenient && (v.isInt() || v.isDouble() || v.isBool())) {
            // A Python number where a Tensor is expected (aten.add.Tensor(x, 0)) takes part in type
            // promotion as a number, as PyTorch's argument parser makes it: a wrapped-number tensor
            // (an int64 tensor + 1 stays int64, an int tensor + 0.5 becomes the default float).
            at::Tensor t = c10::scalar_to_tensor(v.toScalar());
            t.unsafeGetTensorImpl()->set_wrapped_number(true);
            out = t;
            return true;
        }
        return false;
    case K::OptionalType:
        if (v.isNone()) {
            out = IValue();
            return true;
        }
        return coerce(v, type->castRaw<c10::OptionalType>()->getElementType(), arg, out, lenient);
    case K::IntType:
    case K::SymIntType:
        if (v.isInt()) {
            out = v;
            return true;
        }
        if (lenient && v.isBool()) {
            out = IValue(int64_t(v.toBool()));
            return true;
        }
        if (lenient && v.isTensor() && v.toTensor().dim() == 0 && !v.toTensor().is_floating_point()) {
            out = IValue(v.toTensor().item<int64_t>());
            return true;
        }
        return false;
    case K::FloatType:
    case K::SymFloatType:
        if (v.isDouble() || v.isInt()) {
            out = IValue(v.isDouble() ? v.toDouble() : double(v.toInt()));
            return true;
        }
        return false;
    case K::NumberType:
        if (v.isInt() || v.isDouble() || v.isBool()) {
            out = v;
            return true;
        }
        if (lenient && v.isTensor() && v.toTensor().dim() == 0) {
            out = IValue(v.toTensor().item());
            return true;
        }
        return false;
    case K::BoolType:
    case K::SymBoolType:
        if (v.isBool()) {
            out = v;
            return true;
        }
        if (lenient && v.isInt()) {
            out = IValue(v.toInt() != 0);
            return true;
        }
        return false;
    case K::StringType:
        if (v.isString()) {
            out = v;
            return true;
        }
        return false;
    case K::ScalarTypeType:
        if (v.isString()) {
            if (auto st = dtypeOf(v)) {
                out = IValue(int64_t(*st));
                return true;
            }
            return false;
        }
        if (lenient && dtypeOf(v)) {
            out = v;
            return true;
        }
        return false;
    case K::LayoutType:
    case K::MemoryFormatType:
        if (v.isInt()) {
            out = v;
            return true;
        }
        return false;
    case K::DeviceObjType:
        if (v.isDevice()) {
            out = v;
            return true;
        }
        if (v.isString()) {
            out = IValue(c10::Device(v.toStringRef()));
            return true;
        }
        return false;
    case K::GeneratorType: return false;
    case K::ListType: {
        auto elem = type->castRaw<c10::ListType>()->getElementType();
        std::vector<IValue> items;
        if (v.isList() || v.isTuple()) {
            if (v.isList())
                for (const auto &x : v.toListRef())
                    items.push_back(x);
            else
                for (const auto &x : v.toTupleRef().elements())
                    items.push_back(x);
        } else if ((elem->kind() == K::IntType || elem->kind() == K::SymIntType || elem->kind() == K::FloatType ||
                    elem->kind() == K::BoolType) &&
                   (v.isInt() || v.isDouble() || v.isBool()) && (arg.N() || lenient)) {
            // int[2] stride=2 means [2, 2]; int[1] dim=1 means [1].
            size_t n = arg.N() ? size_t(*arg.N()) : 1;
            items.assign(n, v);
        } else if (v.isIntList() || v.isTensorList() || v.isDoubleList() || v.isBoolList()) {
            for (const auto &x : v.toListRef())
                items.push_back(x);
        } else {
            return false;
        }
        switch (elem->kind()) {
        case K::IntType:
        case K::SymIntType: {
            c10::List<int64_t> l;
            for (const auto &x : items) {
                IValue c;
                if (!coerce(x, c10::IntType::get(), arg, c, lenient))
                    return false;
                l.push_back(c.toInt());
            }
            out = IValue(l);
            return true;
        }
        case K::FloatType: {
            c10::List<double> l;
            for (const auto &x : items) {
                IValue c;
                if (!coerce(x, c10::FloatType::get(), arg, c, lenient))
                    return false;
                l.push_back(c.toDouble());
            }
            out = IValue(l);
            return true;
        }
        case K::BoolType: {
            c10::List<bool> l;
            for (const auto &x : items) {
                if (!x.isBool())
                    return false;
                l.push_back(x.toBool());
            }
            out = IValue(l);
            return true;
        }
        case K::TensorType: {
            c10::List<at::Tensor> l;
            for (const auto &x : items) {
                if (!x.isTensor())
                    return false;
                l.push_back(x.toTensor());
            }
            out = IValue(l);
            return true;
        }
        case K::OptionalType: {
            c10::List<std::optional<at::Tensor>> l;
            for (const auto &x : items) {
                if (x.isNone())
                    l.push_back(std::nullopt);
                else if (x.isTensor())
                    l.push_back(x.toTensor());
                else
                    return false;
            }
            out = IValue(l);
            return true;
        }
        default: return false;
        }
    }
    default: out = v; return true;
    }
}

/// Binds positional + keyword values to a schema; false with a reason when they do not fit.
bool bindSchema(const c10::FunctionSchema &s, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw,
                bool lenient, std::vector<IValue> &stack, std::string &why, std::vector<int> *plan = nullptr)
{
    const auto &args = s.arguments();
    stack.assign(args.size(), IValue());
    std::vector<bool> set(args.size(), false);
    if (plan)
        plan->assign(args.size(), -1);
    for (size_t i = 0; i < pos.size(); ++i) {
        if (i >= args.size() || args[i].kwarg_only()) {
            why = std::to_string(pos.size()) + " positional arguments";
            return false;
        }
        if (!coerce(pos[i], args[i].real_type(), args[i], stack[i], lenient)) {
            why = "argument '" + args[i].name() + "' (" + args[i].real_type()->str() + ") got " + pos[i].tagKind();
            return false;
        }
        set[i] = true;
        if (plan)
            (*plan)[i] = int(i);
    }
    auto indexOf = [&](const std::string &n) {
        size_t k = 0;
        while (k < args.size() && args[k].name() != n)
            ++k;
        return k;
    };
    for (size_t j = 0; j < kw.size(); ++j) {
        const auto &[name, v] = kw[j];
        size_t k = indexOf(name);
        // Python spellings of ATen argument names: numpy's (as torch accepts them), then torch's.
        std::string py = name;
        if (k == args.size())
            if (const char *t = rewrite::numpyKeyword(name))
                k = indexOf(py = t);
        static const std::pair<const char *, const char *> aliases[] = {{"input", "self"}, {"tensor", "self"}, {"training", "train"}};
        for (const auto &[from, to] : aliases)
            if (k == args.size() && py == from)
                k = indexOf(to);
        if (k == args.size()) {
            why = "no argument '" + name + "'";
            return false;
        }
        if (set[k]) {
            why = "argument '" + name + "' given twice";
            return false;
        }
        if (!coerce(v, args[k].real_type(), args[k], stack[k], lenient)) {
            why = "argument '" + args[k].name() + "' (" + args[k].real_type()->str() + ") got " + v.tagKind();
            return false;
        }
        set[k] = true;
        if (plan)
            (*plan)[k] = -int(j) - 2;
    }
    for (size_t k = 0; k < args.size(); ++k) {
        if (set[k])
            continue;
        if (!args[k].default_value()) {
            why = "missing argument '" + args[k].name() + "'";
            return false;
        }
        stack[k] = *args[k].default_value();
    }
    return true;
}

/// The overload that bound last time, by op name and the kinds of the values passed (the
/// interpreter's hot path: a graph calls the same few ops thousands of times).
struct OverloadCache {
    std::mutex mutex;
    std::unordered_map<std::string, std::pair<c10::OperatorHandle, bool>> map;
    static OverloadCache &get()
    {
        static OverloadCache c;
        return c;
    }
};

std::string callKey(const std::string &name, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw)
{
    std::string k = name;
    for (const auto &v : pos) {
        k += '|';
        k += v.tagKind();
        if (v.isList())
            k += v.toListRef().empty() ? "" : v.toListRef()[0].tagKind();
    }
    for (const auto &[n, v] : kw) {
        k += '|';
        k += n;
        k += '=';
        k += v.tagKind();
    }
    return k;
}

/// The device of the run in progress: every tensor a graph creates (arange, zeros, full, a device
/// argument given as 'cpu' when it was exported) is created there, as every input and weight is.
thread_local std::optional<c10::Device> t_runDevice;

/// Device arguments of a call set to the run's device (only when that is not the CPU).
void placeOnRunDevice(const c10::FunctionSchema &s, std::vector<IValue> &stack)
{
    if (!t_runDevice || t_runDevice->is_cpu())
        return;
    const auto &args = s.arguments();
    for (size_t k = 0; k < args.size() && k < stack.size(); ++k) {
        const c10::TypePtr &t = args[k].real_type();
        const bool device = t->kind() == c10::TypeKind::DeviceObjType ||
                            (t->kind() == c10::TypeKind::OptionalType &&
                             t->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::DeviceObjType);
        if (device)
            stack[k] = IValue(*t_runDevice);
    }
}

/// Sets the run's device for a scope (a run, a freeze).
struct DeviceScope {
    std::optional<c10::Device> saved = t_runDevice;
    explicit DeviceScope(c10::Device d) { t_runDevice = d; }
    ~DeviceScope() { t_runDevice = saved; }
};

/// Runs a call with its device arguments on the run's device.
void callOnRunDevice(const c10::OperatorHandle &op, std::vector<IValue> &stack)
{
    placeOnRunDevice(op.schema(), stack);
    op.callBoxed(stack);
}

IValue finish(const c10::OperatorHandle &op, std::vector<IValue> &stack)
{
    callOnRunDevice(op, stack);
    if (op.schema().returns().size() == 1)
        return stack.empty() ? IValue() : stack[0];
    return c10::ivalue::Tuple::create(std::move(stack));
}

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
thread_local Slot *t_slot = nullptr;

/// Calls aten::`name` with the first overload the values bind to (strict pass, then lenient).
IValue callAten(const std::string &name, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw = {})
{
    Slot *slot = t_slot;
    t_slot = nullptr;
    if (slot && slot->op) {
        std::vector<IValue> stack;
        if (slot->bind(pos, kw, stack))
            return finish(*slot->op, stack);
    }
    auto &cache = OverloadCache::get();
    const std::string key = callKey(name, pos, kw);
    {
        std::optional<std::pair<c10::OperatorHandle, bool>> hit;
        {
            std::lock_guard<std::mutex> lock(cache.mutex);
            auto it = cache.map.find(key);
            if (it != cache.map.end())
                hit = it->second;
        }
        if (hit) {
            std::vector<IValue> stack;
            std::string why;
            std::vector<int> plan;
            if (bindSchema(hit->first.schema(), pos, kw, hit->second, stack, why, &plan)) {
                if (slot)
                    slot->remember(hit->first, hit->second, std::move(plan), pos, kw);
                return finish(hit->first, stack);
            }
        }
    }
    const auto *ops = OpTable::get().find(name);
    if (!ops || ops->empty())
        throw CallError{"no ATen operator " + name};
    std::string firstWhy;
    for (bool lenient : {false, true}) {
        for (const auto &op : *ops) {
            std::vector<IValue> stack;
            std::string why;
            std::vector<int> plan;
            if (!bindSchema(op.schema(), pos, kw, lenient, stack, why, &plan)) {
                if (firstWhy.empty())
                    firstWhy = op.schema().overload_name() + ": " + why;
                continue;
            }
            {
                std::lock_guard<std::mutex> lock(cache.mutex);
                cache.map.insert_or_assign(key, std::make_pair(op, lenient));
            }
            if (slot)
                slot->remember(op, lenient, std::move(plan), pos, kw);
            return finish(op, stack);
        }
    }
    throw CallError{"arguments fit no overload of " + name + " (" + firstWhy + ")"};
}

// --- the interpreter --------------------------------------------------------------------------------

struct Interp {
    const ir::Graph &g;
    const std::unordered_map<std::string, at::Tensor> &params;
    const std::vector<at::Tensor> &inputs;
    std::vector<IValue> &env; // by node id
    std::unordered_map<const Node *, Slot> &slots;

    IValue natural(const Argument &a) const
    {
        switch (a.kind()) {
        case Argument::Kind::None: return IValue();
        case Argument::Kind::Bool: return IValue(a.toBool());
        case Argument::Kind::Int: return IValue(a.toInt());
        case Argument::Kind::Float: return IValue(a.toFloat());
        case Argument::Kind::String: return IValue(a.text());
        case Argument::Kind::NodeRef: return env[a.toNode()->id()];
        case Argument::Kind::List:
        case Argument::Kind::Tuple: {
            c10::impl::GenericList l(c10::AnyType::get());
            for (const auto &x : a.items())
                l.push_back(natural(x));
            return IValue(l);
        }
        case Argument::Kind::Dtype: {
            if (!scalarType(a.text()))
                throw CallError{"unknown dtype " + a.text()};
            return IValue("dtype:" + a.text());
        }
        case Argument::Kind::Device: return IValue(c10::Device(a.text()));
        case Argument::Kind::Layout: return IValue(int64_t(a.text() == "strided" ? 0 : 1));
        case Argument::Kind::MemoryFormat:
            return IValue(a.text() == "channels_last" ? c10::MemoryFormat::ChannelsLast
                          : a.text() == "preserve_format" ? c10::MemoryFormat::Preserve
                                                          : c10::MemoryFormat::Contiguous);
        default: throw CallError{"cannot evaluate argument " + a.toString()};
        }
    }

    std::vector<IValue> positional(const Node *n, size_t from = 0) const
    {
        std::vector<IValue> out;
        for (size_t i = from; i < n->args().size(); ++i)
            out.push_back(natural(n->args()[i]));
        return out;
    }
    std::vector<std::pair<std::string, IValue>> keywords(const Node *n) const
    {
        std::vector<std::pair<std::string, IValue>> out;
        for (const auto &[k, v] : n->kwargs()) {
            // Python-only knobs the ATen ops do not take.
            if (k[0] == '_' || k == "inplace")
                continue; // inplace=True is read by inPlace()
            out.emplace_back(k, natural(v));
        }
        return out;
    }

    static std::vector<IValue> items(const IValue &v)
    {
        std::vector<IValue> out;
        if (v.isList())
            for (const auto &x : v.toListRef())
                out.push_back(x);
        else if (v.isTuple())
            for (const auto &x : v.toTupleRef().elements())
                out.push_back(x);
        else
            out.push_back(v);
        return out;
    }

    static bool isNumber(const IValue &v) { return v.isInt() || v.isDouble() || v.isBool(); }

    IValue getitem(const IValue &c, const IValue &idx) const
    {
        if (c.isList() || c.isTuple()) {
            if (!idx.isInt())
                throw CallError{"getitem on a sequence needs an int index"};
            const size_t n = c.isList() ? c.toListRef().size() : c.toTupleRef().elements().size();
            int64_t i = idx.toInt() < 0 ? idx.toInt() + int64_t(n) : idx.toInt();
            if (i < 0 || size_t(i) >= n)
                throw CallError{"index " + std::to_string(idx.toInt()) + " out of range for " + std::to_string(n) + " items"};
            return c.isList() ? c.toListRef()[size_t(i)] : c.toTupleRef().elements()[size_t(i)];
        }
        if (!c.isTensor())
            throw CallError{"getitem on a " + std::string(c.tagKind())};
        return IValue(c.toTensor().index(tensorIndices(idx)));
    }

    std::vector<at::indexing::TensorIndex> tensorIndices(const IValue &idx) const
    {
        using namespace at::indexing;
        std::vector<TensorIndex> out;
        auto one = [&](const IValue &v) {
            if (v.isInt())
                out.emplace_back(v.toInt());
            else if (v.isNone())
                out.emplace_back(None);
            else if (v.isTensor())
                out.emplace_back(v.toTensor());
            else if (v.isBool())
                out.emplace_back(v.toBool());
            else if (v.isString() && v.toStringRef() == "Ellipsis")
                out.emplace_back(Ellipsis);
            else if (v.isTuple() && v.toTupleRef().elements().size() == 3) { // a slice, see evalSlice
                const auto &e = v.toTupleRef().elements();
                out.emplace_back(Slice(e[0].isNone() ? std::optional<c10::SymInt>() : c10::SymInt(e[0].toInt()),
                                       e[1].isNone() ? std::optional<c10::SymInt>() : c10::SymInt(e[1].toInt()),
                                       e[2].isNone() ? std::optional<c10::SymInt>() : c10::SymInt(e[2].toInt())));
            } else
                throw CallError{"unsupported index " + std::string(v.tagKind())};
        };
        if (idx.isList())
            for (const auto &x : idx.toListRef())
                one(x);
        else
            one(idx);
        return out;
    }

    /// Evaluates a getitem index argument: slices become 3-tuples, tuples become lists.
    IValue indexArg(const Argument &a) const
    {
        if (a.kind() == Argument::Kind::Slice)
            return c10::ivalue::Tuple::create({natural(a.items()[0]), natural(a.items()[1]), natural(a.items()[2])});
        if (a.kind() == Argument::Kind::Opaque && a.text() == "Ellipsis")
            return IValue(std::string("Ellipsis"));
        if (a.kind() == Argument::Kind::Tuple) {
            c10::impl::GenericList l(c10::AnyType::get());
            for (const auto &x : a.items())
                l.push_back(indexArg(x));
            return IValue(l);
        }
        return natural(a);
    }

    IValue binary(std::string op, IValue a, IValue b) const
    {
        // Augmented assignment (operator.iadd, ...): in place on a tensor, the plain op on numbers.
        static const std::unordered_map<std::string, std::string> augmented = {
            {"iadd", "add"}, {"isub", "sub"}, {"imul", "mul"}, {"itruediv", "div"}, {"ifloordiv", "floor_divide"},
            {"imod", "remainder"}, {"ipow", "pow"}, {"iand", "bitwise_and"}, {"ior", "bitwise_or"}, {"ixor", "bitwise_xor"},
            {"ilshift", "bitwise_left_shift"}, {"irshift", "bitwise_right_shift"}, {"imatmul", ""}};
        if (auto it = augmented.find(op); it != augmented.end()) {
            if (a.isTensor() && !it->second.empty())
                return callInPlace(it->second, {a, b}, {});
            op = op.substr(1);
            if (op == "and" || op == "or")
                op += "_";
        }
        if (a.isString() && b.isString() && (op == "eq" || op == "ne" || op == "is_" || op == "is_not")) {
            const bool same = a.toStringRef() == b.toStringRef(); // dtypes, devices, strings
            return IValue(op == "eq" || op == "is_" ? same : !same);
        }
        if (isNumber(a) && isNumber(b)) {
            bool ints = a.isInt() && b.isInt();
            double x = a.isDouble() ? a.toDouble() : double(a.isBool() ? a.toBool() : a.toInt());
            double y = b.isDouble() ? b.toDouble() : double(b.isBool() ? b.toBool() : b.toInt());
            if (op == "add") return ints ? IValue(a.toInt() + b.toInt()) : IValue(x + y);
            if (op == "sub") return ints ? IValue(a.toInt() - b.toInt()) : IValue(x - y);
            if (op == "mul") return ints ? IValue(a.toInt() * b.toInt()) : IValue(x * y);
            if (op == "truediv") return IValue(x / y);
            if (op == "floordiv") return ints ? IValue(int64_t(std::floor(x / y))) : IValue(std::floor(x / y));
            if (op == "mod") return ints ? IValue(a.toInt() % b.toInt()) : IValue(std::fmod(x, y));
            if (op == "pow") return ints && b.toInt() >= 0 ? IValue(int64_t(std::llround(std::pow(x, y)))) : IValue(std::pow(x, y));
            if (op == "eq") return IValue(x == y);
            if (op == "ne") return IValue(x != y);
            if (op == "lt") return IValue(x < y);
            if (op == "le") return IValue(x <= y);
            if (op == "gt") return IValue(x > y);
            if (op == "ge") return IValue(x >= y);
            throw CallError{"operator." + op + " on numbers"};
        }
        // A number on the left: make it a tensor of the right operand's dtype and device.
        if (isNumber(a) && b.isTensor())
            a = IValue(at::scalar_tensor(a.toScalar(), b.toTensor().options()));
        static const std::unordered_map<std::string, std::string> aten = {
            {"add", "aten::add"}, {"sub", "aten::sub"}, {"mul", "aten::mul"}, {"truediv", "aten::div"},
            {"floordiv", "aten::floor_divide"}, {"mod", "aten::remainder"}, {"pow", "aten::pow"}, {"matmul", "aten::matmul"},
            {"eq", "aten::eq"}, {"ne", "aten::ne"}, {"lt", "aten::lt"}, {"le", "aten::le"}, {"gt", "aten::gt"},
            {"ge", "aten::ge"}, {"and_", "aten::bitwise_and"}, {"or_", "aten::bitwise_or"}, {"xor", "aten::bitwise_xor"}};
        auto it = aten.find(op);
        if (it == aten.end())
            throw CallError{"unsupported operator." + op};
        return callAten(it->second, {a, b});
    }

    const at::Tensor &param(const std::string &name) const
    {
        auto it = params.find(name);
        if (it == params.end())
            throw CallError{"no value for parameter '" + name + "'"};
        return it->second;
    }
    IValue optParam(const std::string &name) const
    {
        auto it = params.find(name);
        return it == params.end() ? IValue() : IValue(it->second);
    }

    /// Multi-head attention as torch.nn.functional.multi_head_attention_forward computes it in eval
    /// mode (inputs sequence-first [L, B, E] unless batchFirst); returns (output, weights or None).
    static IValue attention(at::Tensor q, at::Tensor k, at::Tensor v, int64_t heads, const at::Tensor &inW, const IValue &inB,
                            const at::Tensor &qW, const at::Tensor &kW, const at::Tensor &vW, const at::Tensor &outW,
                            const IValue &outB, const IValue &keyPadding, bool needWeights, const IValue &attnMask,
                            bool average, bool batchFirst, bool causal)
    {
        if (!batchFirst) {
            q = q.transpose(0, 1);
            k = k.transpose(0, 1);
            v = v.transpose(0, 1);
        }
        const int64_t B = q.size(0), L = q.size(1), S = k.size(1), E = q.size(2);
        if (heads <= 0 || E % heads != 0)
            throw CallError{"embed_dim " + std::to_string(E) + " is not divisible by num_heads " + std::to_string(heads)};
        const int64_t D = E / heads;
        at::Tensor bias = inB.isTensor() ? inB.toTensor() : at::Tensor();
        auto proj = [&](const at::Tensor &x, const at::Tensor &sepW, int64_t part) {
            at::Tensor w = sepW.defined() ? sepW : inW.narrow(0, part * E, E);
            std::optional<at::Tensor> b;
            if (bias.defined())
                b = bias.narrow(0, part * E, E);
            return at::linear(x, w, b).view({x.size(0), x.size(1), heads, D}).transpose(1, 2); // [B, H, T, D]
        };
        at::Tensor qh = proj(q, qW, 0), kh = proj(k, kW, 1), vh = proj(v, vW, 2);
        at::Tensor scores = at::matmul(qh, kh.transpose(-2, -1)) / std::sqrt(double(D)); // [B, H, L, S]
        auto additive = [&](at::Tensor m) {
            return m.scalar_type() == at::kBool ? at::zeros_like(m, scores.options()).masked_fill(m, -INFINITY) : m.to(scores.scalar_type());
        };
        if (attnMask.isTensor()) {
            at::Tensor m = additive(attnMask.toTensor());
            scores = scores + (m.dim() == 3 ? m.view({B, heads, L, S}) : m);
        } else if (causal) {
            scores = scores + additive(at::ones({L, S}, scores.options().dtype(at::kBool)).triu(1));
        }
        if (keyPadding.isTensor())
            scores = scores + additive(keyPadding.toTensor()).view({B, 1, 1, S});
        at::Tensor probs = at::softmax(scores, -1);
        at::Tensor out = at::matmul(probs, vh).transpose(1, 2).reshape({B, L, E});
        std::optional<at::Tensor> ob;
        if (outB.isTensor())
            ob = outB.toTensor();
        out = at::linear(out, outW, ob);
        if (!batchFirst)
            out = out.transpose(0, 1);
        IValue weights;
        if (needWeights)
            weights = IValue(average ? probs.mean(1) : probs);
        return c10::ivalue::Tuple::create({IValue(out), weights});
    }

    /// torch.nn.functional.multi_head_attention_forward, by its Python signature.
    IValue multiHeadAttentionForward(std::vector<IValue> pos, std::vector<std::pair<std::string, IValue>> kw) const
    {
        static const char *names[] = {"query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight", "in_proj_bias",
                                      "bias_k", "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight", "out_proj_bias",
                                      "training", "key_padding_mask", "need_weights", "attn_mask", "use_separate_proj_weight",
                                      "q_proj_weight", "k_proj_weight", "v_proj_weight", "static_k", "static_v",
                                      "average_attn_weights", "is_causal"};
        std::unordered_map<std::string, IValue> a;
        for (size_t i = 0; i < pos.size() && i < std::size(names); ++i)
            a[names[i]] = pos[i];
        for (auto &[k, v] : kw)
            a[k] = v;
        auto get = [&](const char *k) { return a.count(k) ? a[k] : IValue(); };
        auto flag = [&](const char *k, bool d) { IValue v = get(k); return v.isBool() ? v.toBool() : d; };
        if (get("bias_k").isTensor() || get("static_k").isTensor() || flag("add_zero_attn", false))
            throw CallError{"multi_head_attention_forward with bias_k/static_k/add_zero_attn is not supported"};
        if (flag("training", true) && get("dropout_p").isDouble() && get("dropout_p").toDouble() > 0)
            throw CallError{"attention dropout in training mode is not deterministic; export the model in eval mode"};
        auto t = [&](const char *k) { IValue v = get(k); return v.isTensor() ? v.toTensor() : at::Tensor(); };
        const bool separate = flag("use_separate_proj_weight", false);
        return attention(t("query"), t("key"), t("value"), get("num_heads").toInt(), separate ? at::Tensor() : t("in_proj_weight"),
                         get("in_proj_bias"), separate ? t("q_proj_weight") : at::Tensor(), separate ? t("k_proj_weight") : at::Tensor(),
                         separate ? t("v_proj_weight") : at::Tensor(), t("out_proj_weight"), get("out_proj_bias"), get("key_padding_mask"),
                         flag("need_weights", true), get("attn_mask"), flag("average_attn_weights", true), false, flag("is_causal", false));
    }

    static std::string lower(std::string s)
    {
        for (auto &c : s)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        return s;
    }
    /// A leaf module built with inplace=True writes its result into its input.
    static IValue inplaceModule(const ir::ModuleInfo *m, const IValue &x, IValue r)
    {
        const Argument *a = m->attr("inplace");
        if (a && a->isBool() && a->toBool() && x.isTensor() && r.isTensor()) {
            at::Tensor self = x.toTensor();
            self.copy_(r.toTensor());
            return IValue(self);
        }
        return r;
    }

    IValue callModule(const Node *n) const
    {
        const ir::ModuleInfo *m = g.module(n->target());
        if (!m)
            throw CallError{"module '" + n->target() + "' is not in the graph's module list"};
        std::string type = m->type.substr(m->type.rfind('.') + 1);
        auto in = positional(n);
        if (in.empty())
            throw CallError{"call_module without input"};
        const std::string &p = n->target();
        auto attr = [&](const char *k, IValue dflt) {
            const Argument *a = m->attr(k);
            return a ? natural(*a) : dflt;
        };
        const IValue &x = in[0];
        if (type == "Linear")
            return callAten("aten::linear", {x, IValue(param(p + ".weight")), optParam(p + ".bias")});
        if (type == "LayerNorm") {
            auto w = optParam(p + ".weight");
            IValue shape = attr("normalized_shape", IValue());
            if (shape.isNone())
                shape = IValue(c10::List<int64_t>(param(p + ".weight").sizes().vec()));
            return callAten("aten::layer_norm", {x, shape, w, optParam(p + ".bias"), attr("eps", IValue(1e-5))});
        }
        if (type == "Conv1d" || type == "Conv2d" || type == "Conv3d") {
            std::string name = "aten::conv" + type.substr(4, 2);
            return callAten(name, {x, IValue(param(p + ".weight")), optParam(p + ".bias"), attr("stride", IValue(int64_t(1))),
                                   attr("padding", IValue(int64_t(0))), attr("dilation", IValue(int64_t(1))),
                                   attr("groups", IValue(int64_t(1)))});
        }
        if (type == "BatchNorm1d" || type == "BatchNorm2d" || type == "BatchNorm3d")
            return callAten("aten::batch_norm", {x, optParam(p + ".weight"), optParam(p + ".bias"), optParam(p + ".running_mean"),
                                                 optParam(p + ".running_var"), IValue(false), attr("momentum", IValue(0.1)),
                                                 attr("eps", IValue(1e-5)), IValue(true)});
        if (type == "Embedding")
        {
            IValue pad = attr("padding_idx", IValue(int64_t(-1)));
            return callAten("aten::embedding", {IValue(param(p + ".weight")), x, pad.isNone() ? IValue(int64_t(-1)) : pad});
        }
        if (type == "ReLU")
            return inplaceModule(m, x, callAten("aten::relu", {x}));
        if (type == "Tanh")
            return callAten("aten::tanh", {x});
        if (type == "Sigmoid")
            return callAten("aten::sigmoid", {x});
        if (type == "SiLU")
            return inplaceModule(m, x, callAten("aten::silu", {x}));
        if (type == "GELU")
            return callAten("aten::gelu", {x}, {{"approximate", attr("approximate", IValue(std::string("none")))}});
        if (type == "Softmax")
            return callAten("aten::softmax", {x, attr("dim", IValue(int64_t(-1)))});
        if (type == "Hardswish" || type == "Hardsigmoid" || type == "ReLU6" || type == "Mish" || type == "SELU")
            return inplaceModule(m, x, callAten(type == "ReLU6" ? "aten::hardtanh" : "aten::" + lower(type),
                                                type == "ReLU6" ? std::vector<IValue>{x, IValue(0.0), IValue(6.0)} : std::vector<IValue>{x}));
        if (type == "LeakyReLU")
            return inplaceModule(m, x, callAten("aten::leaky_relu", {x, attr("negative_slope", IValue(0.01))}));
        if (type == "ELU" || type == "CELU")
            return inplaceModule(m, x, callAten(type == "ELU" ? "aten::elu" : "aten::celu", {x, attr("alpha", IValue(1.0))}));
        if (type == "Hardtanh")
            return inplaceModule(m, x, callAten("aten::hardtanh", {x, attr("min_val", IValue(-1.0)), attr("max_val", IValue(1.0))}));
        if (type == "Softplus")
            return callAten("aten::softplus", {x, attr("beta", IValue(1.0)), attr("threshold", IValue(20.0))});
        if (type == "LogSoftmax")
            return callAten("aten::log_softmax", {x, attr("dim", IValue(int64_t(-1)))});
        if (type == "GroupNorm")
            return callAten("aten::group_norm", {x, attr("num_groups", IValue(int64_t(1))), optParam(p + ".weight"), optParam(p + ".bias"),
                                                 attr("eps", IValue(1e-5))});
        if (type == "AvgPool2d" || type == "AvgPool1d")
            return callAten(type == "AvgPool2d" ? "aten::avg_pool2d" : "aten::avg_pool1d",
                            {x, attr("kernel_size", IValue()), attr("stride", IValue(c10::List<int64_t>())), attr("padding", IValue(int64_t(0))),
                             attr("ceil_mode", IValue(false)), attr("count_include_pad", IValue(true))});
        if (type == "AdaptiveAvgPool1d")
            return callAten("aten::adaptive_avg_pool1d", {x, attr("output_size", IValue())});
        if (type == "MultiheadAttention") {
            IValue kp, am, needW = IValue(true), avg = IValue(true), causal = IValue(false);
            for (const auto &[k, v] : keywords(n)) {
                if (k == "key_padding_mask") kp = v;
                else if (k == "attn_mask") am = v;
                else if (k == "need_weights") needW = v;
                else if (k == "average_attn_weights") avg = v;
                else if (k == "is_causal") causal = v;
            }
            if (in.size() > 3) kp = in[3];
            if (in.size() > 4) needW = in[4];
            if (in.size() > 5) am = in[5];
            const IValue &key = in.size() > 1 ? in[1] : x, &value = in.size() > 2 ? in[2] : x;
            auto opt = [&](const std::string &k) { auto v = optParam(p + "." + k); return v.isTensor() ? v.toTensor() : at::Tensor(); };
            return attention(x.toTensor(), key.toTensor(), value.toTensor(), attr("num_heads", IValue(int64_t(1))).toInt(),
                             opt("in_proj_weight"), optParam(p + ".in_proj_bias"), opt("q_proj_weight"), opt("k_proj_weight"),
                             opt("v_proj_weight"), param(p + ".out_proj.weight"), optParam(p + ".out_proj.bias"), kp,
                             needW.isBool() && needW.toBool(), am, !avg.isBool() || avg.toBool(), attr("batch_first", IValue(false)).toBool(),
                             causal.isBool() && causal.toBool());
        }
        if (type == "Dropout" || type == "Identity" || type == "Dropout1d" || type == "Dropout2d" || type == "AlphaDropout") {
            if (type != "Identity" && attr("training", IValue(false)).toBool() && attr("p", IValue(0.5)).toDouble() > 0)
                throw CallError{"dropout in training mode is not deterministic; export the model in eval mode"};
            return x;
        }
        if (type == "Flatten")
            return callAten("aten::flatten", {x, attr("start_dim", IValue(int64_t(1))), attr("end_dim", IValue(int64_t(-1)))});
        if (type == "MaxPool2d")
            return callAten("aten::max_pool2d", {x, attr("kernel_size", IValue()), attr("stride", IValue(c10::List<int64_t>())),
                                                 attr("padding", IValue(int64_t(0))), attr("dilation", IValue(int64_t(1))),
                                                 attr("ceil_mode", IValue(false))});
        if (type == "AdaptiveAvgPool2d")
            return callAten("aten::adaptive_avg_pool2d", {x, attr("output_size", IValue())});
        throw CallError{"no executor for module type " + m->type};
    }

    /// The position of a torch.nn.functional activation's `inplace` parameter (0: none).
    static size_t inplacePosition(const std::string &base)
    {
        static const std::unordered_map<std::string, size_t> at = {
            {"relu", 1}, {"relu6", 1}, {"selu", 1}, {"silu", 1}, {"hardswish", 1}, {"hardsigmoid", 1}, {"mish", 1},
            {"leaky_relu", 2}, {"elu", 2}, {"celu", 2}, {"hardtanh", 3}, {"threshold", 3}, {"rrelu", 4},
            {"dropout", 3}, {"dropout1d", 3}, {"dropout2d", 3}, {"dropout3d", 3}, {"alpha_dropout", 3},
            {"feature_alpha_dropout", 3}};
        auto it = at.find(base);
        return it == at.end() ? 0 : it->second;
    }

    /// Reads and removes the `inplace` flag of a call (keyword, or a functional activation's positional).
    static bool takeInplace(const Node *n, const std::string &base, std::vector<IValue> &pos)
    {
        bool on = false;
        if (const Argument *k = n->kwarg("inplace"); k && k->isBool())
            on = k->toBool();
        if (n->op() == OpKind::CallFunction && n->target().rfind("torch.nn.functional.", 0) == 0) {
            size_t p = inplacePosition(base);
            if (p && pos.size() > p && pos[p].isBool()) {
                on = on || pos[p].toBool();
                pos.erase(pos.begin() + long(p));
            }
        }
        return on;
    }

    /// aten::`base`_ on pos[0] when it exists; else the functional op, copied into pos[0] (the
    /// semantics of every in-place call: the first operand holds the result).
    IValue callInPlace(const std::string &base, std::vector<IValue> pos, const std::vector<std::pair<std::string, IValue>> &kw) const
    {
        if (pos.empty() || !pos[0].isTensor())
            throw CallError{"in-place " + base + " on a non-tensor"};
        if (OpTable::get().find("aten::" + base + "_"))
            return callAten("aten::" + base + "_", pos, kw);
        IValue r = callPacked("aten::" + base, pos, kw, 1);
        if (!r.isTensor())
            throw CallError{"in-place " + base + " without a tensor result"};
        at::Tensor self = pos[0].toTensor();
        self.copy_(r.toTensor());
        return IValue(self);
    }

    /// callAten, and when the values fit no overload, once more with the trailing ints from `from`
    /// on packed into one list: torch.ones(2, 3), x.view(2, 3), x.permute(1, 0), x.repeat(2, 1).
    static IValue callPacked(const std::string &name, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw,
                             size_t from)
    {
        try {
            return callAten(name, pos, kw);
        } catch (const CallError &) {
            if (pos.size() < from + 1)
                throw;
            c10::List<int64_t> packed;
            for (size_t i = from; i < pos.size(); ++i) {
                if (!pos[i].isInt())
                    throw;
                packed.push_back(pos[i].toInt());
            }
            std::vector<IValue> p(pos.begin(), pos.begin() + long(from));
            p.push_back(IValue(packed));
            return callAten(name, p, kw);
        }
    }

    /// Positional argument `i`, or the keyword `name` (removed from kw); None when neither is given.
    static IValue take(std::vector<IValue> &pos, std::vector<std::pair<std::string, IValue>> &kw, size_t i,
                       std::initializer_list<const char *> names)
    {
        for (auto it = kw.begin(); it != kw.end(); ++it)
            for (const char *nm : names)
                if (it->first == nm) {
                    IValue v = it->second;
                    kw.erase(it);
                    return v;
                }
        return i < pos.size() ? pos[i] : IValue();
    }

    /// getattr(x, name) on a tensor: the attributes torch.fx graphs read.
    static IValue tensorAttr(const at::Tensor &t, const std::string &attr)
    {
        if (attr == "shape")
            return IValue(c10::List<int64_t>(t.sizes().vec()));
        if (attr == "ndim")
            return IValue(int64_t(t.dim()));
        if (attr == "dtype")
            return IValue("dtype:" + dtypeName(t.scalar_type()));
        if (attr == "device")
            return IValue(t.device());
        if (attr == "is_cuda")
            return IValue(t.is_cuda());
        if (attr == "requires_grad")
            return IValue(t.requires_grad());
        if (attr == "T" || attr == "mT")
            return IValue(attr == "T" ? t.permute(reversedDims(t.dim())) : t.transpose(-2, -1));
        if (attr == "data")
            return IValue(t);
        if (attr == "is_floating_point" || attr == "is_complex")
            return IValue(attr == "is_complex" ? t.is_complex() : t.is_floating_point());
        throw CallError{"getattr of tensor attribute '" + attr + "'"};
    }
    static std::vector<int64_t> reversedDims(int64_t d)
    {
        std::vector<int64_t> v;
        for (int64_t i = d - 1; i >= 0; --i)
            v.push_back(i);
        return v;
    }

    /// Tensors for an index list argument of the inductor pooling prims.
    static std::vector<int64_t> ints(const IValue &v)
    {
        std::vector<int64_t> out;
        for (const auto &x : items(v))
            out.push_back(x.toInt());
        return out;
    }

    /// prims._low_memory_max_pool_with_offsets and ..._offsets_to_indices (Inductor's post-grad max
    /// pooling): Python-defined prims that LibTorch lacks, computed here as Inductor's reference does.
    static IValue lowMemoryMaxPool(const std::string &t, const std::vector<IValue> &pos)
    {
        if (pos.size() < 6)
            throw CallError{"expects 6 arguments"};
        auto ks = ints(pos[1]);
        const size_t dim = ks.size();
        auto base = [&](const at::Tensor &like, size_t d, int64_t stride, int64_t pad) {
            std::vector<int64_t> shape(size_t(like.dim()), 1);
            shape[size_t(like.dim()) - dim + d] = -1;
            return at::arange(like.size(like.dim() - int64_t(dim) + int64_t(d)), like.options().dtype(at::kLong)).view(shape) * stride - pad;
        };
        // A flat index into a window of `widths` as per-dim indices, and back (Inductor's
        // _flattened_index_to_nd / _flatten_index).
        auto toNd = [&](at::Tensor flat, const std::vector<int64_t> &widths) {
            std::vector<at::Tensor> nd(dim);
            for (size_t d = dim; d-- > 0;) {
                nd[d] = d == 0 ? flat : at::remainder(flat, widths[d]);
                flat = at::floor_divide(flat, widths[d]);
            }
            return nd;
        };
        auto flatten = [&](const std::vector<at::Tensor> &nd, const std::vector<int64_t> &widths) {
            at::Tensor out = nd[0];
            for (size_t d = 1; d < dim; ++d)
                out = out * widths[d] + nd[d];
            return out;
        };
        if (t.find("offsets_to_indices") != std::string::npos) {
            at::Tensor off = pos[0].toTensor().to(at::kLong);
            auto insz = ints(pos[2]), st = ints(pos[3]), pad = ints(pos[4]), dil = ints(pos[5]);
            auto inc = toNd(off, ks);
            for (size_t d = 0; d < dim; ++d)
                inc[d] = base(off, d, st[d], pad[d]) + inc[d] * dil[d];
            return IValue(flatten(inc, insz));
        }
        const at::Tensor &x = pos[0].toTensor();
        auto st = ints(pos[2]), pad = ints(pos[3]), dil = ints(pos[4]);
        const bool ceil = pos[5].toBool();
        if (st.empty())
            st = ks;
        auto r = dim == 2 ? at::max_pool2d_with_indices(x, ks, st, pad, dil, ceil) : at::max_pool3d_with_indices(x, ks, st, pad, dil, ceil);
        at::Tensor vals = std::get<0>(r), indices = std::get<1>(r);
        std::vector<int64_t> width(x.sizes().end() - long(dim), x.sizes().end());
        auto inc = toNd(indices, width);
        for (size_t d = 0; d < dim; ++d)
            inc[d] = at::floor_divide(inc[d] - base(indices, d, st[d], pad[d]), dil[d]);
        return c10::ivalue::Tuple::create({IValue(vals), IValue(flatten(inc, ks).to(at::kChar))});
    }

    /// torch.tensor(data, dtype, device): Python numbers (nested lists of them) with Python's dtype
    /// rules (ints int64, floats the default float32, bools bool), or a tensor (copied).
    static IValue tensorFrom(const IValue &data, const IValue &dtype, const IValue &device)
    {
        at::Tensor t;
        if (data.isTensor()) {
            t = data.toTensor().clone();
        } else {
            std::vector<double> flat;
            std::vector<int64_t> shape;
            bool anyFloat = false, allBool = true;
            std::function<void(const IValue &, size_t)> walk = [&](const IValue &v, size_t depth) {
                if (v.isList() || v.isTuple()) {
                    auto xs = items(v);
                    if (shape.size() <= depth)
                        shape.push_back(int64_t(xs.size()));
                    else if (shape[depth] != int64_t(xs.size()))
                        throw CallError{"torch.tensor of a ragged list"};
                    for (const auto &x : xs)
                        walk(x, depth + 1);
                    return;
                }
                if (v.isDouble()) {
                    anyFloat = true;
                    allBool = false;
                    flat.push_back(v.toDouble());
                } else if (v.isInt()) {
                    allBool = false;
                    flat.push_back(double(v.toInt()));
                } else if (v.isBool()) {
                    flat.push_back(v.toBool() ? 1.0 : 0.0);
                } else {
                    throw CallError{"torch.tensor of a " + std::string(v.tagKind())};
                }
            };
            walk(data, 0);
            t = at::tensor(flat, at::TensorOptions().dtype(at::kDouble)).reshape(shape);
            t = t.to(anyFloat ? at::kFloat : allBool && !flat.empty() ? at::kBool : at::kLong);
            if (!data.isList() && !data.isTuple())
                t = t.reshape({});
        }
        if (!dtype.isNone())
            if (auto st = dtypeOf(dtype))
                t = t.to(*st);
        (void)device; // the run's device is chosen for the whole graph
        return IValue(t_runDevice ? t.to(*t_runDevice) : t);
    }

    IValue callFunction(const Node *n) const
    {
        const std::string &t = n->target();
        if (t == "operator.getitem") {
            if (n->args().size() < 2)
                throw CallError{"getitem needs a container and an index"};
            return getitem(natural(n->args()[0]), indexArg(n->args()[1]));
        }
        if (t.rfind("operator.", 0) == 0) {
            std::string op = t.substr(9);
            if (op == "neg")
                return callAten("aten::neg", positional(n));
            if (op == "pos")
                return natural(n->args().at(0));
            if (op == "not_")
                return IValue(!natural(n->args().at(0)).toBool());
            if (op == "setitem" && n->args().size() == 3) {
                // x[idx] = v on a tensor: an in-place write (the value of the call is None).
                IValue x = natural(n->args()[0]), v = natural(n->args()[2]);
                if (!x.isTensor())
                    throw CallError{"operator.setitem on a " + std::string(x.tagKind())};
                at::Tensor self = x.toTensor();
                auto idx = tensorIndices(indexArg(n->args()[1]));
                if (v.isTensor())
                    self.index_put_(idx, v.toTensor());
                else
                    self.index_put_(idx, v.toScalar());
                return IValue();
            }
            if (n->args().size() != 2)
                throw CallError{"operator." + op + " with " + std::to_string(n->args().size()) + " arguments"};
            return binary(op, natural(n->args()[0]), natural(n->args()[1]));
        }
        if (t.rfind("aten.", 0) == 0) {
            // aten.name.overload: exactly that overload (resolved once per node).
            Slot *slot = t_slot;
            t_slot = nullptr;
            auto pos = positional(n);
            auto kw = keywords(n);
            if (slot && slot->op) {
                std::vector<IValue> stack;
                if (slot->bind(pos, kw, stack))
                    return finish(*slot->op, stack);
            }
            std::string rest = t.substr(5);
            auto dot = rest.find('.');
            std::string name = "aten::" + rest.substr(0, dot), overload = dot == std::string::npos ? "" : rest.substr(dot + 1);
            if (overload == "default")
                overload.clear();
            auto h = c10::Dispatcher::singleton().findSchema({name, overload});
            if (!h)
                throw CallError{"no ATen operator " + name + (overload.empty() ? "" : "." + overload)};
            std::vector<IValue> stack;
            std::string why;
            std::vector<int> plan;
            bool lenient = false;
            if (!bindSchema(h->schema(), pos, kw, false, stack, why, &plan)) {
                lenient = true;
                if (!bindSchema(h->schema(), pos, kw, true, stack, why, &plan))
                    throw CallError{"arguments do not fit " + t + ": " + why};
            }
            if (slot)
                slot->remember(*h, lenient, std::move(plan), pos, kw);
            return finish(*h, stack);
        }
        if (t.rfind("prims.", 0) == 0) {
            auto pos = positional(n);
            auto kw = keywords(n);
            if (t.rfind("prims.iota", 0) == 0) {
                // iota(length, *, start, step, dtype, device, requires_grad) = arange(start, start + length * step, step)
                int64_t len = take(pos, kw, 0, {"length"}).toInt();
                IValue s0 = take(pos, kw, 1, {"start"}), st = take(pos, kw, 2, {"step"}), dt = take(pos, kw, 3, {"dtype"}),
                       dev = take(pos, kw, 4, {"device"});
                int64_t start = s0.isInt() ? s0.toInt() : 0, step = st.isInt() ? st.toInt() : 1;
                auto opts = at::TensorOptions().dtype(dtypeOf(dt).value_or(at::kLong));
                (void)dev; // created on the run's device
                if (t_runDevice)
                    opts = opts.device(*t_runDevice);
                return IValue(at::arange(start, start + len * step, step, opts));
            }
            if (t.find("_low_memory_max_pool") != std::string::npos)
                return lowMemoryMaxPool(t, pos);
            // Other prims share their name with an ATen op (prims.convert_element_type is to(dtype)).
            std::string base = t.substr(6, t.find('.', 6) - 6);
            if (base == "convert_element_type")
                return IValue(pos.at(0).toTensor().to(dtypeOf(pos.at(1)).value_or(pos.at(0).toTensor().scalar_type())));
            return callAten("aten::" + base, pos, kw);
        }
        if (t == "builtins.getattr" || t == "getattr") {
            if (n->args().size() < 2 || !n->args()[1].isString())
                throw CallError{"getattr needs an object and an attribute name"};
            auto v = natural(n->args()[0]);
            const std::string &attr = n->args()[1].text();
            if (v.isTensor())
                return tensorAttr(v.toTensor(), attr);
            throw CallError{"getattr '" + attr + "' on a " + std::string(v.tagKind())};
        }
        // Calls that only check or log: evaluated for their checks, valued None.
        if (t == "torch._assert" || t == "torch._check" || t == "torch._assert_async") {
            auto pos = positional(n);
            IValue c = pos.empty() ? IValue(true) : pos[0];
            bool ok = c.isBool() ? c.toBool() : c.isInt() ? c.toInt() != 0 : c.isTensor() ? c.toTensor().item<bool>() : true;
            if (!ok)
                throw CallError{"assertion failed" + (pos.size() > 1 && pos[1].isString() ? ": " + pos[1].toStringRef() : std::string())};
            return IValue();
        }
        if (t.find("_log_api_usage_once") != std::string::npos || t == "torch.autograd.profiler.record_function")
            return IValue();
        if (t == "builtins.len" || t == "len") {
            IValue v = natural(n->args().at(0));
            if (v.isTensor())
                return IValue(v.toTensor().size(0));
            return IValue(int64_t(items(v).size()));
        }
        // torch-level functions: strip the module prefix and call the ATen op of the same name, with
        // the Python signatures that differ from ATen's handled first.
        std::string base = t.substr(t.rfind('.') + 1);
        auto pos = positional(n);
        auto kw = keywords(n);
        const bool inplace = takeInplace(n, base, pos);
        if (base == "split" && (t == "torch.split" || t == "torch.functional.split")) {
            IValue x = take(pos, kw, 0, {"tensor", "input"});
            IValue sizes = take(pos, kw, 1, {"split_size_or_sections", "split_size"});
            IValue dim = take(pos, kw, 2, {"dim"});
            if (!x.isTensor() || sizes.isNone())
                throw CallError{"torch.split needs a tensor and split sizes"};
            std::vector<IValue> p = {x, sizes};
            if (!dim.isNone())
                p.push_back(dim);
            return callAten(sizes.isInt() ? "aten::split" : "aten::split_with_sizes", p, {});
        }
        if (t == "torch.nn.functional.batch_norm") {
            static const char *names[] = {"input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"};
            for (size_t i = 0; i < pos.size() && i < 8; ++i)
                kw.emplace_back(names[i], pos[i]);
            bool hasTraining = false;
            for (const auto &kv : kw)
                hasTraining = hasTraining || kv.first == "training";
            if (!hasTraining)
                kw.emplace_back("training", IValue(false));
            kw.emplace_back("cudnn_enabled", IValue(true));
            return callAten("aten::batch_norm", {}, kw);
        }
        if (t == "torch.nn.functional.embedding") {
            IValue input = take(pos, kw, 0, {"input"}), weight = take(pos, kw, 1, {"weight"});
            IValue padding = take(pos, kw, 2, {"padding_idx"});
            if (!input.isTensor() || !weight.isTensor())
                throw CallError{"embedding needs input and weight tensors"};
            return callAten("aten::embedding", {weight, input, padding.isNone() ? IValue(int64_t(-1)) : padding});
        }
        if (base.find("dropout") != std::string::npos && t.rfind("torch.nn.functional.", 0) == 0) {
            IValue x = take(pos, kw, 0, {"input"});
            IValue p = take(pos, kw, 1, {"p"}), training = take(pos, kw, 2, {"training"});
            if (training.isNone() ? true : training.toBool())
                if (!(p.isDouble() && p.toDouble() == 0.0))
                    throw CallError{"dropout in training mode is not deterministic; export the model in eval mode"};
            return x;
        }
        if (base == "stochastic_depth") { // torchvision.ops.stochastic_depth: identity in eval mode
            IValue x = take(pos, kw, 0, {"input"}), p = take(pos, kw, 1, {"p"}), training = take(pos, kw, 3, {"training"});
            if ((training.isNone() || training.toBool()) && !(p.isDouble() && p.toDouble() == 0.0))
                throw CallError{"stochastic_depth in training mode is not deterministic; export the model in eval mode"};
            return x;
        }
        if (base.find("max_pool") != std::string::npos && t.rfind("torch.nn.functional.", 0) == 0) {
            // F.max_pool2d(x, k, stride, padding, dilation, ceil_mode, return_indices): the last one picks the op.
            IValue ri = take(pos, kw, 6, {"return_indices"});
            if (pos.size() > 6)
                pos.resize(6);
            if (ri.isBool() && ri.toBool())
                return callAten("aten::" + base + "_with_indices", pos, kw);
        }
        if (base == "einsum") {
            c10::impl::GenericList ops(c10::AnyType::get());
            for (size_t i = 1; i < pos.size(); ++i)
                for (const auto &x : items(pos[i]))
                    ops.push_back(x);
            return callAten("aten::einsum", {pos.at(0), IValue(ops)});
        }
        if (t == "torch.nn.functional.multi_head_attention_forward")
            return multiHeadAttentionForward(pos, kw);
        if (t == "torch.tensor" || t == "torch.as_tensor" || t == "torch.scalar_tensor")
            return tensorFrom(take(pos, kw, 0, {"data", "s"}), take(pos, kw, 1, {"dtype"}), take(pos, kw, 2, {"device"}));
        if (base == "scaled_dot_product_attention") {
            // Python's keyword `scale` and `enable_gqa` map to ATen's names as they are.
            return callAten("aten::scaled_dot_product_attention", pos, kw);
        }
        if (t.rfind("torch.", 0) != 0 && t.rfind("math.", 0) != 0)
            throw CallError{"no executor for " + t + ": a Python function outside torch; export the model with "
                            "torch.export or torch.compile (fxlens.export_program / fxlens.compile_backend), which trace through it"};
        if (inplace)
            return callInPlace(base, pos, kw);
        try {
            return callPacked("aten::" + base, pos, kw, 0);
        } catch (const CallError &) {
            // Python-only knobs at their defaults (None / False) that the ATen op does not take.
            std::vector<std::pair<std::string, IValue>> kept;
            for (const auto &kv : kw)
                if (!(kv.second.isNone() || (kv.second.isBool() && !kv.second.toBool())))
                    kept.push_back(kv);
            if (kept.size() == kw.size())
                throw;
            return callPacked("aten::" + base, pos, kept, 0);
        }
    }

    IValue callMethod(const Node *n) const
    {
        const std::string &m = n->target();
        auto pos = positional(n);
        auto kw = keywords(n);
        if (pos.empty() || !pos[0].isTensor())
            throw CallError{"method ." + m + " on a non-tensor"};
        const at::Tensor &self = pos[0].toTensor();
        if (m == "size") {
            if (pos.size() > 1)
                return IValue(self.size(pos[1].toInt()));
            return IValue(c10::List<int64_t>(self.sizes().vec()));
        }
        if (m == "dim")
            return IValue(int64_t(self.dim()));
        if (m == "numel")
            return IValue(int64_t(self.numel()));
        if (m == "float" || m == "double" || m == "half" || m == "long" || m == "int" || m == "bool" || m == "bfloat16") {
            at::ScalarType st = m == "float" ? at::kFloat : m == "double" ? at::kDouble : m == "half" ? at::kHalf
                                : m == "long" ? at::kLong : m == "int" ? at::kInt : m == "bfloat16" ? at::kBFloat16 : at::kBool;
            return IValue(self.to(st));
        }
        if (m == "to" || m == "type" || m == "cpu" || m == "cuda")
            return convert(m, self, pos, kw);
        if (m == "type_as" && pos.size() > 1 && pos[1].isTensor())
            return IValue(self.to(pos[1].toTensor().scalar_type()));
        if (m == "item")
            return IValue(self.item());
        if (m == "tolist" && self.dim() <= 1) {
            c10::impl::GenericList l(c10::AnyType::get());
            for (int64_t i = 0; i < (self.dim() ? self.size(0) : 1); ++i)
                l.push_back(IValue((self.dim() ? self[i] : self).item()));
            return IValue(l);
        }
        if (m == "__getitem__" && pos.size() == 2)
            return getitem(pos[0], pos[1]);
        const bool dunder = m.size() > 4 && m.rfind("__", 0) == 0;
        if (!dunder && !m.empty() && m.back() == '_')
            return callInPlace(m.substr(0, m.size() - 1), pos, kw);
        if (dunder) {
            // x.__add__(y), x.__iadd__(y): the operator module's spelling.
            std::string op = m.substr(2, m.size() - 4);
            if (pos.size() == 2)
                return binary(op == "div" ? "truediv" : op == "idiv" ? "itruediv" : op, pos[0], pos[1]);
        }
        return callPacked("aten::" + m, pos, kw, 1);
    }

    /// x.to(...), x.type(dtype), x.cpu(), x.cuda(): every spelling of a device and dtype conversion.
    static IValue convert(const std::string &m, const at::Tensor &self, const std::vector<IValue> &pos,
                          const std::vector<std::pair<std::string, IValue>> &kw)
    {
        std::optional<at::ScalarType> dtype;
        std::optional<c10::Device> device;
        bool nonBlocking = false, copy = false;
        std::optional<c10::MemoryFormat> format;
        auto deviceOf = [](const IValue &v) -> std::optional<c10::Device> {
            if (v.isDevice())
                return v.toDevice();
            if (v.isString())
                return c10::Device(v.toStringRef());
            return std::nullopt;
        };
        if (m == "cpu")
            device = c10::Device(at::kCPU);
        if (m == "cuda")
            device = c10::Device(at::kCUDA, pos.size() > 1 && pos[1].isInt() ? c10::DeviceIndex(pos[1].toInt()) : c10::DeviceIndex(-1));
        for (size_t i = 1; i < pos.size() && m != "cuda"; ++i) {
            const IValue &v = pos[i];
            if (v.isString() && v.toStringRef().rfind("dtype:", 0) == 0) {
                dtype = dtypeOf(v);
            } else if (auto d = deviceOf(v)) {
                if (m == "type")
                    throw CallError{"x.type() with a type name string is not supported; use x.to(dtype)"};
                device = d;
            } else if (v.isTensor()) {
                dtype = v.toTensor().scalar_type();
                device = v.toTensor().device();
            } else if (v.isBool()) {
                (dtype || device ? (nonBlocking ? copy : nonBlocking) : nonBlocking) = v.toBool();
            } else if (!v.isNone()) {
                throw CallError{"x." + m + "() argument of kind " + std::string(v.tagKind())};
            }
        }
        for (const auto &[k, v] : kw) {
            if (k == "dtype" && !v.isNone())
                dtype = dtypeOf(v);
            else if (k == "device" && !v.isNone())
                device = deviceOf(v);
            else if (k == "non_blocking")
                nonBlocking = v.toBool();
            else if (k == "copy")
                copy = v.toBool();
            else if (k == "memory_format" && !v.isNone())
                format = v.toMemoryFormat();
        }
        // On a machine without the device the graph was exported on, a device move is a no-op: the
        // executor chose the run's device for every input and weight.
        if (device && device->is_cuda() && !self.is_cuda())
            device.reset();
        if (device && device->is_cpu() && self.is_cuda())
            device.reset();
        auto opts = self.options();
        if (dtype)
            opts = opts.dtype(*dtype);
        if (device)
            opts = opts.device(*device);
        return IValue(self.to(opts, nonBlocking, copy, format));
    }

    enum class Fast : uint8_t { None, Tanh, Relu, Sigmoid, Add, Sub, Mul, Div, Linear, LayerNorm, Cat };

    /// The ops a graph runs most, compiled into unboxed plan steps when their arguments are plain.
    static Fast fastKind(const Node *n)
    {
        static const std::unordered_map<std::string, Fast> fns = {
            {"torch.tanh", Fast::Tanh}, {"aten.tanh.default", Fast::Tanh}, {"torch.relu", Fast::Relu},
            {"torch.nn.functional.relu", Fast::Relu}, {"aten.relu.default", Fast::Relu}, {"torch.sigmoid", Fast::Sigmoid},
            {"aten.sigmoid.default", Fast::Sigmoid}, {"operator.add", Fast::Add}, {"torch.add", Fast::Add},
            {"aten.add.Tensor", Fast::Add}, {"operator.sub", Fast::Sub}, {"torch.sub", Fast::Sub}, {"aten.sub.Tensor", Fast::Sub},
            {"operator.mul", Fast::Mul}, {"torch.mul", Fast::Mul}, {"aten.mul.Tensor", Fast::Mul}, {"operator.truediv", Fast::Div},
            {"torch.div", Fast::Div}, {"aten.div.Tensor", Fast::Div}, {"torch.nn.functional.linear", Fast::Linear},
            {"torch.nn.functional.layer_norm", Fast::LayerNorm}, {"torch.cat", Fast::Cat}, {"aten.cat.default", Fast::Cat}};
        static const std::unordered_map<std::string, Fast> methods = {
            {"tanh", Fast::Tanh}, {"relu", Fast::Relu}, {"sigmoid", Fast::Sigmoid}};
        const auto &table = n->op() == OpKind::CallMethod ? methods : fns;
        auto it = table.find(n->target());
        return it == table.end() ? Fast::None : it->second;
    }

    IValue evalNode(const Node *n)
    {
        if (n->op() == OpKind::CallFunction || n->op() == OpKind::CallMethod || n->op() == OpKind::CallModule) {
            Slot &slot = slots[n];
            if (slot.target != n->target()) {
                slot.target = n->target();
                slot.op.reset();
            }
            t_slot = &slot;
        }
        switch (n->op()) {
        case OpKind::Placeholder: throw CallError{"placeholders are bound by the plan"};
        case OpKind::GetAttr: return IValue(param(n->target()));
        case OpKind::CallFunction: return callFunction(n);
        case OpKind::CallMethod: return callMethod(n);
        case OpKind::CallModule: return callModule(n);
        case OpKind::Output: return natural(n->args()[0]);
        }
        return IValue();
    }
};

// --- compiled plans -----------------------------------------------------------------------------------

constexpr uint32_t kNoNode = UINT32_MAX;

/// One node of a compiled graph version: what to call and where its arguments come from, resolved
/// once instead of on every run (target strings, overloads, schema binding, constant arguments).
struct Step {
    enum class Kind : uint8_t {
        Generic, ///< the interpreter (Interp::evalNode): anything not specialized below
        Input,   ///< placeholder number `index`
        Value,   ///< a fixed value: a parameter (get_attr) or a frozen result
        Skip,    ///< folded by freezing and read by folded nodes only
        Getitem, ///< element `index` of the list or tuple in[0]
        Fast,    ///< an unboxed ATen call (Interp::Fast) on plain tensors
        Split,   ///< split(in[0], size `index` or sections `ints`, dim)
        Stack,   ///< stack(list, dim)
        Unbind,  ///< unbind(in[0], dim)
        Boxed,   ///< a resolved ATen overload called boxed, arguments by `args`
    };
    /// One schema argument of a Boxed step: a node's value, an argument evaluated on each run (a
    /// list holding nodes), or a constant coerced once.
    struct Arg {
        uint32_t node = kNoNode;
        const Argument *dynamic = nullptr;
        IValue constant;
        const c10::Argument *schema = nullptr;
        bool tensor = false; ///< the schema wants a Tensor (a tensor value passes as it is)
    };

    Kind kind = Kind::Generic;
    Interp::Fast fast = Interp::Fast::None;
    bool sections = false; ///< Split by a list of sizes
    bool boxable = false;  ///< Generic whose call binds the node's own arguments (may become Boxed)
    bool fresh = false;    ///< Input/Value written in place by the graph: each run gets its own copy
    const Node *node = nullptr;
    uint32_t id = 0;
    uint32_t in[3] = {kNoNode, kNoNode, kNoNode};
    int64_t index = 0, dim = 0;
    double eps = 0;
    std::vector<uint32_t> list;
    std::vector<int64_t> ints;
    IValue value;
    std::optional<c10::OperatorHandle> op;
    bool multipleReturns = false;
    bool lenient = false;
    std::vector<Arg> args;
    uint32_t releaseBegin = 0, releaseEnd = 0; ///< ids in Plan::release whose last reader is this step
};

/// A graph version compiled for repeated runs. Valid for one (graph, revision).
struct Plan {
    const ir::Graph *graph = nullptr;
    uint64_t revision = 0;
    std::vector<Step> steps;
    std::vector<uint32_t> release;
    std::vector<IValue> env; ///< by node id, reused across runs (only pinned values between runs)
    std::vector<IValue> stack;
    /// The steps a run executes, in order: not the pinned values nor what freezing skipped.
    std::vector<uint32_t> hot;
    /// By node id: a value set once and kept across runs (a weight read as it is, a frozen value).
    std::vector<char> pinned;
    bool frozen = false;
};

/// After compiling or freezing: weights that no call writes and frozen values stay in `env` across
/// runs (set once here, never released), so a run does no work at all for them; the other steps are
/// the hot list.
void settle(Plan &p)
{
    p.hot.clear();
    p.pinned.assign(p.env.size(), 0);
    for (uint32_t i = 0; i < p.steps.size(); ++i) {
        Step &s = p.steps[i];
        if (s.kind == Step::Kind::Skip)
            continue;
        if (s.kind == Step::Kind::Value && !s.fresh) {
            p.pinned[s.id] = 1;
            p.env[s.id] = s.value;
            continue;
        }
        p.hot.push_back(i);
    }
    std::vector<uint32_t> release;
    release.reserve(p.release.size());
    for (Step &s : p.steps) {
        const auto begin = uint32_t(release.size());
        for (uint32_t k = s.releaseBegin; k < s.releaseEnd; ++k)
            if (!p.pinned[p.release[k]])
                release.push_back(p.release[k]);
        s.releaseBegin = begin;
        s.releaseEnd = uint32_t(release.size());
    }
    p.release = std::move(release);
}

/// Steps whose node computes something (worth a profiler range): not inputs, weights or getitem.
bool measured(const Step &s)
{
    switch (s.kind) {
    case Step::Kind::Input:
    case Step::Kind::Value:
    case Step::Kind::Skip:
    case Step::Kind::Getitem: return false;
    default: return s.node->op() == OpKind::CallFunction || s.node->op() == OpKind::CallMethod || s.node->op() == OpKind::CallModule;
    }
}

/// The Python-level knobs that keywords() drops, so that kwarg positions match its list.
bool droppedKeyword(const std::string &k, const Argument &)
{
    return k[0] == '_' || k == "inplace";
}

std::optional<int64_t> intArg(const Node *n, size_t pos, const char *kw, std::optional<int64_t> dflt)
{
    const Argument *a = pos < n->args().size() ? &n->args()[pos] : nullptr;
    if (!a)
        for (const auto &[k, v] : n->kwargs())
            if (k == kw)
                a = &v;
    if (!a)
        return dflt;
    if (!a->isInt())
        return std::nullopt;
    return a->toInt();
}

/// Only the keywords in `allowed` (and dropped Python knobs) may be present.
bool onlyKeywords(const Node *n, std::initializer_list<const char *> allowed)
{
    for (const auto &[k, v] : n->kwargs()) {
        if (droppedKeyword(k, v))
            continue;
        bool ok = false;
        for (const char *a : allowed)
            ok = ok || k == a;
        if (!ok)
            return false;
    }
    return true;
}

bool hasNode(const Argument &a)
{
    bool any = false;
    a.forEachNode([&](const Node *) { any = true; });
    return any;
}

bool nodeList(const Argument &a, std::vector<uint32_t> &out)
{
    if (!a.isSequence())
        return false;
    out.clear();
    for (const auto &x : a.items()) {
        if (!x.isNode())
            return false;
        out.push_back(x.toNode()->id());
    }
    return true;
}

/// Specializes a call node when its shape allows (the checks on values happen at run time).
void specialize(Step &s, const Node *n)
{
    const auto &args = n->args();
    const std::string &t = n->target();
    auto node = [&](size_t i) { return i < args.size() && args[i].isNode() ? args[i].toNode()->id() : kNoNode; };
    if (n->op() == OpKind::CallFunction && t == "operator.getitem") {
        if (args.size() == 2 && args[0].isNode() && args[1].isInt() && n->kwargs().empty()) {
            s.kind = Step::Kind::Getitem;
            s.in[0] = node(0);
            s.index = args[1].toInt();
        }
        return;
    }
    if (Interp::Fast f = Interp::fastKind(n); f != Interp::Fast::None) {
        using F = Interp::Fast;
        for (const auto &kv : n->kwargs())
            if (!(f == F::Cat && kv.first == "dim" && kv.second.isInt()) && !(kv.first == "inplace" && kv.second.isBool() && !kv.second.toBool()))
                return;
        switch (f) {
        case F::Tanh:
        case F::Relu:
        case F::Sigmoid:
            if (args.size() != 1 || node(0) == kNoNode)
                return;
            break;
        case F::Add:
        case F::Sub:
        case F::Mul:
        case F::Div:
            if (args.size() != 2 || node(0) == kNoNode || node(1) == kNoNode)
                return;
            break;
        case F::Linear:
            if (args.size() < 2 || args.size() > 3 || node(0) == kNoNode || node(1) == kNoNode)
                return;
            if (args.size() == 3 && !args[2].isNone() && node(2) == kNoNode)
                return;
            break;
        case F::LayerNorm:
            if (args.size() != 5 || node(0) == kNoNode || !args[1].isSequence() || !args[4].isFloat())
                return;
            if ((!args[2].isNone() && node(2) == kNoNode) || (!args[3].isNone() && node(3) == kNoNode))
                return;
            for (const auto &x : args[1].items()) {
                if (!x.isInt())
                    return;
                s.ints.push_back(x.toInt());
            }
            s.in[1] = node(2);
            s.in[2] = node(3);
            s.eps = args[4].toFloat();
            break;
        case F::Cat: {
            if (args.empty() || args.size() > 2 || (args.size() == 2 && !args[1].isInt()) || !nodeList(args[0], s.list))
                return;
            s.dim = args.size() == 2 ? args[1].toInt() : intArg(n, 99, "dim", 0).value_or(0);
            break;
        }
        case F::None: return;
        }
        s.kind = Step::Kind::Fast;
        s.fast = f;
        if (f != F::LayerNorm && f != F::Cat)
            for (size_t i = 0; i < args.size() && i < 3; ++i)
                s.in[i] = node(i);
        else if (f == F::LayerNorm)
            s.in[0] = node(0);
        return;
    }
    const bool method = n->op() == OpKind::CallMethod;
    const bool fn = n->op() == OpKind::CallFunction;
    if ((fn && (t == "torch.split" || t == "torch.functional.split" || t == "aten.split.Tensor" ||
                t == "aten.split_with_sizes.default")) ||
        (method && t == "split")) {
        const bool aten = t.rfind("aten.", 0) == 0;
        const char *sizeKw = aten ? (t == "aten.split.Tensor" ? "split_size" : "split_sizes") : "split_size_or_sections";
        if (node(0) == kNoNode || args.size() > 3 || !onlyKeywords(n, {sizeKw, "dim"}))
            return;
        const Argument *size = args.size() > 1 ? &args[1] : n->kwarg(sizeKw);
        auto dim = intArg(n, 2, "dim", 0);
        if (!size || !dim)
            return;
        if (size->isInt() && t != "aten.split_with_sizes.default") {
            s.index = size->toInt();
        } else if (size->isSequence() && t != "aten.split.Tensor") {
            for (const auto &x : size->items()) {
                if (!x.isInt())
                    return;
                s.ints.push_back(x.toInt());
            }
            s.sections = true;
        } else {
            return;
        }
        s.kind = Step::Kind::Split;
        s.in[0] = node(0);
        s.dim = *dim;
        return;
    }
    if (fn && (t == "torch.stack" || t == "aten.stack.default")) {
        if (args.empty() || args.size() > 2 || !onlyKeywords(n, {"dim"}) || !nodeList(args[0], s.list))
            return;
        auto dim = intArg(n, 1, "dim", 0);
        if (!dim)
            return;
        s.kind = Step::Kind::Stack;
        s.dim = *dim;
        return;
    }
    if ((fn && (t == "torch.unbind" || t == "aten.unbind.int")) || (method && t == "unbind")) {
        auto dim = intArg(n, 1, "dim", 0);
        if (node(0) == kNoNode || args.size() > 2 || !onlyKeywords(n, {"dim"}) || !dim)
            return;
        s.kind = Step::Kind::Unbind;
        s.in[0] = node(0);
        s.dim = *dim;
        return;
    }
    // Calls whose arguments reach callAten as the node's own (positional(n), keywords(n)).
    static const char *const reshaped[] = {"torch.split", "torch.functional.split", "torch.nn.functional.batch_norm",
                                           "torch.nn.functional.embedding", "torch.nn.functional.dropout",
                                           "torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d",
                                           "torch.nn.functional.max_pool2d"};
    if (fn && t.rfind("aten.", 0) == 0) {
        s.boxable = true;
    } else if (fn && t.rfind("torch.", 0) == 0) {
        s.boxable = t.substr(t.rfind('.') + 1) != "einsum";
        for (const char *r : reshaped)
            s.boxable = s.boxable && t != r;
    } else if (method) {
        static const char *const special[] = {"size", "dim", "numel", "float", "double", "half", "long", "int", "bool"};
        s.boxable = true;
        for (const char *r : special)
            s.boxable = s.boxable && t != r;
    }
}

/// Turns a Generic step whose node already bound an overload (its Slot) into a Boxed one.
void makeBoxed(Step &s, const Slot &slot, const Interp &it)
{
    const Node *n = s.node;
    if (!s.boxable || !slot.op || slot.target != n->target() || slot.nPos != n->args().size())
        return;
    std::vector<const Argument *> kw;
    for (const auto &[k, v] : n->kwargs())
        if (!droppedKeyword(k, v))
            kw.push_back(&v);
    if (kw.size() != slot.kwNames.size())
        return;
    {
        size_t j = 0;
        for (const auto &[k, v] : n->kwargs())
            if (!droppedKeyword(k, v) && k != slot.kwNames[j++])
                return;
    }
    const auto &schemaArgs = slot.op->schema().arguments();
    if (slot.plan.size() != schemaArgs.size())
        return;
    std::vector<Step::Arg> out(schemaArgs.size());
    try {
        for (size_t k = 0; k < schemaArgs.size(); ++k) {
            Step::Arg &a = out[k];
            a.schema = &schemaArgs[k];
            a.tensor = schemaArgs[k].real_type()->kind() == c10::TypeKind::TensorType;
            const int src = slot.plan[k];
            if (src == -1) {
                a.constant = *schemaArgs[k].default_value();
                continue;
            }
            const Argument &fx = src >= 0 ? n->args()[size_t(src)] : *kw[size_t(-src - 2)];
            if (fx.isNode()) {
                a.node = fx.toNode()->id();
            } else if (hasNode(fx)) {
                a.dynamic = &fx;
            } else if (!coerce(it.natural(fx), schemaArgs[k].real_type(), schemaArgs[k], a.constant, slot.lenient)) {
                return;
            }
        }
    } catch (const std::exception &) {
        return;
    } catch (const CallError &) {
        return;
    }
    s.op = slot.op;
    s.lenient = slot.lenient;
    s.multipleReturns = slot.op->schema().returns().size() != 1;
    s.args = std::move(out);
    s.kind = Step::Kind::Boxed;
}

/// Compiles `g`: one step per node in program order, and the release schedule (each value is
/// dropped right after its last reader, as a Python GraphModule does).
void compilePlan(Plan &p, const ir::Graph &g, const Interp &it)
{
    p.graph = &g;
    p.revision = g.revision();
    p.frozen = false;
    p.steps.clear();
    p.steps.reserve(g.size());
    p.env.assign(g.idBound(), IValue());
    std::vector<uint32_t> pos(g.idBound(), 0);
    uint32_t count = 0;
    for (Node *n = g.first(); n; n = n->next())
        pos[n->id()] = count++;
    // Counting sort of the ids by the position of their last reader.
    std::vector<uint32_t> start(size_t(count) + 1, 0), last(g.idBound(), UINT32_MAX);
    for (Node *n = g.first(); n; n = n->next()) {
        if (n->op() == OpKind::Output)
            continue;
        uint32_t l = pos[n->id()]; // never read: dropped right away
        for (const Node *u : n->users())
            l = std::max(l, pos[u->id()]);
        last[n->id()] = l;
        ++start[l + 1];
    }
    for (size_t i = 1; i < start.size(); ++i)
        start[i] += start[i - 1];
    p.release.assign(start.back(), 0);
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (Node *n = g.first(); n; n = n->next())
        if (last[n->id()] != UINT32_MAX)
            p.release[fill[last[n->id()]]++] = n->id();
    size_t input = 0;
    // Inputs and weights the graph writes to in place are copied on each run, so that every run (and
    // the other graph of a verification) starts from the same values.
    const rewrite::AliasInfo alias(g);
    for (Node *n = g.first(); n; n = n->next()) {
        Step s;
        s.fresh = alias.any() && alias.tainted(n);
        s.node = n;
        s.id = n->id();
        s.releaseBegin = start[pos[n->id()]];
        s.releaseEnd = start[pos[n->id()] + 1];
        switch (n->op()) {
        case OpKind::Placeholder:
            s.kind = Step::Kind::Input;
            s.index = int64_t(input++);
            break;
        case OpKind::GetAttr:
            if (auto found = it.params.find(n->target()); found != it.params.end()) {
                s.kind = Step::Kind::Value;
                s.value = IValue(found->second);
            }
            break;
        case OpKind::CallFunction:
        case OpKind::CallMethod:
            specialize(s, n);
            if (s.boxable)
                if (auto slot = it.slots.find(n); slot != it.slots.end())
                    makeBoxed(s, slot->second, it);
            break;
        default: break;
        }
        p.steps.push_back(std::move(s));
    }
    settle(p);
}

/// Runs a specialized step; false when the values at hand do not fit it (e.g. a number where a
/// tensor was expected), and the interpreter takes the node instead.
bool runStep(Plan &p, const Step &s, const Interp &it)
{
    const std::vector<at::Tensor> &inputs = it.inputs;
    std::vector<IValue> &env = p.env;
    auto tensor = [&](uint32_t id) -> const at::Tensor * {
        const IValue &v = env[id];
        return v.isTensor() ? &v.toTensor() : nullptr;
    };
    auto tensorList = [&](std::vector<at::Tensor> &ts) {
        ts.reserve(s.list.size());
        for (uint32_t id : s.list) {
            const at::Tensor *t = tensor(id);
            if (!t)
                return false;
            ts.push_back(*t);
        }
        return true;
    };
    IValue &out = env[s.id];
    switch (s.kind) {
    case Step::Kind::Input:
        if (size_t(s.index) >= inputs.size())
            throw CallError{"no input for placeholder #" + std::to_string(s.index)};
        if (!inputs[size_t(s.index)].defined()) {
            // A placeholder with a default value (an optional argument the caller did not pass).
            if (s.node->args().empty())
                throw CallError{"no input for placeholder #" + std::to_string(s.index)};
            out = it.natural(s.node->args()[0]);
            return true;
        }
        out = IValue(s.fresh ? inputs[size_t(s.index)].clone() : inputs[size_t(s.index)]);
        return true;
    case Step::Kind::Value: out = s.fresh && s.value.isTensor() ? IValue(s.value.toTensor().clone()) : s.value; return true;
    case Step::Kind::Skip: return true;
    case Step::Kind::Getitem: {
        const IValue &c = env[s.in[0]];
        c10::ArrayRef<IValue> items;
        if (c.isList())
            items = c.toListRef();
        else if (c.isTuple())
            items = c.toTupleRef().elements();
        else
            return false;
        const int64_t i = s.index < 0 ? s.index + int64_t(items.size()) : s.index;
        if (i < 0 || size_t(i) >= items.size())
            return false;
        out = items[size_t(i)];
        return true;
    }
    case Step::Kind::Fast: {
        using F = Interp::Fast;
        if (s.fast == F::Cat) {
            std::vector<at::Tensor> ts;
            if (!tensorList(ts))
                return false;
            out = IValue(at::cat(ts, s.dim));
            return true;
        }
        const at::Tensor *a = tensor(s.in[0]);
        if (!a)
            return false;
        switch (s.fast) {
        case F::Tanh: out = IValue(at::tanh(*a)); return true;
        case F::Relu: out = IValue(at::relu(*a)); return true;
        case F::Sigmoid: out = IValue(at::sigmoid(*a)); return true;
        case F::Add:
        case F::Sub:
        case F::Mul:
        case F::Div: {
            const at::Tensor *b = tensor(s.in[1]);
            if (!b)
                return false;
            out = IValue(s.fast == F::Add ? at::add(*a, *b) : s.fast == F::Sub ? at::sub(*a, *b)
                         : s.fast == F::Mul ? at::mul(*a, *b) : at::div(*a, *b));
            return true;
        }
        case F::Linear: {
            const at::Tensor *w = tensor(s.in[1]);
            const at::Tensor *b = s.in[2] == kNoNode ? nullptr : tensor(s.in[2]);
            if (!w || (s.in[2] != kNoNode && !b))
                return false;
            out = IValue(at::linear(*a, *w, b ? std::optional<at::Tensor>(*b) : std::nullopt));
            return true;
        }
        case F::LayerNorm: {
            const at::Tensor *w = s.in[1] == kNoNode ? nullptr : tensor(s.in[1]);
            const at::Tensor *b = s.in[2] == kNoNode ? nullptr : tensor(s.in[2]);
            if ((s.in[1] != kNoNode && !w) || (s.in[2] != kNoNode && !b))
                return false;
            out = IValue(at::layer_norm(*a, s.ints, w ? std::optional<at::Tensor>(*w) : std::nullopt,
                                        b ? std::optional<at::Tensor>(*b) : std::nullopt, s.eps));
            return true;
        }
        case F::Cat:
        case F::None: break;
        }
        return false;
    }
    case Step::Kind::Split: {
        const at::Tensor *a = tensor(s.in[0]);
        if (!a)
            return false;
        out = IValue(s.sections ? at::split_with_sizes(*a, s.ints, s.dim) : at::split(*a, s.index, s.dim));
        return true;
    }
    case Step::Kind::Stack: {
        std::vector<at::Tensor> ts;
        if (!tensorList(ts))
            return false;
        out = IValue(at::stack(ts, s.dim));
        return true;
    }
    case Step::Kind::Unbind: {
        const at::Tensor *a = tensor(s.in[0]);
        if (!a)
            return false;
        out = IValue(at::unbind(*a, s.dim));
        return true;
    }
    case Step::Kind::Boxed: {
        std::vector<IValue> &stack = p.stack;
        stack.resize(s.args.size());
        for (size_t k = 0; k < s.args.size(); ++k) {
            const Step::Arg &a = s.args[k];
            if (a.node != kNoNode) {
                const IValue &v = env[a.node];
                if (a.tensor && v.isTensor())
                    stack[k] = v;
                else if (!coerce(v, a.schema->real_type(), *a.schema, stack[k], s.lenient))
                    return false;
            } else if (a.dynamic) {
                if (!coerce(it.natural(*a.dynamic), a.schema->real_type(), *a.schema, stack[k], s.lenient))
                    return false;
            } else {
                stack[k] = a.constant;
            }
        }
        callOnRunDevice(*s.op, stack);
        if (!s.multipleReturns)
            out = stack.empty() ? IValue() : std::move(stack[0]);
        else
            out = c10::ivalue::Tuple::create(std::move(stack));
        stack.clear();
        return true;
    }
    case Step::Kind::Generic: break;
    }
    return false;
}

void flattenTensors(const IValue &v, std::vector<at::Tensor> &out)
{
    if (v.isTensor())
        out.push_back(v.toTensor());
    else if (v.isList())
        for (const auto &x : v.toListRef())
            flattenTensors(x, out);
    else if (v.isTuple())
        for (const auto &x : v.toTupleRef().elements())
            flattenTensors(x, out);
    else if (v.isGenericDict())
        for (const auto &kv : v.toGenericDict())
            flattenTensors(kv.value(), out);
}

Diagnostic diag(std::string msg, std::string node = {})
{
    Diagnostic d;
    d.node = std::move(node);
    d.message = std::move(msg);
    return d;
}

at::Tensor fromSafe(const io::SafeTensor &t)
{
    auto st = scalarType(io::fxlensDtype(t.dtype));
    if (!st)
        throw CallError{"unsupported dtype " + t.dtype};
    return at::from_blob(const_cast<uint8_t *>(t.data.data()), t.shape, at::TensorOptions().dtype(*st)).clone();
}

io::SafeTensor toSafe(const at::Tensor &x)
{
    at::Tensor c = x.detach().to(at::kCPU).contiguous();
    io::SafeTensor t;
    t.dtype = io::safetensorsDtype(dtypeName(c.scalar_type()));
    t.shape = c.sizes().vec();
    const auto *p = static_cast<const uint8_t *>(c.data_ptr());
    t.data.assign(p, p + c.nbytes());
    return t;
}

} // namespace

// --- Outputs / Runner -------------------------------------------------------------------------------

class Outputs {
public:
    std::vector<at::Tensor> tensors;
};

struct Runner::Impl {
    at::Device device = at::kCPU;
    std::unordered_map<const Node *, Slot> slots;
    std::unordered_map<std::string, at::Tensor> params;
    std::vector<at::Tensor> inputs;
    /// Compiled versions, most recently used first (a verification alternates two graphs; the
    /// debugger runs each new version once).
    std::vector<std::unique_ptr<Plan>> plans;
    /// A captured run (captureCudaGraph), replayed for its graph at its revision; destroyed before
    /// the weights and plans it reads (declared last).
    struct Captured {
        std::unique_ptr<CudaGraph> graph;
        const ir::Graph *of = nullptr;
        uint64_t revision = 0;
        std::shared_ptr<Outputs> outputs;
    };
    std::optional<Captured> captured;

    Interp interp(const ir::Graph &g, std::vector<IValue> &env) { return Interp{g, params, inputs, env, slots}; }

    /// The plan of `g` as it is now, compiled on first use and after every edit.
    Plan &planFor(const ir::Graph &g)
    {
        for (size_t i = 0; i < plans.size(); ++i) {
            if (plans[i]->graph != &g)
                continue;
            std::rotate(plans.begin(), plans.begin() + long(i), plans.begin() + long(i) + 1);
            if (plans[0]->revision != g.revision())
                compile(*plans[0], g);
            return *plans[0];
        }
        constexpr size_t kKeep = 4;
        if (plans.size() == kKeep)
            plans.pop_back();
        plans.insert(plans.begin(), std::make_unique<Plan>());
        compile(*plans[0], g);
        return *plans[0];
    }
    void compile(Plan &p, const ir::Graph &g)
    {
        Interp it = interp(g, p.env);
        compilePlan(p, g, it);
    }
};

/// A side file a graph names (weights, inputs), resolved in the graph's folder; a name that leads
/// outside it (an absolute path, "..", a link) is refused.
static std::optional<std::string> sideFile(const std::string &dir, const std::string &name, std::string &error)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path folder = fs::weakly_canonical(fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir)), ec);
    const fs::path full = fs::weakly_canonical(folder / name, ec);
    if (ec || fs::path(name).is_absolute() || full.parent_path() != folder) {
        error = "side file '" + name + "' named by the graph is outside the graph's folder; refused";
        return std::nullopt;
    }
    return full.string();
}

/// The number of rows of the smallest table a graph input indexes (embedding lookups, index_select,
/// reached through views, slices and dtype casts), so that random ids stay in range; nullopt when the
/// input indexes nothing.
static std::optional<int64_t> indexBound(const Node *input, const ir::Graph &g)
{
    auto rows = [&](const Node *w) -> std::optional<int64_t> {
        if (!w)
            return std::nullopt;
        if (w->meta().val.isTensor() && !w->meta().val.tensor.shape.empty() && w->meta().val.tensor.shape[0].isStatic())
            return w->meta().val.tensor.shape[0].value;
        for (const auto &p : g.params)
            if (w->op() == OpKind::GetAttr && p.name == w->target() && !p.shape.empty())
                return p.shape[0];
        return std::nullopt;
    };
    auto nodeArg = [](const Node *n, size_t i, const char *kw) -> const Node * {
        const Argument *a = n->arg(i, kw);
        return a && a->isNode() ? a->toNode() : nullptr;
    };
    std::optional<int64_t> best;
    auto take = [&](std::optional<int64_t> r) {
        if (r && *r > 0)
            best = best ? std::min(*best, *r) : *r;
    };
    std::vector<const Node *> work = {input};
    std::unordered_set<const Node *> seen;
    while (!work.empty()) {
        const Node *v = work.back();
        work.pop_back();
        if (!seen.insert(v).second || seen.size() > 4096)
            continue;
        for (const Node *u : v->users()) {
            const std::string &t = u->target();
            std::string base = t.substr(t.rfind('.') + 1);
            if (t.rfind("aten.", 0) == 0)
                base = t.substr(5, t.find('.', 5) - 5);
            if (u->op() == OpKind::CallModule) {
                if (const ir::ModuleInfo *m = g.module(t); m && m->type.find("Embedding") != std::string::npos)
                    for (const auto &p : g.params)
                        if (p.name == t + ".weight" && !p.shape.empty())
                            take(p.shape[0]);
                continue;
            }
            if (base == "embedding" || base == "embedding_bag") {
                if (t.rfind("aten.", 0) == 0) {
                    if (nodeArg(u, 1, "indices") == v)
                        take(rows(nodeArg(u, 0, "weight")));
                } else if (nodeArg(u, 0, "input") == v) {
                    take(rows(nodeArg(u, 1, "weight")));
                }
                continue;
            }
            if (base == "index_select" && nodeArg(u, 2, "index") == v) {
                take(rows(nodeArg(u, 0, u->op() == OpKind::CallMethod ? "" : "input")));
                continue;
            }
            if (rewrite::mayAliasInput(u) || base == "clone" || base == "_to_copy" || base == "convert_element_type")
                work.push_back(u);
        }
    }
    return best;
}

Runner::Runner(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Runner::~Runner() = default;

Result<std::unique_ptr<Runner>> Runner::create(const ir::Graph &ref, const ExecOptions &opts)
{
    auto impl = std::make_unique<Impl>();
    try {
        impl->device = at::Device(opts.device);
    } catch (const std::exception &) {
        return diag("unknown device '" + opts.device + "' (cpu, cuda, cuda:N)");
    }
    if (impl->device.is_cuda() && !(at::hasCUDA() && at::getNumGPUs() > 0))
        return diag("--device " + opts.device + " asked for CUDA, but no CUDA device is usable here (no GPU, or no driver); "
                    "run on cpu or on a machine with a GPU");
    try {
        // Inference tensors (made in inference mode): the values computed from them carry no
        // autograd metadata either (views in particular), which is what makes runs cheap.
        c10::InferenceMode inference;
        auto gen = at::make_generator<at::CPUGeneratorImpl>(opts.seed);
        // Weights: an explicit file, the graph's side file, then seeded random values.
        std::map<std::string, io::SafeTensor> file;
        std::string wpath = opts.weightsFile;
        if (wpath.empty() && !ref.weightsFile.empty()) {
            std::string dir = opts.graphDir;
            if (dir.empty() && !ref.sourcePath.empty())
                dir = std::filesystem::path(ref.sourcePath).parent_path().string();
            std::string why;
            auto p = sideFile(dir, ref.weightsFile, why);
            if (!p)
                return diag(why);
            wpath = *p;
        }
        if (!wpath.empty()) {
            auto r = io::readSafetensors(wpath);
            if (!r)
                return r.error();
            file = std::move(r.value());
        }
        auto lookup = [&](const std::string &name) -> const io::SafeTensor * {
            for (const std::string &k : {name, "weight:" + name}) {
                auto it = file.find(k);
                if (it != file.end())
                    return &it->second;
            }
            return nullptr;
        };
        for (const auto &p : ref.params) {
            at::Tensor t;
            if (const auto *s = lookup(p.name)) {
                t = fromSafe(*s);
            } else {
                auto st = scalarType(p.dtype).value_or(at::kFloat);
                const std::string &n = p.name;
                if (!at::isFloatingType(st))
                    t = at::zeros(p.shape, at::TensorOptions().dtype(st));
                else if (n.size() >= 11 && n.compare(n.size() - 11, 11, "running_var") == 0)
                    t = at::rand(p.shape, gen, at::TensorOptions().dtype(st)) + 0.5;
                else
                    t = at::randn(p.shape, gen, at::TensorOptions().dtype(st)) * 0.1;
            }
            impl->params[p.name] = t.to(impl->device);
        }
        // Inputs: an explicit file, else random from each placeholder's meta.
        std::map<std::string, io::SafeTensor> in;
        std::string ipath = opts.inputsFile;
        if (ipath.empty() && !ref.inputsFile.empty() && !opts.randomInputs) {
            // The example inputs the exporter saved next to the graph.
            std::string dir = opts.graphDir;
            if (dir.empty() && !ref.sourcePath.empty())
                dir = std::filesystem::path(ref.sourcePath).parent_path().string();
            std::string why;
            auto p = sideFile(dir, ref.inputsFile, why);
            if (!p)
                return diag(why);
            ipath = std::filesystem::exists(*p) ? *p : std::string();
        }
        if (!ipath.empty()) {
            auto r = io::readSafetensors(ipath);
            if (!r)
                return r.error();
            in = std::move(r.value());
        }
        size_t i = 0;
        for (Node *n = ref.first(); n; n = n->next()) {
            if (n->op() != OpKind::Placeholder)
                continue;
            std::string key = "input:" + std::to_string(i++);
            at::Tensor t;
            if (!in.empty()) {
                auto it = in.find(key);
                if (it != in.end())
                    t = fromSafe(it->second);
                else if (n->args().empty())
                    return diag("no tensor '" + key + "' in " + ipath, n->name());
                // else: a non-tensor input the exporter could not save; its default is used
            } else {
                const auto &val = n->meta().val;
                if (!val.isTensor() && !n->args().empty()) {
                    impl->inputs.emplace_back(); // bound to the placeholder's default value
                    continue;
                }
                if (!val.isTensor())
                    return diag("placeholder has no tensor meta: cannot make a random input (pass --inputs)", n->name());
                auto sizes = val.tensor.sizes();
                for (auto s : sizes)
                    if (s < 0)
                        return diag("placeholder has a symbolic shape: pass --inputs", n->name());
                auto st = scalarType(val.tensor.dtype).value_or(at::kFloat);
                if (auto high = indexBound(n, ref))
                    // Ids into a table (also when carried in a float tensor and cast before the lookup).
                    t = at::randint(0, *high, sizes, gen, at::TensorOptions().dtype(at::kLong)).to(st);
                else if (at::isFloatingType(st))
                    t = at::randn(sizes, gen, at::TensorOptions().dtype(st));
                else if (st == at::kBool)
                    t = at::randint(0, 2, sizes, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
                else {
                    // Integer inputs are usually indices: keep them below the smallest embedding table.
                    int64_t high = 16;
                    for (const auto &p : ref.params)
                        if (p.shape.size() == 2 && p.name.find("emb") != std::string::npos)
                            high = std::min(high, p.shape[0]);
                    t = at::randint(0, high, sizes, gen, at::TensorOptions().dtype(st));
                }
            }
            impl->inputs.push_back(t.defined() ? t.to(impl->device) : t);
        }
    } catch (const std::exception &e) {
        return diag("preparing inputs and weights: " + firstLine(e.what()));
    }
    return std::unique_ptr<Runner>(new Runner(std::move(impl)));
}

/// Evaluates one node into the environment; the diagnostic names the node when it fails.
static std::optional<Diagnostic> evalOne(Interp &it, const Node *n)
{
    try {
        it.env[n->id()] = it.evalNode(n);
        t_slot = nullptr;
        return std::nullopt;
    } catch (const CallError &e) {
        t_slot = nullptr;
        return diag(n->target() + ": " + e.message, n->name());
    } catch (const std::exception &e) {
        t_slot = nullptr;
        return diag(n->target() + ": " + firstLine(e.what()), n->name());
    }
}

/// One step: its specialization when the values fit, else the interpreter (after which a call that
/// bound its own arguments becomes a Boxed step for the next runs).
static std::optional<Diagnostic> runOne(Plan &p, Step &s, Interp &it)
{
    if (s.kind != Step::Kind::Generic) {
        try {
            if (runStep(p, s, it))
                return std::nullopt;
        } catch (const CallError &e) {
            return diag(s.node->target() + ": " + e.message, s.node->name());
        } catch (const std::exception &e) {
            return diag(s.node->target() + ": " + firstLine(e.what()), s.node->name());
        }
    }
    if (auto err = evalOne(it, s.node))
        return err;
    if (s.kind == Step::Kind::Generic && s.boxable) {
        if (auto slot = it.slots.find(s.node); slot != it.slots.end())
            makeBoxed(s, slot->second, it);
        // One try per compiled plan: a call that did not bind its own arguments (a packed x.view(2, 3),
        // say) stays with the interpreter instead of being re-examined on every run.
        s.boxable = s.kind == Step::Kind::Boxed;
    }
    return std::nullopt;
}

Result<std::shared_ptr<Outputs>> Runner::run(const ir::Graph &g, NodeObserver *observer)
{
    DeviceScope deviceScope(m_impl->device);
    if (auto &c = m_impl->captured; c && c->of == &g && c->revision == g.revision()) {
        c->graph->replay();
        return c->outputs;
    }
    Plan &p = m_impl->planFor(g);
    Interp it = m_impl->interp(g, p.env);
    // Inference mode: no autograd bookkeeping (version counters, view metadata) on any value.
    c10::InferenceMode inference;
    auto out = std::make_shared<Outputs>();
    std::optional<Diagnostic> err;
    for (uint32_t index : p.hot) {
        Step &s = p.steps[index];
        const bool observed = observer && measured(s);
        if (observed)
            observer->before(index, *s.node);
        if (s.node->op() == OpKind::Output) {
            err = evalOne(it, s.node);
            if (!err)
                flattenTensors(p.env[s.id], out->tensors);
        } else {
            err = runOne(p, s, it);
        }
        for (uint32_t k = s.releaseBegin; k < s.releaseEnd; ++k)
            p.env[p.release[k]] = IValue();
        if (observed)
            observer->after(index, *s.node);
        if (err)
            break;
    }
    for (uint32_t index : p.hot) // what an error left behind, and the output
        p.env[p.steps[index].id] = IValue();
    if (err)
        return *err;
    return out;
}

std::string Runner::device() const { return m_impl->device.str(); }

/// Evaluates the weight-only nodes of `g` (`folded`, rewrite::weightOnlyNodes) once, in program
/// order, into `env` (by node id): what freeze() keeps and optimize --freeze writes.
static std::optional<Diagnostic> evalWeightOnly(Runner::Impl &impl, const ir::Graph &g, const std::vector<bool> &folded,
                                                std::vector<IValue> &env)
{
    env.assign(g.idBound(), IValue());
    Interp it = impl.interp(g, env);
    c10::InferenceMode inference;
    for (Node *n = g.first(); n; n = n->next())
        if (folded[n->id()])
            if (auto err = evalOne(it, n))
                return err;
    return std::nullopt;
}

Result<size_t> Runner::freeze(const ir::Graph &g)
{
    DeviceScope deviceScope(m_impl->device);
    unfreeze();
    const std::vector<bool> folded = rewrite::weightOnlyNodes(g);
    // Evaluate the folded nodes in program order (in an environment of their own); the steps of the
    // values that unfolded nodes read become those values, the others are skipped.
    Plan &p = m_impl->planFor(g);
    std::vector<IValue> env;
    if (auto err = evalWeightOnly(*m_impl, g, folded, env))
        return *err;
    size_t count = 0;
    std::vector<IValue> keep(g.idBound());
    for (Node *n = g.first(); n; n = n->next()) {
        if (!folded[n->id()])
            continue;
        bool read = false;
        for (Node *u : n->users())
            read = read || !folded[u->id()];
        if (read)
            keep[n->id()] = env[n->id()];
        count += n->op() != OpKind::GetAttr;
    }
    for (Step &s : p.steps) {
        // Dead calls (no reader, no effect) are dropped as well, as PyTorch's dead-code elimination would.
        const Node *n = s.node;
        if (!folded[s.id] && n->users().empty() && (n->op() == OpKind::CallFunction || n->op() == OpKind::CallMethod) &&
            !rewrite::hasSideEffects(n)) {
            s.kind = Step::Kind::Skip;
            ++count;
            continue;
        }
        if (!folded[s.id])
            continue;
        s.kind = keep[s.id].isNone() ? Step::Kind::Skip : Step::Kind::Value;
        s.value = std::move(keep[s.id]);
    }
    settle(p);
    p.frozen = true;
    return count;
}

Result<std::map<std::string, io::SafeTensor>> Runner::evaluateWeightNodes(const ir::Graph &g, const std::vector<std::string> &names)
{
    DeviceScope deviceScope(m_impl->device);
    const std::vector<bool> folded = rewrite::weightOnlyNodes(g);
    std::vector<IValue> env;
    if (auto err = evalWeightOnly(*m_impl, g, folded, env))
        return *err;
    std::map<std::string, io::SafeTensor> out;
    try {
        for (const std::string &name : names)
            if (const Node *n = g.find(name); n && folded[n->id()] && env[n->id()].isTensor())
                out[name] = toSafe(env[n->id()].toTensor());
    } catch (const std::exception &e) {
        return diag("freezing: " + firstLine(e.what()));
    }
    return out;
}

std::map<std::string, io::SafeTensor> Runner::weightValues(const std::vector<std::string> &names) const
{
    std::map<std::string, io::SafeTensor> out;
    for (const auto &name : names)
        if (auto f = m_impl->params.find(name); f != m_impl->params.end())
            out[name] = toSafe(f->second);
    return out;
}

Result<bool> Runner::captureCudaGraph(const ir::Graph &g)
{
    releaseCudaGraph();
    if (!m_impl->device.is_cuda())
        return diag("--cuda-graph needs a CUDA device (this runner executes on " + m_impl->device.str() + ")");
    std::shared_ptr<Outputs> outputs;
    auto body = [&]() -> std::string {
        auto r = run(g);
        if (!r)
            return r.error().toString();
        outputs = r.value();
        return {};
    };
    std::string error;
    DeviceScope deviceScope(m_impl->device);
    const int index = m_impl->device.has_index() ? m_impl->device.index() : int(at::accelerator::getDeviceIndex());
    auto graph = fxlens::exec::captureCudaGraph(index, 2, body, error);
    if (!graph)
        return diag(error);
    m_impl->captured = Impl::Captured{std::move(graph), &g, g.revision(), std::move(outputs)};
    return true;
}

void Runner::releaseCudaGraph()
{
    m_impl->captured.reset();
}

std::shared_ptr<Outputs> Runner::snapshot(const Outputs &o) const
{
    auto copy = std::make_shared<Outputs>();
    for (const auto &t : o.tensors)
        copy->tensors.push_back(t.clone());
    return copy;
}

void Runner::unfreeze()
{
    releaseCudaGraph();
    auto &plans = m_impl->plans;
    plans.erase(std::remove_if(plans.begin(), plans.end(), [](const auto &p) { return p->frozen; }), plans.end());
}

void Runner::synchronize() const
{
    if (m_impl->device.is_cuda())
        at::accelerator::synchronizeDevice(m_impl->device.has_index() ? m_impl->device.index()
                                                                     : at::accelerator::getDeviceIndex());
}

std::vector<OutputInfo> Runner::describe(const Outputs &o) const
{
    std::vector<OutputInfo> out;
    for (const auto &t : o.tensors) {
        OutputInfo i;
        i.dtype = dtypeName(t.scalar_type());
        i.shape = t.sizes().vec();
        i.absSum = t.numel() ? t.to(at::kDouble).abs().sum().item<double>() : 0.0;
        out.push_back(i);
    }
    return out;
}

static OutputDiff diffOne(size_t k, const at::Tensor &e, const at::Tensor &a)
{
    OutputDiff d;
    d.index = k;
    d.dtype = dtypeName(a.scalar_type());
    d.shape = a.sizes().vec();
    if (e.sizes() != a.sizes()) {
        d.note = "shape " + c10::str(a.sizes()) + " != expected " + c10::str(e.sizes());
        return d;
    }
    if (e.scalar_type() != a.scalar_type()) {
        d.note = "dtype " + dtypeName(a.scalar_type()) + " != expected " + dtypeName(e.scalar_type());
        return d;
    }
    at::Tensor ed = e.to(at::kCPU).to(at::kDouble), ad = a.to(at::kCPU).to(at::kDouble);
    if (ed.numel() == 0) {
        d.pass = true;
        return d;
    }
    at::Tensor diff = (ad - ed).abs();
    d.maxAbs = diff.max().item<double>();
    d.maxRel = (diff / ed.abs().clamp_min(1e-12)).max().item<double>();
    const auto st = a.scalar_type();
    if (st == at::kFloat) {
        d.rtol = 1e-4;
        d.atol = 1e-5;
    } else if (st == at::kDouble) {
        d.rtol = 1e-7;
        d.atol = 1e-9;
    } else if (st == at::kHalf || st == at::kBFloat16) {
        d.rtol = 1e-2;
        d.atol = 1e-3;
    }
    // Tolerances scale with the output's magnitude (a sum of 10^4 terms rounds differently).
    double scale = std::max(1.0, ed.abs().max().item<double>());
    bool nanMismatch = (ed.isnan() != ad.isnan()).any().item<bool>();
    d.pass = !nanMismatch && (diff <= d.atol * scale + d.rtol * ed.abs()).logical_or(ed.isnan()).all().item<bool>();
    if (nanMismatch)
        d.note = "NaN in one output but not the other";
    else if (ed.isnan().any().item<bool>())
        d.note = "NaN in both outputs (compared where finite)";
    return d;
}

VerifyReport Runner::compare(const Outputs &expected, const Outputs &actual) const
{
    VerifyReport r;
    r.pass = expected.tensors.size() == actual.tensors.size();
    for (size_t k = 0; k < std::min(expected.tensors.size(), actual.tensors.size()); ++k) {
        r.outputs.push_back(diffOne(k, expected.tensors[k], actual.tensors[k]));
        r.pass = r.pass && r.outputs.back().pass;
    }
    if (expected.tensors.size() != actual.tensors.size()) {
        OutputDiff d;
        d.note = std::to_string(actual.tensors.size()) + " outputs, expected " + std::to_string(expected.tensors.size());
        r.outputs.push_back(d);
    }
    return r;
}

Result<VerifyReport> Runner::compareWithFile(const Outputs &actual, const std::string &path) const
{
    auto f = io::readSafetensors(path);
    if (!f)
        return f.error();
    Outputs expected;
    try {
        for (size_t k = 0;; ++k) {
            auto it = f.value().find("output:" + std::to_string(k));
            if (it == f.value().end())
                break;
            expected.tensors.push_back(fromSafe(it->second));
        }
    } catch (const std::exception &e) {
        return diag(path + ": " + firstLine(e.what()));
    }
    if (expected.tensors.empty())
        return diag(path + ": no tensors named output:0, output:1, ...");
    return compare(expected, actual);
}

Result<bool> Runner::saveOutputs(const Outputs &o, const std::string &path) const
{
    std::map<std::string, io::SafeTensor> m;
    for (size_t k = 0; k < o.tensors.size(); ++k)
        m["output:" + std::to_string(k)] = toSafe(o.tensors[k]);
    return io::writeSafetensors(m, path);
}

std::string VerifyReport::summary() const
{
    std::ostringstream s;
    for (const auto &o : outputs) {
        s << "output " << o.index << ": ";
        if (!o.note.empty())
            s << o.note;
        else
            s << o.dtype << " max abs err " << o.maxAbs << ", max rel err " << o.maxRel << " (atol " << o.atol << ", rtol " << o.rtol
              << ")";
        s << (o.pass ? "  ok" : "  MISMATCH") << "\n";
    }
    s << (pass ? "outputs match\n" : "outputs differ\n");
    return s.str();
}

Result<VerifyReport> verifyGraphs(const ir::Graph &a, const ir::Graph &b, const ExecOptions &opts)
{
    auto r = Runner::create(a, opts);
    if (!r)
        return r.error();
    auto oa = r.value()->run(a);
    if (!oa)
        return oa.error();
    auto ob = r.value()->run(b);
    if (!ob)
        return ob.error();
    return r.value()->compare(*oa.value(), *ob.value());
}

std::function<std::string(const ir::Graph &)> makeStepVerifier(const ir::Graph &original, const ExecOptions &opts, std::string &error)
{
    auto r = Runner::create(original, opts);
    if (!r) {
        error = r.error().toString();
        return nullptr;
    }
    std::shared_ptr<Runner> runner(std::move(r.value()));
    auto ref = runner->run(original);
    if (!ref) {
        error = ref.error().toString();
        return nullptr;
    }
    std::shared_ptr<Outputs> expected = ref.value();
    return [runner, expected](const ir::Graph &g) -> std::string {
        auto o = runner->run(g);
        if (!o)
            return "the new version does not run: " + o.error().toString();
        auto rep = runner->compare(*expected, *o.value());
        if (rep.pass)
            return {};
        for (const auto &d : rep.outputs)
            if (!d.pass)
                return "output " + std::to_string(d.index) + " changed: " +
                       (d.note.empty() ? "max abs err " + std::to_string(d.maxAbs) + ", max rel err " + std::to_string(d.maxRel) : d.note);
        return "outputs changed";
    };
}

} // namespace fxlens::exec
