// SPDX-License-Identifier: MIT
// Graph: owns nodes in program order and keeps the use lists current (mirrors torch.fx.Graph).
#pragma once

#include "ir/Node.h"

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fxlens::ir {

/// A submodule of the exported model (the module hierarchy).
struct ModuleInfo {
    std::string path; ///< "" is the root
    std::string type; ///< qualified class name
    /// The module's constants (torch.nn's __constants__: stride, padding, eps, ...), for executing
    /// call_module nodes. Empty when the exporter did not see the module object.
    std::vector<std::pair<std::string, Argument>> attrs;
    bool operator==(const ModuleInfo &o) const { return path == o.path && type == o.type && attrs == o.attrs; }
    const Argument *attr(const std::string &k) const
    {
        for (const auto &kv : attrs)
            if (kv.first == k)
                return &kv.second;
        return nullptr;
    }
};

/// A parameter or buffer of the exported model: name, shape and dtype (values live in a side file).
struct ParamInfo {
    std::string name;
    bool isBuffer = false;
    std::vector<int64_t> shape;
    std::string dtype;
    bool requiresGrad = false;
    bool operator==(const ParamInfo &o) const
    {
        return name == o.name && isBuffer == o.isBuffer && shape == o.shape && dtype == o.dtype && requiresGrad == o.requiresGrad;
    }
};

/// A rewrite session recorded with the graph: the "session" key of a trace file (docs/FORMAT.md), as
/// the Python companion's torch.compile backend writes it. The graph is the original; `steps` are the
/// engine's history on it (Session::history(): pattern and anchor of each applied step, in order).
/// Read from a file, never written back: a saved graph is a plain graph.
struct RecordedSession {
    struct Step {
        std::string pattern;
        std::string anchor; ///< the anchor node's name in the version the step was applied to
    };
    std::string json;                      ///< the "session" object as read (compact JSON, unknown keys included)
    std::string tool;                      ///< who recorded it ("fxlens.backend")
    std::string preset = "all";            ///< the preset of the run
    std::string patterns;                  ///< comma-separated pattern names the run chose instead, "" for none
    std::vector<std::string> patternPaths; ///< user pattern files or directories the run loaded besides the built-ins
    std::vector<Step> steps;
    /// "recorded by fxlens.backend: preset all, 12 steps, 1 pattern path" (`fxlens-cli info`).
    std::string summary() const;
};

/// One problem found by lint(); `node` names the offending node ("" for graph-level problems).
struct LintError {
    std::string node;
    std::string message;
    std::string toString() const { return node.empty() ? message : "node '" + node + "': " + message; }
};

/// Receives every structural edit of a Graph (the rewriter's and the debugger's hook).
class GraphObserver {
public:
    virtual ~GraphObserver() = default;
    virtual void notifyNodeInserted(Node *) {}
    /// Called before the node is unlinked.
    virtual void notifyNodeErased(Node *) {}
    /// Called after args/kwargs of `n` changed; `oldInputs` were its inputs before.
    virtual void notifyNodeChanged(Node *) {}
};

class Graph {
public:
    Graph();
    ~Graph();
    Graph(const Graph &) = delete;
    Graph &operator=(const Graph &) = delete;

    /// A deep copy (names, order, args, meta and module/param info preserved).
    std::unique_ptr<Graph> clone() const;

    // --- Graph-level info from the exporter ---
    std::string name;        ///< model name
    std::string irLevel;     ///< "torch" or "aten"
    std::string source;      ///< "symbolic_trace", "dynamo", "export", ...
    std::string weightsFile; ///< optional side file with parameter values (safetensors), relative to the graph file
    /// Optional side file with the example inputs the exporter saw (safetensors, "input:<i>"), relative to the graph file.
    std::string inputsFile;
    /// Optional fold graph of a frozen graph (optimize --freeze), relative to the graph file: it
    /// computes the `_frozen_*` weights from the original ones, so an original checkpoint still loads.
    std::string foldFile;
    std::string sourcePath; ///< the file this graph was read from ("" if built in memory); not written
    /// The rewrite session the file recorded on this graph (its "session" key), nullptr when none; not written.
    std::shared_ptr<const RecordedSession> session;
    std::vector<ModuleInfo> modules;
    std::vector<ParamInfo> params;

    // --- Iteration ---
    Node *first() const { return m_head; }
    Node *last() const { return m_tail; }
    size_t size() const { return m_size; }
    /// Live nodes in program order.
    std::vector<Node *> nodes() const;
    Node *find(const std::string &name) const;
    /// The module of a call_module target (nullptr when the graph lists none of that path). Indexed
    /// on first use and again whenever `modules` was resized or reallocated (an entry's path edited in
    /// place is not noticed: replace the list instead).
    const ModuleInfo *module(const std::string &path) const;
    /// Upper bound (exclusive) of Node::id() values ever handed out.
    uint32_t idBound() const { return uint32_t(m_arena.size()); }
    /// Node by id, erased ones included (nullptr if never created).
    Node *byId(uint32_t id) const { return id < m_arena.size() ? m_arena[id].get() : nullptr; }
    Node *outputNode() const;
    /// Changes with every edit (nodes, order, args, targets, names) and is unique across all graphs
    /// of the process: a cache keyed by (graph, revision) is never stale (the executor's compiled
    /// plans). Meta and graph-level fields (modules, params) do not count.
    uint64_t revision() const { return m_revision; }

    // --- Edits (all keep users current and notify observers) ---
    /// Creates a node before `before` (at the end when nullptr). `name` is made unique if taken
    /// (suffix _1, _2, ... as torch.fx does).
    Node *create(OpKind op, std::string target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs,
                 std::string name, Node *before = nullptr);
    void setArgs(Node *n, std::vector<Argument> args);
    void setKwargs(Node *n, std::vector<std::pair<std::string, Argument>> kwargs);
    /// Sets args and kwargs together: one use-list update, one notification.
    void setInputs(Node *n, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs);
    void setTarget(Node *n, std::string target);
    /// Replaces every use of `from` by `to` (in every user's args/kwargs); returns the users touched.
    std::vector<Node *> replaceAllUsesWith(Node *from, Node *to);
    /// Replaces uses of `from` by `to` only in the given user.
    void replaceUse(Node *user, Node *from, Node *to);
    /// Removes a node that has no users. It stays in memory (id and pointer valid) so that
    /// restore() can bring it back; returns false (and does nothing) if it still has users.
    bool erase(Node *n);
    /// Re-links an erased node before `before` (nullptr = at the end), re-registering its uses.
    void restore(Node *n, Node *before);
    /// Moves `n` so it comes right before `before` (nullptr = at the end).
    void moveBefore(Node *n, Node *before);
    /// Renames a node (must be unique); false if the name is taken.
    bool rename(Node *n, const std::string &name);
    /// A fresh unique name based on `base`.
    std::string uniqueName(const std::string &base) const;

    /// True if `a` comes before `b` in program order.
    bool before(const Node *a, const Node *b) const;
    /// Recomputes Node::order() for all nodes.
    void renumber() const;

    /// Reorders nodes into a topological order that keeps the current order where it is valid
    /// (stable; the order torch.fx's stable_topological_sort gives). False if there is a cycle.
    bool topologicalSort();

    /// torch.fx Graph.lint(): references owned by this graph and live, defined before use,
    /// unique names, exactly one output that is last, user lists consistent.
    std::vector<LintError> lint() const;
    /// lint() of these nodes only (edges to their inputs and users in both directions, order,
    /// ownership, names, getitem ranges): what checked mode runs after each rewrite step, in time
    /// proportional to the step instead of the graph.
    std::vector<LintError> lintNodes(const std::vector<const Node *> &nodes) const;

    void addObserver(GraphObserver *o);
    void removeObserver(GraphObserver *o);

private:
    mutable std::unordered_map<std::string, size_t> m_moduleIndex;
    mutable const ModuleInfo *m_moduleIndexed = nullptr;
    mutable size_t m_moduleCount = 0;
    void linkBefore(Node *n, Node *before);
    void unlink(Node *n);
    void addUses(Node *n, bool fresh = false);
    void removeUses(Node *n);
    static void removeUser(Node *input, Node *user);
    void touch();

    std::vector<std::unique_ptr<Node>> m_arena;
    std::unordered_map<std::string, Node *> m_byName;
    /// uniqueName(): the next suffix to try per stem (a hint; names may also be taken by rename()).
    mutable std::unordered_map<std::string, size_t> m_nextSuffix;
    std::vector<GraphObserver *> m_observers;
    Node *m_head = nullptr;
    Node *m_tail = nullptr;
    size_t m_size = 0;
    mutable bool m_orderValid = false;
    uint64_t m_revision = 0;
};

} // namespace fxlens::ir
