// SPDX-License-Identifier: MIT
// Rewriter: the only way a pattern changes a graph. Every edit is recorded (for undo/redo) and
// reported to listeners; new nodes get provenance (pattern + step).
#pragma once

#include "ir/Graph.h"

#include <memory>
#include <string>
#include <vector>

namespace fxlens::rewrite {

using ir::Argument;
using ir::Graph;
using ir::Node;

/// One reversible edit. Erased nodes stay alive in the graph's arena, so pointers stay valid.
struct Edit {
    enum class Kind { Insert, Erase, SetInputs, Move };
    Kind kind;
    Node *node;
    Node *before = nullptr; ///< Insert/Erase/Move: the node that followed `node` before the edit (nullptr = end)
    std::vector<Argument> oldArgs, newArgs;
    std::vector<std::pair<std::string, Argument>> oldKwargs, newKwargs;
    Node *movedBefore = nullptr; ///< Move: the node `node` was moved in front of (nullptr = end)
};

struct MatchFailure;

/// Observes what the engine does (the debugger's event log, the CLI trace, tests). Every attempt of
/// a pattern at an anchor is bracketed by notifyPatternBegin / notifyPatternEnd; in between come
/// notifyMatchFailure (with the structured reason) or notifyMatchFound, then the edits of the
/// rewrite and, when its check refuses it, notifyRolledBack (the edits are undone before End).
class RewriteListener {
public:
    virtual ~RewriteListener() = default;
    virtual void notifyPatternBegin(const std::string & /*pattern*/, Node * /*anchor*/) {}
    virtual void notifyPatternEnd(const std::string & /*pattern*/, bool /*applied*/) {}
    virtual void notifyMatchFailure(const std::string & /*pattern*/, Node * /*anchor*/, const MatchFailure & /*why*/) {}
    virtual void notifyMatchFound(const struct Match & /*match*/) {}
    virtual void notifyNodeInserted(Node *) {}
    virtual void notifyNodeErased(Node *) {}
    virtual void notifyNodeReplaced(Node * /*from*/, Node * /*to*/) {}
    /// A node's inputs changed in place (setInputs, or a use replaced by replaceAllUsesWith).
    virtual void notifyNodeModified(Node *) {}
    /// A step's edits were undone because its check failed; `reason` says which check.
    virtual void notifyRolledBack(const std::string & /*pattern*/, Node * /*anchor*/, const std::string & /*reason*/) {}
    /// The session moved one version back (undo) or forward (redo); `version` is the new one.
    virtual void notifyUndone(size_t /*version*/) {}
    virtual void notifyRedone(size_t /*version*/) {}
};

class Rewriter {
public:
    explicit Rewriter(Graph &g) : m_g(g) {}

    Graph &graph() { return m_g; }
    void setListeners(std::vector<RewriteListener *> l) { m_listeners = std::move(l); }
    /// Pattern and step stamped on new nodes' provenance.
    void setContext(std::string pattern, int64_t step)
    {
        m_pattern = std::move(pattern);
        m_step = step;
    }

    /// Creates a node before `before`; meta.moduleStack/stackTrace are copied from `like` (if given)
    /// and provenance is set. A node that replaces nodes of several sibling modules (the same op of
    /// blocks.0 … blocks.49) gets their range as its module ("blocks.0–49": ir::rangeModuleStack).
    Node *create(ir::OpKind op, std::string target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs,
                 const std::string &name, Node *before, const Node *like = nullptr, std::vector<std::string> replaced = {});
    void setInputs(Node *n, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs);
    /// Replaces every use of `from` by `to` (users' edits are recorded one by one).
    void replaceAllUsesWith(Node *from, Node *to);
    /// Many replacements at once: each user is edited (and recorded) once, however many of the
    /// replaced nodes it reads (a cat of N fused outputs: one edit, not N).
    void replaceAllUsesWith(const std::vector<std::pair<Node *, Node *>> &pairs);
    /// Erases a node without users.
    bool erase(Node *n);
    /// Moves a node in program order (the caller keeps the order topological).
    void moveBefore(Node *n, Node *before);
    /// Erases `n` if unused, then its inputs that became unused (a small dead-code sweep).
    void eraseIfDead(Node *n);

    /// Edits since the last takeEdits().
    std::vector<Edit> takeEdits() { return std::move(m_edits); }
    const std::vector<Edit> &edits() const { return m_edits; }
    bool changed() const { return !m_edits.empty(); }
    /// Nodes created or whose inputs changed, plus inputs of erased nodes: what the driver re-visits.
    std::vector<Node *> takeTouched() { return std::move(m_touched); }

    /// A rewrite that cannot complete reports why (instead of throwing): the driver rolls the step
    /// back and names the reason.
    void fail(std::string reason)
    {
        if (m_failure.empty())
            m_failure = std::move(reason);
    }
    const std::string &failure() const { return m_failure; }

    /// Reverts edits (last first) / re-applies them (first first).
    static void undo(Graph &g, const std::vector<Edit> &edits);
    static void redo(Graph &g, const std::vector<Edit> &edits);

private:
    Graph &m_g;
    std::vector<RewriteListener *> m_listeners;
    std::vector<Edit> m_edits;
    std::vector<Node *> m_touched;
    std::string m_pattern;
    int64_t m_step = -1;
    std::string m_failure;
};

} // namespace fxlens::rewrite
