// SPDX-License-Identifier: MIT
// Argument construction, comparison and printing.
#include "ir/Argument.h"

#include "ir/Node.h"

#include <cmath>
#include <cstdio>

namespace fxlens::ir {

Argument Argument::boolean(bool v)
{
    Argument a;
    a.m_kind = Kind::Bool;
    a.m_int = v ? 1 : 0;
    return a;
}

Argument Argument::integer(int64_t v)
{
    Argument a;
    a.m_kind = Kind::Int;
    a.m_int = v;
    return a;
}

Argument Argument::real(double v)
{
    Argument a;
    a.m_kind = Kind::Float;
    a.m_float = v;
    return a;
}

Argument Argument::string(std::string v)
{
    Argument a;
    a.m_kind = Kind::String;
    a.m_text = std::move(v);
    return a;
}

Argument Argument::node(Node *n)
{
    Argument a;
    a.m_kind = Kind::NodeRef;
    a.m_node = n;
    return a;
}

Argument Argument::list(std::vector<Argument> items)
{
    Argument a;
    a.m_kind = Kind::List;
    a.m_items = std::move(items);
    return a;
}

Argument Argument::tuple(std::vector<Argument> items)
{
    Argument a;
    a.m_kind = Kind::Tuple;
    a.m_items = std::move(items);
    return a;
}

Argument Argument::dict(std::vector<std::pair<std::string, Argument>> items)
{
    Argument a;
    a.m_kind = Kind::Dict;
    a.m_entries = std::move(items);
    return a;
}

Argument Argument::slice(Argument start, Argument stop, Argument step)
{
    Argument a;
    a.m_kind = Kind::Slice;
    a.m_items = {std::move(start), std::move(stop), std::move(step)};
    return a;
}

Argument Argument::tagged(Kind kind, std::string text)
{
    Argument a;
    a.m_kind = kind;
    a.m_text = std::move(text);
    return a;
}

const Argument *Argument::get(const std::string &key) const
{
    for (const auto &e : m_entries)
        if (e.first == key)
            return &e.second;
    return nullptr;
}

int Argument::replaceNode(const Node *from, Node *to)
{
    if (m_kind == Kind::NodeRef) {
        if (m_node == from) {
            m_node = to;
            return 1;
        }
        return 0;
    }
    int n = 0;
    for (auto &a : m_items)
        n += a.replaceNode(from, to);
    for (auto &e : m_entries)
        n += e.second.replaceNode(from, to);
    return n;
}

bool Argument::operator==(const Argument &o) const
{
    if (m_kind != o.m_kind)
        return false;
    switch (m_kind) {
    case Kind::None: return true;
    case Kind::Bool:
    case Kind::Int: return m_int == o.m_int;
    case Kind::Float: return m_float == o.m_float || (std::isnan(m_float) && std::isnan(o.m_float));
    case Kind::NodeRef: return m_node == o.m_node;
    case Kind::List:
    case Kind::Tuple:
    case Kind::Slice: return m_items == o.m_items;
    case Kind::Dict: return m_entries == o.m_entries;
    default: return m_text == o.m_text;
    }
}

const char *Argument::kindName(Kind k)
{
    switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::NodeRef: return "node";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
    case Kind::Slice: return "slice";
    case Kind::Dtype: return "dtype";
    case Kind::Device: return "device";
    case Kind::Layout: return "layout";
    case Kind::MemoryFormat: return "memory_format";
    case Kind::Opaque: return "opaque";
    }
    return "?";
}

static std::string formatFloat(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    // Shortest text that reads back to the same double, with a '.' so it stays a float.
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v)
            break;
    }
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos)
        s += ".0";
    return s;
}

static std::string quote(const std::string &s)
{
    std::string out = "'";
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\'' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        if (u < 0x20 || u == 0x7f) { // every other control character escaped too (\r ends a line in Python)
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
            continue;
        }
        out += c;
    }
    return out + "'";
}

Argument Argument::withNodeReplaced(const Node *from, Node *to) const
{
    if (isNode())
        return m_node == from ? Argument::node(to) : *this;
    if (isSequence()) {
        std::vector<Argument> items;
        for (const auto &x : m_items)
            items.push_back(x.withNodeReplaced(from, to));
        return m_kind == Kind::List ? Argument::list(std::move(items)) : Argument::tuple(std::move(items));
    }
    return *this;
}

std::string Argument::toString() const { return render(false); }

std::string Argument::toPython() const { return render(true); }

std::string Argument::render(bool python) const
{
    switch (m_kind) {
    case Kind::None: return "None";
    case Kind::Bool: return m_int ? "True" : "False";
    case Kind::Int: return std::to_string(m_int);
    case Kind::Float: {
        std::string f = formatFloat(m_float);
        if (python && (std::isnan(m_float) || std::isinf(m_float)))
            return "float('" + f + "')";
        return f;
    }
    case Kind::String: return quote(m_text);
    case Kind::NodeRef: return (python ? "" : "%") + (m_node ? m_node->name() : std::string("<null>"));
    case Kind::List:
    case Kind::Tuple: {
        std::string s = m_kind == Kind::List ? "[" : "(";
        for (size_t i = 0; i < m_items.size(); ++i) {
            if (i)
                s += ", ";
            s += m_items[i].render(python);
        }
        if (m_kind == Kind::Tuple && m_items.size() == 1)
            s += ",";
        return s + (m_kind == Kind::List ? "]" : ")");
    }
    case Kind::Dict: {
        std::string s = "{";
        for (size_t i = 0; i < m_entries.size(); ++i) {
            if (i)
                s += ", ";
            s += quote(m_entries[i].first) + ": " + m_entries[i].second.render(python);
        }
        return s + "}";
    }
    case Kind::Slice:
        return "slice(" + m_items[0].render(python) + ", " + m_items[1].render(python) + ", " + m_items[2].render(python) + ")";
    case Kind::Dtype: return "torch." + m_text;
    case Kind::Device: return (python ? "torch.device(" : "device(") + quote(m_text) + ")";
    case Kind::Layout:
    case Kind::MemoryFormat: return "torch." + m_text;
    case Kind::Opaque:
        if (python && m_text == "Ellipsis")
            return "...";
        return python ? m_text : "<" + m_text + ">";
    }
    return "?";
}

} // namespace fxlens::ir
