// SPDX-License-Identifier: MIT
// The graph as runnable Python (see PythonWriter.h).
#include "io/PythonWriter.h"
#include "ir/Target.h"

#include <cctype>
#include <map>
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

bool keyword(const std::string &s)
{
    // clang-format off
    static const std::set<std::string> kw = {"False", "None", "True", "and", "as", "assert", "async", "await", "break",
                                             "class", "continue", "def", "del", "elif", "else", "except", "finally",
                                             "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
                                             "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};
    // clang-format on
    return kw.count(s) > 0;
}

/// A name the generated code may bind or call: an identifier, not a keyword.
bool safeName(const std::string &s) { return identifier(s) && !keyword(s); }

/// Every dotted part is a safe name.
bool safeDotted(const std::string &s)
{
    size_t a = 0;
    while (true) {
        size_t b = s.find('.', a);
        if (!safeName(s.substr(a, b == std::string::npos ? std::string::npos : b - a)))
            return false;
        if (b == std::string::npos)
            return true;
        a = b + 1;
    }
}

/// The callable a call_function target names, in Python. Modules outside torch are bound by
/// importlib to an alias (`import a.b.c` would not reach a function that shadows its module's name,
/// as torchvision.ops.stochastic_depth does).
std::string callee(const std::string &t, std::map<std::string, std::string> &imports)
{
    const ir::Target target = ir::Target::parse(t);
    if (target.isOpOverload())
        return "torch.ops." + t;
    if (t.rfind("builtins.", 0) == 0)
        return t.substr(9);
    if (t == "getattr")
        return t;
    if (t.find("_log_api_usage_once") != std::string::npos)
        return "torch._C._log_api_usage_once";
    if (!target.ns.empty()) {
        const std::string module(target.ns);
        if (!target.inNamespace("torch")) {
            auto [it, fresh] = imports.try_emplace(module, "_m" + std::to_string(imports.size()));
            return it->second + "." + target.base();
        }
    }
    return t;
}

/// A tensor operator method (x.__eq__(y), x.__rsub__(1), x.__getitem__(i)): no interpreter internals.
bool operatorDunder(const std::string &m)
{
    // clang-format off
    static const std::set<std::string> ops = {
        "eq", "ne", "lt", "le", "gt", "ge", "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv",
        "rtruediv", "itruediv", "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod", "imod", "pow", "rpow", "ipow", "matmul",
        "rmatmul", "and", "rand", "iand", "or", "ror", "ior", "xor", "rxor", "ixor", "lshift", "rlshift", "ilshift", "rshift",
        "rrshift", "irshift", "invert", "neg", "pos", "abs", "getitem", "setitem", "len", "contains", "bool", "float", "int",
        "index"};
    // clang-format on
    return m.size() > 4 && m.compare(m.size() - 2, 2, "__") == 0 && ops.count(m.substr(2, m.size() - 4)) > 0;
}

/// Why an argument cannot be written as Python ("" when it can).
std::string unsafeArgument(const Argument &a)
{
    switch (a.kind()) {
    case Argument::Kind::Dtype:
    case Argument::Kind::Layout:
    case Argument::Kind::MemoryFormat: return safeName(a.text()) ? "" : "tag '" + a.text() + "' is not an identifier";
    case Argument::Kind::Opaque: return a.text() == "Ellipsis" ? "" : "opaque value '" + a.text() + "' (never executed)";
    case Argument::Kind::List:
    case Argument::Kind::Tuple:
    case Argument::Kind::Slice:
        for (const auto &x : a.items())
            if (auto why = unsafeArgument(x); !why.empty())
                return why;
        return "";
    case Argument::Kind::Dict:
        for (const auto &[k, v] : a.entries())
            if (auto why = unsafeArgument(v); !why.empty())
                return why;
        return "";
    default: return "";
    }
}

/// Why the graph cannot be written as Python without running code it did not ask for ("" when it can).
std::string unsafeGraph(const ir::Graph &g)
{
    static const std::set<std::string> reserved = {"self", "torch", "importlib", "_fetch", "_attach", "Model", "getattr"};
    for (Node *n = g.first(); n; n = n->next()) {
        const std::string where = "node '" + n->name() + "': ";
        if (!safeName(n->name()) || reserved.count(n->name()) || n->name().rfind("_m", 0) == 0)
            return where + "the name is not a Python identifier fxlens may bind";
        if (n->op() == OpKind::CallFunction && !allowedTarget(n->target()))
            return where + "target '" + n->target() +
                "' is outside the namespaces a graph may call (torch, operator, math, torchvision.ops)";
        if (n->op() == OpKind::CallMethod && (!safeName(n->target()) || (n->target().rfind("__", 0) == 0 && !operatorDunder(n->target()))))
            return where + "method '" + n->target() + "' is not a plain identifier or an operator method";
        for (const auto &[k, v] : n->kwargs())
            if (!safeName(k))
                return where + "keyword '" + k + "' is not an identifier";
        for (const auto &a : n->args())
            if (auto why = unsafeArgument(a); !why.empty())
                return where + why;
        for (const auto &[k, v] : n->kwargs())
            if (auto why = unsafeArgument(v); !why.empty())
                return where + why;
    }
    for (const auto &m : g.modules)
        for (const auto &[k, v] : m.attrs)
            if (auto why = unsafeArgument(v); !why.empty())
                return "module '" + m.path + "': attribute " + k + ": " + why;
    for (const auto &p : g.params)
        if (!p.dtype.empty() && !safeName(p.dtype))
            return "parameter '" + p.name + "': dtype '" + p.dtype + "' is not an identifier";
    return {};
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

bool allowedTarget(const std::string &t)
{
    // clang-format off
    static const std::set<std::string> builtins = {"getattr", "builtins.getattr", "builtins.len", "builtins.int", "builtins.float",
                                                   "builtins.bool", "builtins.min", "builtins.max", "builtins.abs",
                                                   "builtins.round", "builtins.range", "builtins.slice", "builtins.tuple",
                                                   "builtins.list", "builtins.sum", "builtins.pow", "builtins.divmod",
                                                   "builtins.isinstance"};
    // clang-format on
    if (builtins.count(t))
        return true;
    if (!safeDotted(t))
        return false;
    static const char *roots[] = {"torch.", "operator.", "_operator.", "math.", "torchvision.ops.", "aten.", "prims."};
    bool rooted = false;
    for (const char *r : roots)
        rooted = rooted || t.rfind(r, 0) == 0;
    if (!rooted)
        return false;
    // Dunder parts reach interpreter internals (torch.__builtins__, ...).
    if (t.find(".__") != std::string::npos || t.rfind("__", 0) == 0)
        return false;
    // clang-format off
    static const char *refused[] = {"torch.load", "torch.save", "torch.hub", "torch.serialization", "torch.package", "torch.utils",
                                    "torch.jit", "torch.compile", "torch.distributed", "torch.multiprocessing", "torch.backends",
                                    "torch._dynamo", "torch._inductor", "torch.cuda.memory", "torch.fx", "torch.library",
                                    "torch.ops.load_library", "torch.classes", "torch._C._jit", "torch.autograd.graph", "torch.testing",
                                    "torch.onnx", "torch.export", "torch._export", "torch.overrides"};
    // clang-format on
    for (const char *r : refused) {
        const std::string p = r;
        if (t == p || t.rfind(p + ".", 0) == 0)
            return false;
    }
    return true;
}

/// A call_module node as a functional call on the module's parameters; "" for a module type the
/// export does not know.
static std::string moduleCall(const ir::Graph &g, const Node &n, const std::string &x, const std::set<std::string> &params)
{
    auto fetch = [&](const std::string &path) { return "_fetch(self, " + quote(path) + ")"; };
    auto optParam = [&](const std::string &path) { return params.count(path) ? fetch(path) : std::string("None"); };
    const ir::ModuleInfo *m = nullptr;
    for (const auto &mi : g.modules)
        if (mi.path == n.target())
            m = &mi;
    const std::string &p = n.target();
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
        call = F + "layer_norm(" + x + ", " + attr("normalized_shape", ("tuple(" + fetch(p + ".weight") + ".shape)").c_str()) + ", " +
            optParam(p + ".weight") + ", " + optParam(p + ".bias") + ", " + attr("eps", "1e-05") + ")";
    else if (type == "Conv1d" || type == "Conv2d" || type == "Conv3d")
        call = F + "conv" + type.substr(4, 2) + "(" + x + ", " + fetch(p + ".weight") + ", " + optParam(p + ".bias") + ", " +
            attr("stride", "1") + ", " + attr("padding", "0") + ", " + attr("dilation", "1") + ", " + attr("groups", "1") + ")";
    else if (type == "BatchNorm1d" || type == "BatchNorm2d" || type == "BatchNorm3d")
        call = F + "batch_norm(" + x + ", " + optParam(p + ".running_mean") + ", " + optParam(p + ".running_var") + ", " +
            optParam(p + ".weight") + ", " + optParam(p + ".bias") + ", False, " + attr("momentum", "0.1") + ", " + attr("eps", "1e-05") +
            ")";
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
    else if (type == "Dropout" || type == "Identity" || type == "Dropout1d" || type == "Dropout2d" || type == "AlphaDropout")
        call = x;
    else if (type == "Hardswish" || type == "Hardsigmoid" || type == "Mish" || type == "SELU")
        call = F +
            (type == "SELU"            ? std::string("selu")
                 : type == "Mish"      ? std::string("mish")
                 : type == "Hardswish" ? std::string("hardswish")
                                       : std::string("hardsigmoid")) +
            "(" + x + ")";
    else if (type == "ReLU6")
        call = F + "relu6(" + x + ")";
    else if (type == "LeakyReLU")
        call = F + "leaky_relu(" + x + ", " + attr("negative_slope", "0.01") + ")";
    else if (type == "ELU")
        call = F + "elu(" + x + ", " + attr("alpha", "1.0") + ")";
    else if (type == "Hardtanh")
        call = F + "hardtanh(" + x + ", " + attr("min_val", "-1.0") + ", " + attr("max_val", "1.0") + ")";
    else if (type == "Softplus")
        call = F + "softplus(" + x + ", " + attr("beta", "1.0") + ", " + attr("threshold", "20.0") + ")";
    else if (type == "LogSoftmax")
        call = F + "log_softmax(" + x + ", " + attr("dim", "-1") + ")";
    else if (type == "GroupNorm")
        call = F + "group_norm(" + x + ", " + attr("num_groups", "1") + ", " + optParam(p + ".weight") + ", " + optParam(p + ".bias") +
            ", " + attr("eps", "1e-05") + ")";
    else if (type == "AvgPool2d")
        call = F + "avg_pool2d(" + x + ", " + attr("kernel_size", "None") + ", " + attr("stride", "None") + ", " + attr("padding", "0") +
            ", " + attr("ceil_mode", "False") + ", " + attr("count_include_pad", "True") + ")";
    else if (type == "MultiheadAttention")
        call = "_mha(" + attr("num_heads", "1") + ", " + attr("batch_first", "False") + ", " + optParam(p + ".in_proj_weight") + ", " +
            optParam(p + ".in_proj_bias") + ", " + optParam(p + ".q_proj_weight") + ", " + optParam(p + ".k_proj_weight") + ", " +
            optParam(p + ".v_proj_weight") + ", " + fetch(p + ".out_proj.weight") + ", " + optParam(p + ".out_proj.bias") + ", " +
            joinArgs(n) + ")";
    else if (type == "AdaptiveAvgPool1d")
        call = F + "adaptive_avg_pool1d(" + x + ", " + attr("output_size", "None") + ")";
    else if (type == "Flatten")
        call = "torch.flatten(" + x + ", " + attr("start_dim", "1") + ", " + attr("end_dim", "-1") + ")";
    else if (type == "MaxPool2d")
        call = F + "max_pool2d(" + x + ", " + attr("kernel_size", "None") + ", " + attr("stride", "None") + ", " + attr("padding", "0") +
            ", " + attr("dilation", "1") + ", " + attr("ceil_mode", "False") + ")";
    else if (type == "AdaptiveAvgPool2d")
        call = F + "adaptive_avg_pool2d(" + x + ", " + attr("output_size", "None") + ")";
    return call;
}

/// The module's head: imports, helpers (_fetch, _mha, _attach) and the class line.
static void writePreamble(std::ostringstream &s, const ir::Graph &g, const std::map<std::string, std::string> &imports)
{
    s << "# Generated by fxlens from " << quote(g.name.empty() ? std::string("graph") : g.name) << " ("
      << (g.irLevel == "aten" ? "aten" : "torch") << " IR, " << g.size() << " nodes): the graph as a runnable torch.nn.Module.\n"
      << "# Parameters and buffers start as zeros with their recorded shapes; fill them with\n"
      << "# load_state_dict(original_module.state_dict()) or Model().load_weights(\"weights.safetensors\").\n";
    s << "\nimport importlib\n\nimport torch\n\n";
    for (const auto &[m, alias] : imports)
        s << alias << " = importlib.import_module(" << quote(m) << ")\n";
    s << "\n\n"
      << "def _fetch(root, path):\n"
      << "    obj = root\n"
      << "    for part in path.split(\".\"):\n"
      << "        obj = getattr(obj, part)\n"
      << "    return obj\n\n\n"
      << "def _mha(num_heads, batch_first, in_w, in_b, q_w, k_w, v_w, out_w, out_b, query, key, value, key_padding_mask=None,\n"
      << "         need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False):\n"
      << "    \"\"\"torch.nn.MultiheadAttention's forward in eval mode, on its parameters.\"\"\"\n"
      << "    if batch_first:\n"
      << "        query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)\n"
      << "    out, weights = torch.nn.functional.multi_head_attention_forward(\n"
      << "        query, key, value, query.shape[-1], num_heads, in_w, in_b, None, None, False, 0.0, out_w, out_b, training=False,\n"
      << "        key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,\n"
      << "        use_separate_proj_weight=in_w is None, q_proj_weight=q_w, k_proj_weight=k_w, v_proj_weight=v_w,\n"
      << "        average_attn_weights=average_attn_weights, is_causal=is_causal)\n"
      << "    return (out.transpose(0, 1) if batch_first else out), weights\n\n\n"
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
}

PythonOutput writePython(const ir::Graph &g)
{
    PythonOutput out;
    out.error = unsafeGraph(g);
    if (!out.error.empty())
        return out;
    std::map<std::string, std::string> imports;
    std::set<std::string> params;
    for (const auto &p : g.params)
        params.insert(p.name);
    auto fetch = [&](const std::string &path) { return "_fetch(self, " + quote(path) + ")"; };

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
            std::string arg = safeName(n->target()) ? n->target() : "arg" + std::to_string(inputs.size());
            // A placeholder with a default value (an optional argument) keeps it in the signature.
            inputs.push_back(n->args().empty() ? arg : arg + "=" + n->args()[0].toPython());
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
            const std::string call = moduleCall(g, *n, x, params);
            const ir::ModuleInfo *m = g.module(n->target());
            const std::string &p = n->target();
            if (call.empty()) {
                out.unsupported.push_back(name);
                body << "        raise NotImplementedError("
                     << quote("module " + p + " of type " + (m ? m->type : "?") + " (node " + name + ")") << ")\n";
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
    writePreamble(s, g, imports);
    for (const auto &p : g.params) {
        std::string shape;
        for (size_t i = 0; i < p.shape.size(); ++i)
            shape += (i ? ", " : "") + std::to_string(p.shape[i]);
        s << "        _attach(self, " << quote(p.name) << ", torch.zeros([" << shape << "], dtype=torch."
          << (p.dtype.empty() ? "float32" : p.dtype) << "), " << (p.isBuffer ? "False" : "True") << ", "
          << (p.requiresGrad ? "True" : "False") << ")\n";
    }
    if (g.params.empty())
        s << "        pass\n";
    s << "\n    def load_weights(self, path):\n"
      << "        \"\"\"Fills parameters and buffers from a safetensors file (keys `name` or `weight:name`).\"\"\"\n"
      << "        from safetensors.torch import load_file\n"
      // clang-format off
      << "        state = {k[len(\"weight:\"):] if k.startswith(\"weight:\") else k: v for k, v in load_file(path).items()}\n"
      << "        self.load_state_dict({k: v for k, v in state.items() if not k.startswith((\"input:\", \"output:\"))}, strict=False)\n"
      << "        return self\n\n";
    // clang-format on
    s << "    def forward(self";
    for (const auto &in : inputs)
        s << ", " << in;
    s << "):\n" << body.str();
    out.code = s.str();
    return out;
}

} // namespace fxlens::io
