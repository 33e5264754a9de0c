// SPDX-License-Identifier: MIT
// The graph as runnable Python (see PythonWriter.h).
#include "io/PythonWriter.h"

#include <cctype>
#include <set>
#include <sstream>
#include <unordered_map>

namespace fxlens::io {

using ir::Argument;
using ir::Node;
using ir::OpKind;

namespace {

std::string quote(const std::string &s) { return Argument::string(s).toPython(); }

bool identifier(const std::string &s)
{
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            return false;
    return true;
}

/// The callable a call_function target names, in Python.
std::string callee(const std::string &t, std::set<std::string> &imports)
{
    if (t.rfind("aten.", 0) == 0)
        return "torch.ops." + t;
    if (t.rfind("builtins.", 0) == 0)
        return t.substr(9);
    if (t == "getattr")
        return t;
    auto dot = t.rfind('.');
    if (dot != std::string::npos) {
        const std::string module = t.substr(0, dot);
        if (module != "torch" && module.rfind("torch.", 0) != 0)
            imports.insert(module);
    }
    return t;
}

std::string joinArgs(const Node &n, size_t from = 0)
{
    std::string s;
    for (size_t i = from; i < n.args().size(); ++i)
        s += (s.empty() ? "" : ", ") + n.args()[i].toPython();
    for (const auto &[k, v] : n.kwargs())
        s += (s.empty() ? "" : ", ") + k + "=" + v.toPython();
    return s;
}

} // namespace

PythonOutput writePython(const ir::Graph &g)
{
    PythonOutput out;
    std::set<std::string> imports;
    std::set<std::string> params;
    for (const auto &p : g.params)
        params.insert(p.name);
    auto fetch = [&](const std::string &path) { return "_fetch(self, " + quote(path) + ")"; };
    auto optParam = [&](const std::string &path) { return params.count(path) ? fetch(path) : std::string("None"); };

    std::ostringstream body;
    std::vector<std::string> inputs;
    // Release schedule: a value is dropped after its last reader, as torch.fx's code does.
    std::unordered_map<const Node *, const Node *> lastUse;
    for (Node *n = g.first(); n; n = n->next())
        for (Node *in : n->inputNodes())
            lastUse[in] = n;
    std::unordered_map<const Node *, std::vector<std::string>> dropAfter;
    for (const auto &[v, user] : lastUse)
        if (user->op() != OpKind::Output)
            dropAfter[user].push_back(v->name());

    for (Node *n = g.first(); n; n = n->next()) {
        const std::string &name = n->name();
        const std::string x = n->args().empty() ? std::string("None") : n->args()[0].toPython();
        switch (n->op()) {
        case OpKind::Placeholder: {
            std::string arg = identifier(n->target()) ? n->target() : "arg" + std::to_string(inputs.size());
            inputs.push_back(arg);
            if (arg != name)
                body << "        " << name << " = " << arg << "\n";
            break;
        }
        case OpKind::GetAttr: body << "        " << name << " = " << fetch(n->target()) << "\n"; break;
        case OpKind::CallFunction: {
            const std::string f = callee(n->target(), imports);
            body << "        " << name << " = " << f << "(" << joinArgs(*n) << ")\n";
            break;
        }
        case OpKind::CallMethod: {
            std::string rest = joinArgs(*n, 1);
            body << "        " << name << " = " << x << "." << n->target() << "(" << rest << ")\n";
            break;
        }
        case OpKind::CallModule: {
            const ir::ModuleInfo *m = nullptr;
            for (const auto &mi : g.modules)
                if (mi.path == n->target())
                    m = &mi;
            const std::string p = n->target();
            const std::string type = m ? m->type.substr(m->type.rfind('.') + 1) : std::string();
            auto attr = [&](const char *k, const char *dflt) {
                const Argument *a = m ? m->attr(k) : nullptr;
                return a ? a->toPython() : std::string(dflt);
            };
            const std::string F = "torch.nn.functional.";
            std::string call;
            if (type == "Linear")
                call = F + "linear(" + x + ", " + fetch(p + ".weight") + ", " + optParam(p + ".bias") + ")";
            else if (type == "LayerNorm")
                call = F + "layer_norm(" + x + ", " +
                       attr("normalized_shape", ("tuple(" + fetch(p + ".weight") + ".shape)").c_str()) + ", " + optParam(p + ".weight") +
                       ", " + optParam(p + ".bias") + ", " + attr("eps", "1e-05") + ")";
            else if (type == "Conv1d" || type == "Conv2d" || type == "Conv3d")
                call = F + "conv" + type.substr(4, 2) + "(" + x + ", " + fetch(p + ".weight") + ", " + optParam(p + ".bias") + ", " +
                       attr("stride", "1") + ", " + attr("padding", "0") + ", " + attr("dilation", "1") + ", " + attr("groups", "1") + ")";
            else if (type == "BatchNorm1d" || type == "BatchNorm2d" || type == "BatchNorm3d")
                call = F + "batch_norm(" + x + ", " + optParam(p + ".running_mean") + ", " + optParam(p + ".running_var") + ", " +
                       optParam(p + ".weight") + ", " + optParam(p + ".bias") + ", False, " + attr("momentum", "0.1") + ", " +
                       attr("eps", "1e-05") + ")";
            else if (type == "Embedding")
                call = F + "embedding(" + x + ", " + fetch(p + ".weight") + ", " + attr("padding_idx", "None") + ")";
            else if (type == "ReLU" || type == "Tanh" || type == "Sigmoid")
                call = "torch." + std::string(type == "ReLU" ? "relu" : type == "Tanh" ? "tanh" : "sigmoid") + "(" + x + ")";
            else if (type == "SiLU")
                call = F + "silu(" + x + ")";
            else if (type == "GELU")
                call = F + "gelu(" + x + ", approximate=" + attr("approximate", "'none'") + ")";
            else if (type == "Softmax")
                call = F + "softmax(" + x + ", " + attr("dim", "-1") + ")";
            else if (type == "Dropout" || type == "Identity")
                call = x;
            else if (type == "Flatten")
                call = "torch.flatten(" + x + ", " + attr("start_dim", "1") + ", " + attr("end_dim", "-1") + ")";
            else if (type == "MaxPool2d")
                call = F + "max_pool2d(" + x + ", " + attr("kernel_size", "None") + ", " + attr("stride", "None") + ", " +
                       attr("padding", "0") + ", " + attr("dilation", "1") + ", " + attr("ceil_mode", "False") + ")";
            else if (type == "AdaptiveAvgPool2d")
                call = F + "adaptive_avg_pool2d(" + x + ", " + attr("output_size", "None") + ")";
            if (call.empty()) {
                out.unsupported.push_back(name);
                body << "        raise NotImplementedError(" << quote("module " + p + " of type " + (m ? m->type : "?") + " (node " + name + ")")
                     << ")\n";
            } else {
                body << "        " << name << " = " << call << "\n";
            }
            break;
        }
        case OpKind::Output: body << "        return " << x << "\n"; break;
        }
        auto drop = dropAfter.find(n);
        if (drop != dropAfter.end()) {
            body << "        ";
            for (size_t i = 0; i < drop->second.size(); ++i)
                body << (i ? " = " : "") << drop->second[i];
            body << " = None\n";
        }
    }

    std::ostringstream s;
    s << "# Generated by fxlens from " << quote(g.name.empty() ? std::string("graph") : g.name) << " (" << (g.irLevel.empty() ? "?" : g.irLevel)
      << " IR, " << g.size() << " nodes): the graph as a runnable torch.nn.Module.\n"
      << "# Parameters and buffers start as zeros with their recorded shapes; fill them with\n"
      << "# load_state_dict(original_module.state_dict()) or Model().load_weights(\"weights.safetensors\").\n";
    for (const auto &m : imports)
        s << "import " << m << "\n";
    s << "\nimport torch\n\n\n"
      << "def _fetch(root, path):\n"
      << "    obj = root\n"
      << "    for part in path.split(\".\"):\n"
      << "        obj = getattr(obj, part)\n"
      << "    return obj\n\n\n"
      << "def _attach(root, path, value, parameter, requires_grad):\n"
      << "    *parents, leaf = path.split(\".\")\n"
      << "    for part in parents:\n"
      << "        if part not in root._modules:\n"
      << "            root.add_module(part, torch.nn.Module())\n"
      << "        root = root._modules[part]\n"
      << "    if parameter:\n"
      << "        root.register_parameter(leaf, torch.nn.Parameter(value, requires_grad=requires_grad))\n"
      << "    else:\n"
      << "        root.register_buffer(leaf, value)\n\n\n"
      << "class Model(torch.nn.Module):\n"
      << "    def __init__(self):\n"
      << "        super().__init__()\n";
    for (const auto &p : g.params) {
        std::string shape;
        for (size_t i = 0; i < p.shape.size(); ++i)
            shape += (i ? ", " : "") + std::to_string(p.shape[i]);
        s << "        _attach(self, " << quote(p.name) << ", torch.zeros([" << shape << "], dtype=torch." << (p.dtype.empty() ? "float32" : p.dtype)
          << "), " << (p.isBuffer ? "False" : "True") << ", " << (p.requiresGrad ? "True" : "False") << ")\n";
    }
    if (g.params.empty())
        s << "        pass\n";
    s << "\n    def load_weights(self, path):\n"
      << "        \"\"\"Fills parameters and buffers from a safetensors file (keys `name` or `weight:name`).\"\"\"\n"
      << "        from safetensors.torch import load_file\n"
      << "        state = {k[len(\"weight:\"):] if k.startswith(\"weight:\") else k: v for k, v in load_file(path).items()}\n"
      << "        self.load_state_dict({k: v for k, v in state.items() if not k.startswith((\"input:\", \"output:\"))}, strict=False)\n"
      << "        return self\n\n";
    s << "    def forward(self";
    for (const auto &in : inputs)
        s << ", " << in;
    s << "):\n" << body.str();
    out.code = s.str();
    return out;
}

} // namespace fxlens::io
