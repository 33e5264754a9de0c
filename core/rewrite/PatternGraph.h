// SPDX-License-Identifier: MIT
// Patterns as data: a pattern graph (call nodes with op alternatives, wildcards, captures, literals,
// variadic lists, user counts and named constraints) interpreted by one matcher. The pattern
// language compiles text into exactly these graphs; built-in patterns are written with PatternBuilder.
#pragma once

#include "rewrite/Pattern.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fxlens::rewrite {

/// What a match bound: pattern nodes and captured values by name. Inside a ListOf, names that start
/// with '*' are bound once per element and collected, in list order, into `lists`.
struct Bindings {
    std::map<std::string, Node *> nodes;
    std::map<std::string, Argument> values;
    std::map<std::string, std::vector<Argument>> lists;
    std::vector<Node *> matched; ///< graph nodes bound to call pattern nodes, anchor first

    Node *node(const std::string &name) const;
    const Argument *value(const std::string &name) const;
    int64_t integer(const std::string &name, int64_t dflt = 0) const;
    const std::vector<Argument> &list(const std::string &name) const;
    /// The nodes of a per-element list (each element's node binding).
    std::vector<Node *> nodeList(const std::string &name) const;
};

/// One argument position of a pattern node.
struct PArg {
    enum class Kind : uint8_t {
        Any,     ///< anything (also absent)
        Capture, ///< anything, bound to `name`; the same name twice must bind equal values
        Literal, ///< equal to `literal` (ints and floats compare by value)
        Node,    ///< a node matching pattern node `node`
        List,    ///< a list/tuple whose items match `items` one to one
        ListOf,  ///< a non-empty list/tuple whose every item matches items[0]; `name` collects positions
    };
    Kind kind = Kind::Any;
    std::string name;
    Argument literal;
    int node = -1;
    std::vector<PArg> items;
    bool partial = false; ///< ListOf: items that do not match are tolerated (skipped)

    static PArg any() { return {}; }
    static PArg capture(std::string n);
    static PArg lit(Argument a);
    static PArg ref(int node);
    static PArg listOf(PArg elem, std::string name = {}, bool partial = false);
    static PArg listExact(std::vector<PArg> items);
    std::string toString(const std::vector<struct PNode> &nodes) const;
};

/// A pattern node: a call (ops non-empty) or a wildcard input (ops empty: any node).
struct PNode {
    std::string name; ///< binding name; "" = anonymous; '*' prefix = per ListOf element
    std::vector<std::pair<ir::OpKind, std::string>> ops;
    /// Arguments in schema order (see Schema.h); positions past the end are unconstrained.
    std::vector<PArg> args;
    int users = -1; ///< exact number of users (never checked on the anchor); -1: any
};

/// A named check on the bindings after the structure matched.
struct Constraint {
    std::string text; ///< shown in diagnostics ("dim(split) == dim(cat)")
    std::function<bool(const Bindings &, MatchFailure &)> check;
};

struct PatternGraph {
    std::vector<PNode> nodes;
    int root = -1; ///< the anchor: the last node of the pattern
    std::vector<Constraint> constraints;

    /// One line per node, for `fxlens-cli patterns --show` and the GUI.
    std::string toString() const;
};

/// Matches a pattern graph at `anchor`. On failure `why` names the pattern element, the graph node,
/// what was expected and what was found.
bool matchPatternGraph(const PatternGraph &pg, Node *anchor, Bindings &b, MatchFailure &why);

/// Builds pattern graphs in C++.
class PatternBuilder {
public:
    /// A wildcard input node.
    int input(std::string name);
    /// A call node with op alternatives given as "torch.cat", "method:split", "module:..." strings.
    int call(std::string name, std::vector<std::string> ops, std::vector<PArg> args, int users = -1);
    void constrain(std::string text, std::function<bool(const Bindings &, MatchFailure &)> check);
    PatternGraph build(int root);

private:
    PatternGraph m_g;
};

/// A pattern whose match is a pattern graph and whose rewrite is a function of the bindings.
class GraphPattern : public Pattern {
public:
    PatternGraph graph;
    std::function<std::string(const Bindings &)> summarize;
    std::function<void(const Bindings &, Rewriter &)> apply;

    /// Sets the anchors from the root node's ops.
    void deriveAnchors();
    bool match(Node *anchor, Match &m, MatchFailure &why) const override;
    void rewrite(const Match &m, Rewriter &rw) const override;
};

} // namespace fxlens::rewrite
