// SPDX-License-Identifier: MIT
// Clean-up patterns that every preset brings (label "cleanup"):
//  - dead_code: a call whose value nobody uses and that has no side effect is erased (exporters leave
//    dead compute behind, and horizontal fusion must never batch it back to life);
//  - functionalize_inplace: an in-place call whose target nobody else reads afterwards becomes its
//    functional twin (relu(x, inplace=True), x.add_(y), operator.iadd), so that the rest of the engine,
//    which refuses to match across mutated values, sees plain dataflow.
#include "PatternUtil.h"

#include "ir/Target.h"
#include "rewrite/Mutation.h"
#include "rewrite/Schema.h"

#include <unordered_set>

namespace fxlens::patterns {

namespace {

class DeadCode : public Pattern {
public:
    DeadCode()
    {
        name = "dead_code";
        anchors = {{OpKind::CallFunction, ""}, {OpKind::CallMethod, ""}, {OpKind::CallModule, ""}, {OpKind::GetAttr, ""}};
        labels = {"cleanup"};
        mutationAware = true; // erasing a dead reader of a mutated value is always safe
        description = "a call whose value is unused and that has no side effect (no in-place write, assert, print, "
                      "RNG seeding, profiler range) is erased";
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        if (!n->users().empty())
            return fail(why, n, "users", "none", std::to_string(n->users().size()));
        if (hasSideEffects(n))
            return fail(why, n, "target", "a call without side effects", n->target());
        m.nodes = {n};
        m.removes = {n};
        m.summary = "erase unused " + n->name();
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override { rw.eraseIfDead(m.anchor); }
};

/// The functional spelling of an in-place target, or "" when there is none that means the same.
std::string functionalTarget(const Node *n)
{
    const std::string &t = n->target();
    if (t.rfind("operator.i", 0) == 0) {
        const ir::AugmentedAssign *a = ir::augmentedAssign(t);
        return a && !a->functional.empty() ? "operator." + std::string(a->functional) : std::string();
    }
    // Calls whose in-place form has no functional twin with the same meaning.
    static const std::unordered_set<std::string> none = {
        "copy_",      "zero_",    "fill_",      "set_",       "resize_",      "resize_as_",   "requires_grad_", "share_memory_",
        "uniform_",   "normal_",  "random_",    "bernoulli_", "exponential_", "geometric_",   "cauchy_",        "log_normal_",
        "detach_",    "squeeze_", "unsqueeze_", "transpose_", "t_",           "as_strided_",  "swapdims_",      "swapaxes_",
        "index_put_", "put_",     "map_",       "apply_",     "retain_grad",  "record_stream"};
    if (n->op() == OpKind::CallMethod) {
        if (!ir::isInplaceName(t) || none.count(t))
            return {};
        return std::string(ir::inplaceBase(t));
    }
    if (const ir::Target p = ir::Target::parse(t); p.isAten()) {
        // aten.add_.Tensor -> aten.add.Tensor
        const std::string base(p.name);
        if (base.empty() || base.back() != '_' || none.count(base))
            return {};
        return "aten." + base.substr(0, base.size() - 1) + (p.overload.empty() ? "" : "." + std::string(p.overload));
    }
    return {};
}

class FunctionalizeInplace : public Pattern {
public:
    FunctionalizeInplace()
    {
        name = "functionalize_inplace";
        anchors = {{OpKind::CallFunction, ""}, {OpKind::CallMethod, ""}};
        labels = {"cleanup"};
        mutationAware = true;
        description = "y = f_(x) (inplace=True, x.add_(..), operator.iadd) on a fresh value x -> y = f(x); readers of x after "
                      "the write read y";
    }
    /// How the call is made functional: a new target, or the inplace flag cleared (kwarg or position).
    struct Plan {
        std::string target;
        bool clearKwarg = false;
        int clearPos = -1;
    };
    static bool plan(const Node *n, Plan &p)
    {
        if (const Argument *k = n->kwarg("inplace"); k && k->isBool() && k->toBool()) {
            p.clearKwarg = true;
            return true;
        }
        if (n->op() == OpKind::CallFunction && ir::Target::parse(n->target()).isNnFunctional()) {
            for (size_t i = 1; i < n->args().size(); ++i)
                if (n->args()[i].isBool() && n->args()[i].toBool()) {
                    // Only the trailing positional bool is the inplace flag (dropout's `training` precedes it).
                    if (i + 1 == n->args().size()) {
                        p.clearPos = int(i);
                        return mutatesInput(n);
                    }
                }
            return false;
        }
        p.target = functionalTarget(n);
        return !p.target.empty();
    }
    bool match(Node *n, Match &m, MatchFailure &why) const override
    {
        if (!mutatesInput(n))
            return fail(why, n, "call", "an in-place call", n->target());
        Plan p;
        if (!plan(n, p))
            return fail(why, n, "call", "an in-place call with a functional twin", n->target());
        Node *x = firstInput(n);
        if (!x)
            return fail(why, n, "input", "a tensor written in place", "none");
        if (x->op() == OpKind::Placeholder || x->op() == OpKind::GetAttr)
            return fail(why, x, "written value", "a value computed in the graph", "a graph input or parameter");
        if (mayAliasInput(x) || !x->meta().val.isTensor())
            return fail(why, x, "written value", "a fresh tensor (not a view of another)", x->target());
        // Readers before the write read the old value and must not keep a view of it (a view read
        // after the write would see the new one); readers after it read the new value: y.
        Graph &g = *n->graph();
        for (Node *u : x->users()) {
            if (u == n || !g.before(u, n))
                continue;
            if (mayAliasInput(u) || mutatesInput(u))
                return fail(why, u, "other reader", "read before the write, without a view", u->target());
        }
        for (Node *u : n->users())
            if (mutatesInput(u) && firstInput(u) == n)
                return fail(why, u, "result", "not written in place again through the call's result", u->target());
        // The write lands in x's own dtype; the functional op promotes. The same only when no tensor
        // operand could promote it: operands of x's dtype, bool masks, integer operands of a floating x.
        const std::string &xd = x->meta().val.tensor.dtype;
        auto integral = [](const std::string &d) { return d.rfind("int", 0) == 0 || d.rfind("uint", 0) == 0; };
        const bool xFloat = xd.rfind("float", 0) == 0 || xd == "bfloat16";
        for (Node *in : n->inputNodes()) {
            if (in == x || !in->meta().val.isTensor())
                continue;
            const std::string &d = in->meta().val.tensor.dtype;
            if (d != xd && d != "bool" && !(xFloat && integral(d)))
                return fail(why, in, "operand dtype", xd + ", bool or an integer one", d);
        }
        m.nodes = {n, x};
        m.removes = {n};
        m.summary = "make " + n->name() + " functional (" + x->name() + " is not read after it)";
        return true;
    }
    void rewrite(const Match &m, Rewriter &rw) const override
    {
        Node *n = m.anchor;
        Plan p;
        if (!plan(n, p))
            return;
        Node *x = firstInput(n);
        Graph &g = rw.graph();
        std::vector<Node *> later;
        for (Node *u : x->users())
            if (u != n && g.before(n, u))
                later.push_back(u);
        auto args = n->args();
        auto kwargs = n->kwargs();
        if (p.clearKwarg || p.clearPos >= 0) {
            if (p.clearPos >= 0)
                args[size_t(p.clearPos)] = Argument::boolean(false);
            for (auto &kv : kwargs)
                if (kv.first == "inplace")
                    kv.second = Argument::boolean(false);
            rw.setInputs(n, args, kwargs);
            redirect(rw, later, x, n);
            return;
        }
        const std::string base = ir::Target::parse(p.target).base();
        Node *c = rw.create(n->op(), p.target, args, kwargs, base, n, n, {n->name()});
        c->meta().val = n->meta().val;
        rw.replaceAllUsesWith(n, c);
        rw.erase(n);
        redirect(rw, later, x, c);
    }
    /// `users` read `to` instead of `from`.
    static void redirect(Rewriter &rw, const std::vector<Node *> &users, Node *from, Node *to)
    {
        for (Node *u : users) {
            auto args = u->args();
            auto kwargs = u->kwargs();
            for (auto &a : args)
                a = a.withNodeReplaced(from, to);
            for (auto &kv : kwargs)
                kv.second = kv.second.withNodeReplaced(from, to);
            rw.setInputs(u, args, kwargs);
        }
    }
};

} // namespace

void registerCleanupPatterns(Registrar &r)
{
    r.add(std::make_unique<FunctionalizeInplace>());
    r.add(std::make_unique<DeadCode>());
}

} // namespace fxlens::patterns
