// SPDX-License-Identifier: MIT
// The interpreter's core: argument values, getitem, operators, methods and the node dispatch.
#include "exec/Interpreter.h"

#include <cmath>

namespace fxlens::exec::detail {

IValue Interp::natural(const Argument &a) const
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
        return IValue(a.text() == "channels_last"         ? c10::MemoryFormat::ChannelsLast
                          : a.text() == "preserve_format" ? c10::MemoryFormat::Preserve
                                                          : c10::MemoryFormat::Contiguous);
    default: throw CallError{"cannot evaluate argument " + a.toString()};
    }
}

std::vector<IValue> Interp::positional(const Node *n, size_t from) const
{
    std::vector<IValue> out;
    for (size_t i = from; i < n->args().size(); ++i)
        out.push_back(natural(n->args()[i]));
    return out;
}

std::vector<std::pair<std::string, IValue>> Interp::keywords(const Node *n) const
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

std::vector<IValue> Interp::items(const IValue &v)
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

/// seq[start:stop:step] with Python's rules (None defaults, negative positions from the end, clamped);
/// a list stays a list, a tuple (a size) a tuple.
IValue Interp::sliceSequence(const IValue &c, const std::vector<IValue> &sl)
{
    const std::vector<IValue> items = Interp::items(c);
    const int64_t n = int64_t(items.size());
    const int64_t step = sl[2].isNone() ? 1 : sl[2].toInt();
    if (step == 0)
        throw CallError{"slice step cannot be zero"};
    auto clamp = [&](const IValue &v, int64_t dflt) {
        if (v.isNone())
            return dflt;
        int64_t i = v.toInt();
        if (i < 0)
            i += n;
        return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
    };
    const int64_t start = clamp(sl[0], step > 0 ? 0 : n - 1), stop = clamp(sl[1], step > 0 ? n : -1);
    std::vector<IValue> out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        out.push_back(items[size_t(i)]);
    if (c.isTuple())
        return c10::ivalue::Tuple::create(std::move(out));
    c10::impl::GenericList list(c.toList().elementType());
    for (auto &v : out)
        list.push_back(std::move(v));
    return IValue(list);
}

