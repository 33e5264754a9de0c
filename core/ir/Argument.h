// SPDX-License-Identifier: MIT
// Argument: the typed tree that holds a node's args and kwargs (mirrors torch.fx argument values).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fxlens::ir {

class Node;

/// One value in a node's args/kwargs: a scalar, a reference to another node, or a nested container.
/// Containers own their children. Node references are raw pointers owned by the Graph.
class Argument {
public:
    enum class Kind : uint8_t {
        None,
        Bool,
        Int,
        Float,
        String,
        NodeRef,
        List,
        Tuple,
        Dict,
        Slice,        ///< items: start, stop, step (each may be None)
        Dtype,        ///< text: "float32", "int64", ...
        Device,       ///< text: "cpu", "cuda:0"
        Layout,       ///< text: "strided", ...
        MemoryFormat, ///< text: "contiguous_format", "channels_last", ...
        Opaque,       ///< text: repr() of a Python object fxlens does not model
    };

    Argument() = default;
    static Argument none() { return {}; }
    static Argument boolean(bool v);
    static Argument integer(int64_t v);
    static Argument real(double v);
    static Argument string(std::string v);
    static Argument node(Node *n);
    static Argument list(std::vector<Argument> items);
    static Argument tuple(std::vector<Argument> items);
    static Argument dict(std::vector<std::pair<std::string, Argument>> items);
    static Argument slice(Argument start, Argument stop, Argument step);
    static Argument tagged(Kind kind, std::string text); ///< Dtype, Device, Layout, MemoryFormat, Opaque
    /// This argument with every reference to `from` (also inside lists and tuples) replaced by `to`.
    Argument withNodeReplaced(const Node *from, Node *to) const;

    Kind kind() const { return m_kind; }
    bool isNone() const { return m_kind == Kind::None; }
    bool isNode() const { return m_kind == Kind::NodeRef; }
    bool isInt() const { return m_kind == Kind::Int; }
    bool isFloat() const { return m_kind == Kind::Float; }
    bool isBool() const { return m_kind == Kind::Bool; }
    bool isString() const { return m_kind == Kind::String; }
    bool isSequence() const { return m_kind == Kind::List || m_kind == Kind::Tuple; }

    bool toBool() const { return m_int != 0; }
    int64_t toInt() const { return m_int; }
    double toFloat() const { return m_kind == Kind::Int ? double(m_int) : m_float; }
    const std::string &text() const { return m_text; }
    Node *toNode() const { return m_node; }
    const std::vector<Argument> &items() const { return m_items; }
    std::vector<Argument> &items() { return m_items; }
    const std::vector<std::pair<std::string, Argument>> &entries() const { return m_entries; }
    std::vector<std::pair<std::string, Argument>> &entries() { return m_entries; }

    /// Dict lookup; nullptr when absent or not a dict.
    const Argument *get(const std::string &key) const;

    /// Calls f(Node*) for every node reference in this tree, depth first, left to right.
    template <typename F> void forEachNode(F &&f) const
    {
        if (m_kind == Kind::NodeRef) {
            f(m_node);
            return;
        }
        for (const auto &a : m_items)
            a.forEachNode(f);
        for (const auto &e : m_entries)
            e.second.forEachNode(f);
    }
    /// Replaces every reference to `from` by `to`; returns how many were replaced.
    int replaceNode(const Node *from, Node *to);

    /// Structural equality; node references compare by identity.
    bool operator==(const Argument &o) const;
    bool operator!=(const Argument &o) const { return !(*this == o); }

    /// Python-like text: %name for nodes, [..] lists, (..,) tuples, {'k': v} dicts, torch.float32 dtypes.
    std::string toString() const;
    /// A Python expression for the value: node references by name, torch.device(...), float('inf'),
    /// `...` for Ellipsis (opaque values as their repr).
    std::string toPython() const;

    static const char *kindName(Kind k);

private:
    std::string render(bool python) const;
    Kind m_kind = Kind::None;
    int64_t m_int = 0;
    double m_float = 0.0;
    Node *m_node = nullptr;
    std::string m_text;
    std::vector<Argument> m_items;
    std::vector<std::pair<std::string, Argument>> m_entries;
};

} // namespace fxlens::ir
