// SPDX-License-Identifier: MIT
#include "exec/Plan.h"

#include "ir/Target.h"
#include "rewrite/Mutation.h"

namespace fxlens::exec::detail {

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
bool droppedKeyword(const std::string &k, const Argument &) { return k[0] == '_' || k == "inplace"; }

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

/// A Fast step when the op's arguments are plain nodes (and LayerNorm's shape, Cat's dim constants).
void specializeFast(Step &s, const Node *n, Interp::Fast f)
{
    const auto &args = n->args();
    auto node = [&](size_t i) { return i < args.size() && args[i].isNode() ? args[i].toNode()->id() : kNoNode; };
    using F = Interp::Fast;
    for (const auto &kv : n->kwargs())
        if (!(f == F::Cat && kv.first == "dim" && kv.second.isInt()) &&
            !(kv.first == "inplace" && kv.second.isBool() && !kv.second.toBool()))
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

/// A Split step: split(x, size or sections, dim) with constant sizes.
void specializeSplit(Step &s, const Node *n)
{
    const auto &args = n->args();
    const std::string &t = n->target();
    auto node = [&](size_t i) { return i < args.size() && args[i].isNode() ? args[i].toNode()->id() : kNoNode; };
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
        specializeFast(s, n, f);
        return;
    }
    const bool method = n->op() == OpKind::CallMethod;
    const bool fn = n->op() == OpKind::CallFunction;
    if ((fn && (t == "torch.split" || t == "torch.functional.split" || t == "aten.split.Tensor" || t == "aten.split_with_sizes.default")) ||
        (method && t == "split")) {
        specializeSplit(s, n);
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
    static const char *const reshaped[] = {"torch.split",
                                           "torch.functional.split",
                                           "torch.nn.functional.batch_norm",
                                           "torch.nn.functional.embedding",
                                           "torch.nn.functional.dropout",
                                           "torch.nn.functional.dropout1d",
                                           "torch.nn.functional.dropout2d",
                                           "torch.nn.functional.max_pool2d"};
    if (fn && t.rfind("aten.", 0) == 0) {
        s.boxable = true;
    } else if (fn && t.rfind("torch.", 0) == 0) {
        s.boxable = ir::Target::parse(t).name != "einsum";
        for (const char *r : reshaped)
            s.boxable = s.boxable && t != r;
    } else if (method) {
        static const char *const special[] = {"size", "dim", "numel", "float", "double", "half", "long", "int", "bool"};
        s.boxable = true;
        for (const char *r : special)
            s.boxable = s.boxable && t != r;
    }
}

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

namespace {

const at::Tensor *tensorIn(const std::vector<IValue> &env, uint32_t id)
{
    const IValue &v = env[id];
    return v.isTensor() ? &v.toTensor() : nullptr;
}

bool tensorsIn(const std::vector<IValue> &env, const std::vector<uint32_t> &ids, std::vector<at::Tensor> &ts)
{
    ts.reserve(ids.size());
    for (uint32_t id : ids) {
        const at::Tensor *t = tensorIn(env, id);
        if (!t)
            return false;
        ts.push_back(*t);
    }
    return true;
}

/// An unboxed call of the common ops (Step::Kind::Fast).
bool runFast(const Step &s, const std::vector<IValue> &env, IValue &out)
{
    using F = Interp::Fast;
    auto tensor = [&](uint32_t id) { return tensorIn(env, id); };
    auto tensorList = [&](std::vector<at::Tensor> &ts) { return tensorsIn(env, s.list, ts); };
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
        out = IValue(s.fast == F::Add       ? at::add(*a, *b)
                         : s.fast == F::Sub ? at::sub(*a, *b)
                         : s.fast == F::Mul ? at::mul(*a, *b)
                                            : at::div(*a, *b));
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

/// A resolved overload called boxed, its stack filled from the step's argument sources.
bool runBoxed(Plan &p, const Step &s, const Interp &it, IValue &out)
{
    std::vector<IValue> &env = p.env;
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

} // namespace

bool runStep(Plan &p, const Step &s, const Interp &it)
{
    const std::vector<at::Tensor> &inputs = it.inputs;
    std::vector<IValue> &env = p.env;
    auto tensor = [&](uint32_t id) { return tensorIn(env, id); };
    auto tensorList = [&](std::vector<at::Tensor> &ts) { return tensorsIn(env, s.list, ts); };
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
    case Step::Kind::Fast: return runFast(s, env, out);
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
    case Step::Kind::Boxed: return runBoxed(p, s, it, out);
    case Step::Kind::Generic: break;
    }
    return false;
}
} // namespace fxlens::exec::detail