IValue Interp::getitem(const IValue &c, const IValue &idx) const
{
    if (c.isList() || c.isTuple()) {
        if (idx.isTuple() && idx.toTupleRef().elements().size() == 3)
            return sliceSequence(c, idx.toTupleRef().elements()); // x.shape[-2:]
        if (!idx.isInt())
            throw CallError{"getitem on a sequence needs an int index or a slice"};
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

std::vector<at::indexing::TensorIndex> Interp::tensorIndices(const IValue &idx) const
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
IValue Interp::indexArg(const Argument &a) const
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

IValue Interp::binary(std::string op, IValue a, IValue b) const
{
    // Augmented assignment (operator.iadd, ...): in place on a tensor, the plain op on numbers.
    // clang-format off
    static const std::unordered_map<std::string, std::string> augmented = {
        {"iadd", "add"}, {"isub", "sub"}, {"imul", "mul"}, {"itruediv", "div"}, {"ifloordiv", "floor_divide"},
        {"imod", "remainder"}, {"ipow", "pow"}, {"iand", "bitwise_and"}, {"ior", "bitwise_or"}, {"ixor", "bitwise_xor"},
        {"ilshift", "bitwise_left_shift"}, {"irshift", "bitwise_right_shift"}, {"imatmul", ""}};
    // clang-format on
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
        if (op == "add")
            return ints ? IValue(a.toInt() + b.toInt()) : IValue(x + y);
        if (op == "sub")
            return ints ? IValue(a.toInt() - b.toInt()) : IValue(x - y);
        if (op == "mul")
            return ints ? IValue(a.toInt() * b.toInt()) : IValue(x * y);
        if (op == "truediv")
            return IValue(x / y);
        if (op == "floordiv")
            return ints ? IValue(int64_t(std::floor(x / y))) : IValue(std::floor(x / y));
        if (op == "mod")
            return ints ? IValue(a.toInt() % b.toInt()) : IValue(std::fmod(x, y));
        if (op == "pow")
            return ints && b.toInt() >= 0 ? IValue(int64_t(std::llround(std::pow(x, y)))) : IValue(std::pow(x, y));
        if (op == "eq")
            return IValue(x == y);
        if (op == "ne")
            return IValue(x != y);
        if (op == "lt")
            return IValue(x < y);
        if (op == "le")
            return IValue(x <= y);
        if (op == "gt")
            return IValue(x > y);
        if (op == "ge")
            return IValue(x >= y);
        throw CallError{"operator." + op + " on numbers"};
    }
    // A number on the left: make it a tensor of the right operand's dtype and device.
    if (isNumber(a) && b.isTensor())
        a = IValue(at::scalar_tensor(a.toScalar(), b.toTensor().options()));
    // clang-format off
    static const std::unordered_map<std::string, std::string> aten = {
        {"add", "aten::add"}, {"sub", "aten::sub"}, {"mul", "aten::mul"}, {"truediv", "aten::div"},
        {"floordiv", "aten::floor_divide"}, {"mod", "aten::remainder"}, {"pow", "aten::pow"}, {"matmul", "aten::matmul"},
        {"eq", "aten::eq"}, {"ne", "aten::ne"}, {"lt", "aten::lt"}, {"le", "aten::le"}, {"gt", "aten::gt"},
        {"ge", "aten::ge"}, {"and_", "aten::bitwise_and"}, {"or_", "aten::bitwise_or"}, {"xor", "aten::bitwise_xor"}};
    // clang-format on
    auto it = aten.find(op);
    if (it == aten.end())
        throw CallError{"unsupported operator." + op};
    return callAten(it->second, {a, b});
}

const at::Tensor &Interp::param(const std::string &name) const
{
    auto it = params.find(name);
    if (it == params.end())
        throw CallError{"no value for parameter '" + name + "'"};
    return it->second;
}

IValue Interp::optParam(const std::string &name) const
{
    auto it = params.find(name);
    return it == params.end() ? IValue() : IValue(it->second);
}

/// The position of a torch.nn.functional activation's `inplace` parameter (0: none).
size_t Interp::inplacePosition(const std::string &base)
{
    // clang-format off
    static const std::unordered_map<std::string, size_t> at = {
        {"relu", 1}, {"relu6", 1}, {"selu", 1}, {"silu", 1}, {"hardswish", 1}, {"hardsigmoid", 1}, {"mish", 1},
        {"leaky_relu", 2}, {"elu", 2}, {"celu", 2}, {"hardtanh", 3}, {"threshold", 3}, {"rrelu", 4},
        {"dropout", 3}, {"dropout1d", 3}, {"dropout2d", 3}, {"dropout3d", 3}, {"alpha_dropout", 3},
        {"feature_alpha_dropout", 3}};
    // clang-format on
    auto it = at.find(base);
    return it == at.end() ? 0 : it->second;
}

/// Reads and removes the `inplace` flag of a call (keyword, or a functional activation's positional).
bool Interp::takeInplace(const Node *n, const std::string &base, std::vector<IValue> &pos)
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
IValue Interp::callInPlace(const std::string &base, std::vector<IValue> pos, const std::vector<std::pair<std::string, IValue>> &kw) const
{
    if (pos.empty() || !pos[0].isTensor())
        throw CallError{"in-place " + base + " on a non-tensor"};
    if (hasAtenOp("aten::" + base + "_"))
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
IValue Interp::callPacked(const std::string &name, const std::vector<IValue> &pos, const std::vector<std::pair<std::string, IValue>> &kw,
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
IValue Interp::take(std::vector<IValue> &pos, std::vector<std::pair<std::string, IValue>> &kw, size_t i,
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
IValue Interp::tensorAttr(const at::Tensor &t, const std::string &attr)
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

std::vector<int64_t> Interp::reversedDims(int64_t d)
{
    std::vector<int64_t> v;
    for (int64_t i = d - 1; i >= 0; --i)
        v.push_back(i);
    return v;
}

/// Tensors for an index list argument of the inductor pooling prims.
std::vector<int64_t> Interp::ints(const IValue &v)
{
    std::vector<int64_t> out;
    for (const auto &x : items(v))
        out.push_back(x.toInt());
    return out;
}

IValue Interp::callMethod(const Node *n) const
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
        at::ScalarType st = m == "float" ? at::kFloat
            : m == "double"              ? at::kDouble
            : m == "half"                ? at::kHalf
            : m == "long"                ? at::kLong
            : m == "int"                 ? at::kInt
            : m == "bfloat16"            ? at::kBFloat16
                                         : at::kBool;
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
IValue Interp::convert(const std::string &m, const at::Tensor &self, const std::vector<IValue> &pos,
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

/// The ops a graph runs most, compiled into unboxed plan steps when their arguments are plain.
Interp::Fast Interp::fastKind(const Node *n)
{
    // clang-format off
    static const std::unordered_map<std::string, Fast> fns = {
        {"torch.tanh", Fast::Tanh}, {"aten.tanh.default", Fast::Tanh}, {"torch.relu", Fast::Relu},
        {"torch.nn.functional.relu", Fast::Relu}, {"aten.relu.default", Fast::Relu}, {"torch.sigmoid", Fast::Sigmoid},
        {"aten.sigmoid.default", Fast::Sigmoid}, {"operator.add", Fast::Add}, {"torch.add", Fast::Add},
        {"aten.add.Tensor", Fast::Add}, {"operator.sub", Fast::Sub}, {"torch.sub", Fast::Sub}, {"aten.sub.Tensor", Fast::Sub},
        {"operator.mul", Fast::Mul}, {"torch.mul", Fast::Mul}, {"aten.mul.Tensor", Fast::Mul}, {"operator.truediv", Fast::Div},
        {"torch.div", Fast::Div}, {"aten.div.Tensor", Fast::Div}, {"torch.nn.functional.linear", Fast::Linear},
        {"torch.nn.functional.layer_norm", Fast::LayerNorm}, {"torch.cat", Fast::Cat}, {"aten.cat.default", Fast::Cat}};
    // clang-format on
    static const std::unordered_map<std::string, Fast> methods = {{"tanh", Fast::Tanh}, {"relu", Fast::Relu}, {"sigmoid", Fast::Sigmoid}};
    const auto &table = n->op() == OpKind::CallMethod ? methods : fns;
    auto it = table.find(n->target());
    return it == table.end() ? Fast::None : it->second;
}

IValue Interp::evalNode(const Node *n)
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

} // namespace fxlens::exec::detail
