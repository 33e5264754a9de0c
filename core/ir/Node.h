// SPDX-License-Identifier: MIT
// Node: one operation of an FX graph (mirrors torch.fx.Node).
#pragma once

#include "ir/Argument.h"
#include "ir/Meta.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fxlens::ir {

class Graph;

/// The six FX op kinds.
enum class OpKind : uint8_t {
    Placeholder,  ///< a graph input; target is the argument name
    GetAttr,      ///< fetches a parameter/buffer/attribute; target is its qualified name
    CallFunction, ///< calls a free function; target is its qualified name ("torch.cat", "aten.cat.default")
    CallMethod,   ///< calls a method on args[0]; target is the method name ("split")
    CallModule,   ///< calls a submodule's forward; target is the module path ("blocks.0.linear")
    Output,       ///< the graph's return value, in args[0]
};

const char *opKindName(OpKind k);
/// Parses an op kind name; false when unknown.
bool parseOpKind(const std::string &s, OpKind &out);

/// A node owns its args/kwargs and meta. The Graph owns nodes, keeps them in a doubly linked list in
/// program order, and keeps every node's user list current on every edit (args may only be changed
/// through Graph::setArgs / setKwargs / replaceAllUsesWith so that users stay right).
class Node {
public:
    const std::string &name() const { return m_name; }
    OpKind op() const { return m_op; }
    const std::string &target() const { return m_target; }
    const std::vector<Argument> &args() const { return m_args; }
    const std::vector<std::pair<std::string, Argument>> &kwargs() const { return m_kwargs; }
    const Argument *kwarg(const std::string &key) const;
    /// args[i] if present, else kwargs[key], else nullptr (the torch calling convention).
    const Argument *arg(size_t i, const std::string &key) const;
    /// Users in insertion order, each once.
    const std::vector<Node *> &users() const { return m_users; }
    Meta &meta() { return m_meta; }
    const Meta &meta() const { return m_meta; }

    Node *next() const { return m_next; }
    Node *prev() const { return m_prev; }
    Graph *graph() const { return m_graph; }
    /// Stable id, unique in the graph, never reused (index into per-node side tables).
    uint32_t id() const { return m_id; }
    bool isErased() const { return m_erased; }

    /// Nodes this node reads, in argument order, each once.
    std::vector<Node *> inputNodes() const;
    /// Position in program order; valid after Graph::renumber() (done lazily by Graph::before()).
    uint64_t order() const { return m_order; }

    bool is(OpKind op, const std::string &target) const { return m_op == op && m_target == target; }

private:
    friend class Graph;
    Node() = default;

    std::string m_name;
    OpKind m_op = OpKind::CallFunction;
    std::string m_target;
    std::vector<Argument> m_args;
    std::vector<std::pair<std::string, Argument>> m_kwargs;
    std::vector<Node *> m_users;
    Meta m_meta;
    Graph *m_graph = nullptr;
    Node *m_prev = nullptr;
    Node *m_next = nullptr;
    uint32_t m_id = 0;
    uint64_t m_order = 0;
    bool m_erased = false;
};

} // namespace fxlens::ir
