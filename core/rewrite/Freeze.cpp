// SPDX-License-Identifier: MIT
#include "rewrite/Freeze.h"

#include "ir/Target.h"
#include "rewrite/Mutation.h"
#include "rewrite/Schema.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace fxlens::rewrite {

using ir::Node;
using ir::OpKind;

bool impureForFreezing(const std::string &t)
{
    for (const char *w : {"dropout", "rand", "bernoulli", "normal", "uniform", "multinomial", "empty", "seed"})
        if (t.find(w) != std::string::npos)
            return true;
    return writesInPlace(t);
}

std::vector<bool> weightOnlyNodes(const ir::Graph &g)
{
    std::vector<bool> folded(g.idBound(), false);
    for (Node *n = g.first(); n; n = n->next()) {
        bool c = false;
        if (n->op() == OpKind::GetAttr) {
            c = true;
        } else if (n->op() == OpKind::CallFunction || n->op() == OpKind::CallMethod) {
            // A call without node inputs is a constant (torch.tensor(...), arange(n)): folded too, so
            // that it is made once, not on every run (nor copied to the device inside a CUDA graph).
            auto ins = n->inputNodes();
            c = !impureForFreezing(n->target()) && !mutatesInput(n) && !hasSideEffects(n);
            for (Node *in : ins)
                c = c && folded[in->id()];
        }
        folded[n->id()] = c;
    }
    return folded;
}

/// The node's recorded value (meta) is a tensor laid out contiguously: written to a file as it is.
/// An unknown layout counts as not contiguous.
static bool recordedContiguous(const Node *n)
{
    if (!n->meta().val.isTensor())
        return false;
    const ir::TensorMeta &t = n->meta().val.tensor;
    const std::vector<int64_t> shape = t.sizes();
    if (t.stride.size() != shape.size())
        return false;
    int64_t expected = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        if (shape[i] < 0)
            return false;
        if (shape[i] == 1)
            continue;
        if (t.stride[i] != expected)
            return false;
        expected *= shape[i];
    }
    return true;
}

/// The call's value is a view of its first input (or a piece of one) with strides a file cannot
/// hold: one that reorders or broadcasts (permute, expand: whatever the meta says, since a rewrite
/// may have copied it from the node it replaced), or another view whose recorded layout is not
/// contiguous. Such a view holds no data of its own and costs nothing to recompute. reshape/flatten
/// that copy (their input's strides admit no view) are not views.
static bool stridedView(const Node *n)
{
    if (n->op() != OpKind::CallFunction && n->op() != OpKind::CallMethod)
        return false;
    // clang-format off
    static const std::unordered_set<std::string_view> reorder = {
        "transpose", "t", "T", "mT", "permute", "movedim", "moveaxis", "swapaxes", "swapdims", "expand",
        "expand_as", "broadcast_to", "as_strided", "diagonal", "unfold"};
    static const std::unordered_set<std::string_view> views = {
        "view", "_unsafe_view", "view_as", "reshape", "reshape_as", "_reshape_alias", "flatten", "unflatten",
        "squeeze", "unsqueeze", "narrow", "slice", "select", "alias", "detach", "real", "imag", "view_as_real",
        "view_as_complex"};
    static const std::unordered_set<std::string_view> pieces = {
        "split", "split_with_sizes", "tensor_split", "chunk", "unbind", "hsplit", "vsplit", "dsplit",
        "unsafe_split", "unsafe_chunk"};
    // clang-format on
    auto name = [](const Node *m) {
        return m->op() == OpKind::CallMethod ? std::string(m->target()) : std::string(ir::Target::parse(m->target()).name);
    };
    const std::string b = name(n);
    if (reorder.count(b))
        return true;
    if (recordedContiguous(n))
        return false;
    if (n->op() == OpKind::CallFunction && n->target() == "operator.getitem") {
        auto ins = n->inputNodes();
        return !ins.empty() && (ins[0]->op() == OpKind::CallFunction || ins[0]->op() == OpKind::CallMethod) &&
            pieces.count(name(ins[0])) > 0;
    }
    if ((b == "reshape" || b == "flatten") && !mayAliasInput(n))
        return false; // reshapeCopies: fresh storage
    return views.count(b) > 0 || pieces.count(b) > 0;
}

