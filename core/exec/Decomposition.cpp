// SPDX-License-Identifier: MIT
// Calls PyTorch defines in Python (torch.functional, torch.nn.functional, Tensor methods written in
// Python, reflected operators): the exporter traces each one to the ATen ops it ran and keeps that
// graph in the node's meta ("decomposition", docs/FORMAT.md). When the call itself has no ATen
// operator or fits none, the executor runs that graph instead: a new function of the same kind needs
// no code here.
#include "exec/Interpreter.h"
#include "io/GraphJson.h"

#include <mutex>

namespace fxlens::exec::detail {

namespace {

/// Parsed decompositions by their text (identical calls share one: 800 layer_norms of one shape).
std::shared_ptr<const ir::Graph> parsedDecomposition(const std::string &text)
{
    static std::mutex mu;
    static std::unordered_map<std::string, std::shared_ptr<const ir::Graph>> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(text);
    if (it != cache.end())
        return it->second;
    std::shared_ptr<const ir::Graph> g;
    if (auto r = io::parseGraphJson(text, "decomposition"))
        g = std::shared_ptr<const ir::Graph>(std::move(r.value()));
    if (cache.size() > 4096)
        cache.clear();
    cache.emplace(text, g);
    return g;
}

/// The value fits the placeholder's recorded meta (a tensor of that shape and dtype; other values
/// are not checked).
bool fits(const Node *placeholder, const IValue &v)
{
    const auto &m = placeholder->meta().val;
    if (m.kind != ir::ValueMeta::Kind::Tensor)
        return true;
    if (!v.isTensor())
        return false;
    const at::Tensor &t = v.toTensor();
    if (auto st = scalarType(m.tensor.dtype); st && *st != t.scalar_type())
        return false;
    const std::vector<int64_t> sizes = m.tensor.sizes();
    if (sizes.size() != size_t(t.dim()))
        return false;
    for (size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] >= 0 && sizes[i] != t.size(long(i)))
            return false;
    return true;
}

} // namespace

std::optional<IValue> Interp::runDecomposition(const Node *n) const
{
    const auto &text = n->meta().decomposition;
    if (!text)
        return std::nullopt;
    auto sub = parsedDecomposition(*text);
    if (!sub)
        return std::nullopt;
    const auto nodes = sub->nodes();
    std::vector<const Node *> holes;
    for (const Node *s : nodes)
        if (s->op() == OpKind::Placeholder)
            holes.push_back(s);
    // The placeholders are the call's tensor inputs in order; its numbers and sizes were recorded
    // into the decomposition as the values they had (they follow from the tensors' shapes).
    std::vector<const IValue *> ins;
    for (const Node *in : n->inputNodes())
        if (env[in->id()].isTensor())
            ins.push_back(&env[in->id()]);
    if (ins.size() != holes.size())
        return std::nullopt;
    std::vector<IValue> subEnv(sub->idBound());
    for (size_t i = 0; i < ins.size(); ++i) {
        if (!fits(holes[i], *ins[i]))
            return std::nullopt; // the call's inputs changed shape since it was traced
        subEnv[holes[i]->id()] = *ins[i];
    }
    static const std::unordered_map<std::string, at::Tensor> kNoParams;
    static const std::vector<at::Tensor> kNoInputs;
    std::unordered_map<const Node *, Slot> subSlots;
    Interp inner{*sub, kNoParams, kNoInputs, subEnv, subSlots};
    Slot *outer = t_slot;
    for (const Node *s : nodes) {
        if (s->op() == OpKind::Placeholder)
            continue;
        if (s->op() == OpKind::Output) {
            t_slot = outer;
            return inner.natural(s->args()[0]);
        }
        try {
            subEnv[s->id()] = inner.evalNode(s);
        } catch (const CallError &e) {
            t_slot = outer;
            throw CallError{"in the ATen ops PyTorch ran for it (" + s->target() + "): " + e.message};
        }
    }
    t_slot = outer;
    return std::nullopt;
}

} // namespace fxlens::exec::detail
