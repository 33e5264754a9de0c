// SPDX-License-Identifier: MIT
// Overload resolution and argument coercion: call_function / call_method targets resolve to ATen
// operators through the dispatcher; arguments are bound to each overload's schema (positional, by
// name, defaults) and coerced to its types, and the first overload that binds is called — the way
// TorchScript picks overloads.
#include "exec/Aten.h"

#include "ir/Argument.h"
#include "ir/Node.h"
#include "rewrite/Schema.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace fxlens::exec::detail {

namespace {

/// Every dtype torch has: its torch name (the graph format's, docs/FORMAT.md) and ScalarType.
const std::pair<const char *, at::ScalarType> kScalarTypes[] = {
    {"float32", at::kFloat},
    {"float64", at::kDouble},
    {"float16", at::kHalf},
    {"bfloat16", at::kBFloat16},
    {"int64", at::kLong},
    {"int32", at::kInt},
    {"int16", at::kShort},
    {"int8", at::kChar},
    {"uint8", at::kByte},
    {"bool", at::kBool},
    {"complex32", at::kComplexHalf},
    {"complex64", at::kComplexFloat},
    {"complex128", at::kComplexDouble},
    {"uint16", at::kUInt16},
    {"uint32", at::kUInt32},
    {"uint64", at::kUInt64},
    {"float8_e4m3fn", at::ScalarType::Float8_e4m3fn},
    {"float8_e5m2", at::ScalarType::Float8_e5m2},
    {"float8_e4m3fnuz", at::ScalarType::Float8_e4m3fnuz},
    {"float8_e5m2fnuz", at::ScalarType::Float8_e5m2fnuz},
    {"float8_e8m0fnu", at::ScalarType::Float8_e8m0fnu},
    {"float4_e2m1fn_x2", at::ScalarType::Float4_e2m1fn_x2},
    {"qint8", at::kQInt8},
    {"quint8", at::kQUInt8},
    {"qint32", at::kQInt32},
    {"quint4x2", at::kQUInt4x2},
    {"quint2x4", at::kQUInt2x4},
    {"bits1x8", at::ScalarType::Bits1x8},
    {"bits2x4", at::ScalarType::Bits2x4},
    {"bits4x2", at::ScalarType::Bits4x2},
    {"bits8", at::ScalarType::Bits8},
    {"bits16", at::ScalarType::Bits16},
    {"int1", at::ScalarType::Int1},
    {"int2", at::ScalarType::Int2},
    {"int3", at::ScalarType::Int3},
    {"int4", at::ScalarType::Int4},
    {"int5", at::ScalarType::Int5},
    {"int6", at::ScalarType::Int6},
    {"int7", at::ScalarType::Int7},
    {"uint1", at::ScalarType::UInt1},
    {"uint2", at::ScalarType::UInt2},
    {"uint3", at::ScalarType::UInt3},
    {"uint4", at::ScalarType::UInt4},
    {"uint5", at::ScalarType::UInt5},
    {"uint6", at::ScalarType::UInt6},
    {"uint7", at::ScalarType::UInt7},
};

} // namespace

std::optional<at::ScalarType> scalarType(const std::string &d)
{
    for (const auto &[n, t] : kScalarTypes)
        if (d == n)
            return t;
    return std::nullopt;
}

std::string dtypeName(at::ScalarType t)
{
    for (const auto &[n, s] : kScalarTypes)
        if (t == s)
            return n;
    return c10::toString(t);
}

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
    std::string line = s.substr(0, s.find('\n'));
    // The dispatcher's "Could not run 'aten::view' with arguments from the 'SparseCPU' backend." goes
    // on with advice and every backend the op has: the first sentence says it.
    if (line.rfind("Could not run '", 0) == 0)
        if (auto cut = line.find(" backend. "); cut != std::string::npos)
            line.resize(cut + std::strlen(" backend"));
    return line;
}

namespace {

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

} // namespace

/// A list argument: a list or tuple of values, or one number repeated (int[2] stride=2 is [2, 2]).
static bool coerceList(const IValue &v, const c10::TypePtr &elem, const c10::Argument &arg, IValue &out, bool lenient)
{
    using K = c10::TypeKind;
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
    case K::ListType: return coerceList(v, type->castRaw<c10::ListType>()->getElementType(), arg, out, lenient);
    default: out = v; return true;
    }
}

bool bindSchema(const c10::FunctionSchema &s, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw,
                bool lenient, std::vector<IValue> &stack, std::string &why, std::vector<int> *plan)
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

thread_local std::optional<c10::Device> t_runDevice;

