// SPDX-License-Identifier: MIT
#include "rewrite/StepDiff.h"

#include <set>

namespace fxlens::rewrite {

namespace {

std::string argsText(const std::vector<ir::Argument> &args, const std::vector<std::pair<std::string, ir::Argument>> &kwargs)
{
    std::string s = "(";
    for (size_t i = 0; i < args.size(); ++i)
        s += (i ? ", " : "") + args[i].toString();
    for (size_t i = 0; i < kwargs.size(); ++i)
        s += (i || !args.empty() ? ", " : "") + kwargs[i].first + " = " + kwargs[i].second.toString();
    return s + ")";
}

} // namespace

ir::GraphDiff diffStep(const std::vector<Edit> &edits)
{
    using K = ir::DiffLine::Kind;
    ir::GraphDiff d;
    std::set<const ir::Node *> inserted;
    for (const auto &e : edits)
        if (e.kind == Edit::Kind::Insert)
            inserted.insert(e.node);
    for (const auto &e : edits) {
        const std::string &name = e.node->name();
        switch (e.kind) {
        case Edit::Kind::Insert:
            if (!e.node->isErased())
                d.lines.push_back({K::Added, name, {}, ir::nodeLine(*e.node)});
            break;
        case Edit::Kind::Erase:
            if (!inserted.count(e.node)) // an erased node keeps its inputs
                d.lines.push_back({K::Removed, name, ir::nodeLine(*e.node), {}});
            break;
        case Edit::Kind::SetInputs:
            if (!inserted.count(e.node))
                d.lines.push_back({K::Changed, name, name + " = " + e.node->target() + argsText(e.oldArgs, e.oldKwargs),
                                   argsText(e.newArgs, e.newKwargs)});
            break;
        case Edit::Kind::Move:
            d.lines.push_back({K::Moved, name, {}, e.movedBefore ? e.movedBefore->name() : std::string("the end")});
            break;
        }
    }
    return d;
}

} // namespace fxlens::rewrite
