// SPDX-License-Identifier: MIT
// Target: a call target split into its parts, the one parser of target names in the project.
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
    /// The op name as a string ("split").
    std::string base() const { return std::string(name); }
};

/// The last component of a dotted name: a module's class ("torch.nn.modules.linear.Linear" ->
/// "Linear"), an attribute path's leaf.
inline std::string_view lastComponent(std::string_view dotted)
{
    const size_t dot = dotted.rfind('.');
    return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

} // namespace fxlens::ir