std::vector<Node *> freezeBoundary(const ir::Graph &g, const std::vector<bool> &folded)
{
    // Strided views at the edge of the folded region stay in the graph, and the value they view is
    // kept instead: such a view would be written materialized, a copy of the weight with other
    // strides (a matmul on it rounds differently from the graph it came from) or, for expand, one
    // many times larger (ViT's expanded in_proj weight: 197x). Contiguous ones (a batch norm's
    // weight viewed as [1, C, 1, 1]) are written as they are. In reverse program order a view's
    // readers are settled before it, so a chain of views (permute, then expand) goes back whole.
    std::vector<bool> kept = folded;
    for (Node *n = g.last(); n; n = n->prev()) {
        if (!kept[n->id()] || n->op() == OpKind::GetAttr || !stridedView(n))
            continue;
        bool read = false;
        for (Node *u : n->users())
            read = read || !kept[u->id()];
        if (read)
            kept[n->id()] = false;
    }
    std::vector<Node *> out;
    for (Node *n = g.first(); n; n = n->next()) {
        if (!kept[n->id()] || n->op() == OpKind::GetAttr)
            continue;
        bool read = false;
        for (Node *u : n->users())
            read = read || !kept[u->id()];
        if (read)
            out.push_back(n);
    }
    return out;
}

size_t eliminateDeadCode(ir::Graph &g)
{
    size_t removed = 0;
    for (Node *n = g.last(); n;) {
        Node *prev = n->prev();
        if (n->users().empty() && n->op() != OpKind::Output && n->op() != OpKind::Placeholder && !hasSideEffects(n)) {
            g.erase(n);
            ++removed;
        }
        n = prev;
    }
    return removed;
}

/// Keeps the params entries that `g` still reads: get_attr targets, and the weights of the modules
/// its call_module nodes call (`<module>.<name>`).
static void pruneParams(ir::Graph &g)
{
    std::unordered_set<std::string> read, modules;
    for (Node *n = g.first(); n; n = n->next()) {
        if (n->op() == OpKind::GetAttr)
            read.insert(n->target());
        else if (n->op() == OpKind::CallModule)
            modules.insert(n->target());
    }
    auto used = [&](const ir::ParamInfo &p) {
        if (read.count(p.name))
            return true;
        for (size_t dot = p.name.rfind('.'); dot != std::string::npos && dot > 0; dot = p.name.rfind('.', dot - 1))
            if (modules.count(p.name.substr(0, dot)))
                return true;
        return false;
    };
    g.params.erase(std::remove_if(g.params.begin(), g.params.end(), [&](const ir::ParamInfo &p) { return !used(p); }), g.params.end());
}

size_t keepOnlyOutputInputs(ir::Graph &g)
{
    Node *out = g.outputNode();
    if (!out)
        return 0;
    std::vector<bool> needed(g.idBound(), false);
    std::vector<Node *> work = {out};
    while (!work.empty()) {
        Node *n = work.back();
        work.pop_back();
        if (needed[n->id()])
            continue;
        needed[n->id()] = true;
        for (Node *in : n->inputNodes())
            work.push_back(in);
    }
    // In reverse program order a node's users are gone before it is.
    size_t removed = 0;
    for (Node *n = g.last(); n;) {
        Node *prev = n->prev();
        if (!needed[n->id()] && g.erase(n))
            ++removed;
        n = prev;
    }
    return removed;
}

FrozenSplit splitFrozen(const ir::Graph &g, const std::vector<std::string> &chosen)
{
    FrozenSplit s;
    s.frozen = g.clone();
    s.fold = g.clone();
    s.fold->name = g.name.empty() ? "fold" : g.name + ".fold";
    s.fold->inputsFile.clear();
    s.fold->foldFile.clear();

    // The frozen graph: every chosen value is read from a new weight, declared after the last
    // placeholder (where exporters put get_attr nodes).
    Node *anchor = s.frozen->first();
    while (anchor && anchor->op() == OpKind::Placeholder)
        anchor = anchor->next();
    std::vector<ir::Argument> outs;
    for (const std::string &name : chosen) {
        Node *n = s.frozen->find(name);
        if (!n)
            continue;
        std::string target = std::string(kFrozenPrefix) + name;
        Node *attr = s.frozen->create(OpKind::GetAttr, target, {}, {}, target, anchor);
        attr->meta() = n->meta();
        s.frozen->replaceAllUsesWith(n, attr);
        s.targets.push_back(target);
        outs.push_back(ir::Argument::node(s.fold->find(name)));
    }
    eliminateDeadCode(*s.frozen);
    pruneParams(*s.frozen);

    // The fold graph: the chosen values as its outputs and only what they read. Everything else
    // goes, side-effecting nodes included (an assert on an input would keep the input's placeholder
    // alive, and the fold graph takes no input).
    Node *oldOut = s.fold->outputNode();
    Node *newOut = s.fold->create(OpKind::Output, "output", {ir::Argument::tuple(std::move(outs))}, {}, "output_fold", nullptr);
    if (oldOut && s.fold->erase(oldOut))
        s.fold->rename(newOut, "output");
    keepOnlyOutputInputs(*s.fold);
    pruneParams(*s.fold);
    return s;
}

} // namespace fxlens::rewrite