/// Device arguments of a call set to the run's device. A graph records the device it was captured
/// on (`arange(..., device='cuda:0')`), but every input and weight of a run lives on the run's
/// device: a factory must create its tensor there too, on the CPU as well (a fold of a graph captured
/// on a GPU runs on the CPU). On the CPU an absent device already means the CPU and stays absent.
void placeOnRunDevice(const c10::FunctionSchema &s, std::vector<IValue> &stack)
{
    if (!t_runDevice)
        return;
    const bool cpu = t_runDevice->is_cpu();
    const bool hostSplits = !cpu && s.name() == "aten::tensor_split"; // checked once a call, not per argument
    const auto &args = s.arguments();
    for (size_t k = 0; k < args.size() && k < stack.size(); ++k) {
        const c10::TypePtr &t = args[k].real_type();
        const bool device = t->kind() == c10::TypeKind::DeviceObjType ||
            (t->kind() == c10::TypeKind::OptionalType &&
             t->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::DeviceObjType);
        if (device && (!cpu || (stack[k].isDevice() && !stack[k].toDevice().is_cpu())))
            stack[k] = IValue(*t_runDevice);
        // Tensor arguments PyTorch reads on the host (split points): every input of a run lives
        // on the run's device, these go back to the CPU.
        if (hostSplits && stack[k].isTensor() && args[k].name() == "tensor_indices_or_sections")
            stack[k] = IValue(stack[k].toTensor().cpu());
    }
}

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

thread_local Slot *t_slot = nullptr;

bool hasAtenOp(const std::string &name)
{
    const auto *ops = OpTable::get().find(name);
    return ops && !ops->empty();
}

IValue callAten(const std::string &name, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw)
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

void flattenOutputs(const ir::Argument &a, const IValue &v, std::vector<at::Tensor> &out, std::vector<std::string> &nodes)
{
    using K = ir::Argument::Kind;
    if ((a.kind() == K::List || a.kind() == K::Tuple) && v.isList() && v.toListRef().size() == a.items().size()) {
        for (size_t i = 0; i < a.items().size(); ++i)
            flattenOutputs(a.items()[i], v.toListRef()[i], out, nodes);
        return;
    }
    flattenTensors(v, out);
    nodes.resize(out.size(), a.kind() == K::NodeRef ? a.toNode()->name() : std::string("output"));
}

at::Tensor asDouble(const at::Tensor &t)
{
    at::Tensor x = t.layout() == at::kStrided ? t : t.to_dense();
    if (x.is_quantized())
        x = x.dequantize();
    if (x.is_complex())
        x = at::view_as_real(x.to(at::kComplexDouble).resolve_conj());
    return x.to(at::kCPU).to(at::kDouble);
}

double absSum(const at::Tensor &t)
{
    if (!t.numel())
        return 0.0;
    try {
        at::Tensor x = t.layout() == at::kStrided ? t : t.to_dense();
        if (x.is_quantized())
            x = x.dequantize();
        if (x.is_complex())
            return x.to(at::kComplexDouble).abs().sum().item<double>();
        return x.to(at::kDouble).abs().sum().item<double>();
    } catch (const std::exception &) { // bits, sub-byte integers, float4: no arithmetic
        return std::nan("");
    }
}

Diagnostic diag(std::string msg, std::string node)
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
        throw std::runtime_error("unsupported dtype " + t.dtype);
    return at::from_blob(const_cast<uint8_t *>(t.data.data()), t.shape, at::TensorOptions().dtype(*st)).clone();
}

io::SafeTensor toSafe(const at::Tensor &x)
{
    io::SafeTensor t;
    const std::string name = dtypeName(x.scalar_type());
    t.dtype = io::safetensorsDtype(name);
    if (t.dtype.empty())
        throw std::runtime_error(io::unstorableReason(name));
    if (x.layout() != at::kStrided)
        throw std::runtime_error("a tensor of layout " + c10::str(x.layout()) +
                                 ": safetensors holds dense tensors (make it dense with .to_dense())");
    if (x.scalar_type() == at::ScalarType::Float4_e2m1fn_x2 && x.dim() == 0)
        throw std::runtime_error("a 0-dim float4_e2m1fn_x2 has no safetensors shape (F4 counts 4-bit values in its last dimension)");
    at::Tensor c = x.detach().to(at::kCPU).contiguous();
    t.shape = c.sizes().vec();
    const auto *p = static_cast<const uint8_t *>(c.data_ptr());
    t.data.assign(p, p + c.nbytes());
    return t;
}

} // namespace fxlens::exec::detail
