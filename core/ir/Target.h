// SPDX-License-Identifier: MIT
// Target: a call target split into its parts, the one parser of target names in the project, and
// the one in-place vocabulary (which spellings write their input, and their functional twins).
#pragma once

#include <string>
#include <string_view>

namespace fxlens::ir {

/// "aten.split.Tensor"          -> ns "aten", name "split", overload "Tensor"
/// "prims.iota.default"         -> ns "prims", name "iota", overload "default"
/// "torch.nn.functional.relu"   -> ns "torch.nn.functional", name "relu"
/// "operator.getitem"           -> ns "operator", name "getitem"
/// "split" (a method)           -> name "split"
/// The parts view the string parsed: keep it alive while they are used.
struct Target {
    std::string_view ns, name, overload;

    static Target parse(std::string_view t) noexcept
    {
        Target r;
        if (t.rfind("aten.", 0) == 0 || t.rfind("prims.", 0) == 0) {
            // An OpOverload: namespace.op.overload (the overload may be missing).
            const size_t a = t.find('.');
            r.ns = t.substr(0, a);
            std::string_view rest = t.substr(a + 1);
            const size_t b = rest.find('.');
            r.name = rest.substr(0, b);
            if (b != std::string_view::npos)
                r.overload = rest.substr(b + 1);
            return r;
        }
        const size_t dot = t.rfind('.');
        if (dot == std::string_view::npos) {
            r.name = t;
            return r;
        }
        r.ns = t.substr(0, dot);
        r.name = t.substr(dot + 1);
        return r;
    }
    /// An ATen or prims overload (torch.ops.<ns>.<op>.<overload>).
    bool isOpOverload() const { return ns == "aten" || ns == "prims"; }
    bool isAten() const { return ns == "aten"; }
    /// In namespace `root` or one below it: inNamespace("torch") holds for "torch.relu" and
    /// "torch.nn.functional.relu" (the same as the target starting with "torch.").
    bool inNamespace(std::string_view root) const
    {
        return ns.size() >= root.size() && ns.compare(0, root.size(), root) == 0 && (ns.size() == root.size() || ns[root.size()] == '.');
    }
    /// A function of torch.nn.functional ("torch.nn.functional.relu").
    bool isNnFunctional() const { return inNamespace("torch.nn.functional"); }
    /// The op name as a string ("split").
    std::string base() const { return std::string(name); }
};

/// The in-place spelling of an op name: one trailing underscore, not a dunder ("add_", "relu_";
/// not "__and__", "add").
inline bool isInplaceName(std::string_view op) { return !op.empty() && op.back() == '_' && !(op.size() >= 2 && op[op.size() - 2] == '_'); }

/// The op name without its in-place underscore ("add_" -> "add"); other names unchanged.
inline std::string_view inplaceBase(std::string_view op) { return isInplaceName(op) ? op.substr(0, op.size() - 1) : op; }

/// Python's augmented assignment (operator.iadd, ...) and its functional twin ("add"; "and_" for
/// iand; empty when none means the same: iconcat only ever applies to sequences).
struct AugmentedAssign {
    std::string_view name, functional;
};

/// The entry of an `operator.i*` target ("operator.iadd"), or nullptr (also for operator.is_,
/// invert, index and itemgetter, which do not write).
inline const AugmentedAssign *augmentedAssign(std::string_view target)
{
    static constexpr AugmentedAssign table[] = {
        {"iadd", "add"},       {"isub", "sub"},       {"imul", "mul"},       {"itruediv", "truediv"}, {"ifloordiv", "floordiv"},
        {"imod", "mod"},       {"ipow", "pow"},       {"iand", "and_"},      {"ior", "or_"},          {"ixor", "xor"},
        {"ilshift", "lshift"}, {"irshift", "rshift"}, {"imatmul", "matmul"}, {"iconcat", ""}};
    constexpr std::string_view prefix = "operator.";
    if (target.substr(0, prefix.size()) != prefix)
        return nullptr;
    target.remove_prefix(prefix.size());
    for (const AugmentedAssign &a : table)
        if (a.name == target)
            return &a;
    return nullptr;
}

/// The last component of a dotted name: a module's class ("torch.nn.modules.linear.Linear" ->
/// "Linear"), an attribute path's leaf.
inline std::string_view lastComponent(std::string_view dotted)
{
    const size_t dot = dotted.rfind('.');
    return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

} // namespace fxlens::ir
