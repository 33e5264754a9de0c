// SPDX-License-Identifier: MIT
// Values of constraint and replacement expressions, and their conversion to graph arguments.
#include "lang/LangInternal.h"

namespace fxlens::lang::detail {

Value fromArg(const Argument &a)
{
    Value v;
    if (a.isNone())
        return v;
    if (a.isNode())
        return Value::ofNode(a.toNode());
    if (a.isBool())
        return Value::boolean(a.toBool());
    if (a.isInt())
        return Value::integer(a.toInt());
    if (a.isFloat()) {
        v.k = Value::K::Float;
        v.f = a.toFloat();
        return v;
    }
    if (a.isSequence()) {
        v.k = Value::K::List;
        for (const auto &x : a.items())
            v.list.push_back(fromArg(x));
        return v;
    }
    v.k = Value::K::Str;
    v.s = a.isString() ? a.text() : a.toString();
    return v;
}

Argument toArg(const Value &v)
{
    switch (v.k) {
    case Value::K::None: return Argument::none();
    case Value::K::Bool: return Argument::boolean(v.i != 0);
    case Value::K::Int: return Argument::integer(v.i);
    case Value::K::Float: return Argument::real(v.f);
    case Value::K::Str: return Argument::string(v.s);
    case Value::K::Node: return Argument::node(v.node);
    case Value::K::List: {
        std::vector<Argument> items;
        for (const auto &x : v.list)
            items.push_back(toArg(x));
        return Argument::list(std::move(items));
    }
    }
    return Argument::none();
}

bool truthy(const Value &v)
{
    switch (v.k) {
    case Value::K::None: return false;
    case Value::K::Bool:
    case Value::K::Int: return v.i != 0;
    case Value::K::Float: return v.f != 0;
    case Value::K::Str: return !v.s.empty();
    case Value::K::List: return !v.list.empty();
    case Value::K::Node: return true;
    }
    return false;
}

bool equal(const Value &a, const Value &b)
{
    if (a.isNum() && b.isNum())
        return a.num() == b.num();
    if (a.k != b.k)
        return false;
    switch (a.k) {
    case Value::K::None: return true;
    case Value::K::Str: return a.s == b.s;
    case Value::K::Node: return a.node == b.node;
    case Value::K::List:
        if (a.list.size() != b.list.size())
            return false;
        for (size_t j = 0; j < a.list.size(); ++j)
            if (!equal(a.list[j], b.list[j]))
                return false;
        return true;
    default: return false;
    }
}

} // namespace fxlens::lang::detail
