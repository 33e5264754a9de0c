// SPDX-License-Identifier: MIT
// Graph file writer over nlohmann::json (ordered, so kwargs keep their order); gzip for .gz files,
// written atomically.
#include "io/AtomicFile.h"
#include "io/GraphJson.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cmath>
#include <filesystem>

namespace fxlens::io {

using json = nlohmann::ordered_json;
using namespace fxlens::ir;

namespace {

json writeArg(const Argument &a)
{
    using K = Argument::Kind;
    switch (a.kind()) {
    case K::None: return nullptr;
    case K::Bool: return a.toBool();
    case K::Int: return a.toInt();
    case K::Float: {
        double v = a.toFloat();
        if (std::isnan(v))
            return json{{"float", "nan"}};
        if (std::isinf(v))
            return json{{"float", v > 0 ? "inf" : "-inf"}};
        return v;
    }
    case K::String: return a.text();
    case K::NodeRef: return json{{"node", a.toNode()->name()}};
    case K::List: {
        json arr = json::array();
        for (const auto &i : a.items())
            arr.push_back(writeArg(i));
        return arr;
    }
    case K::Tuple:
    case K::Slice: {
        json arr = json::array();
        for (const auto &i : a.items())
            arr.push_back(writeArg(i));
        return json{{a.kind() == K::Tuple ? "tuple" : "slice", arr}};
    }
    case K::Dict: {
        json obj = json::object();
        for (const auto &[k, v] : a.entries())
            obj[k] = writeArg(v);
        return json{{"dict", obj}};
    }
    case K::Dtype: return json{{"dtype", a.text()}};
    case K::Device: return json{{"device", a.text()}};
    case K::Layout: return json{{"layout", a.text()}};
    case K::MemoryFormat: return json{{"memory_format", a.text()}};
    case K::Opaque: return json{{"opaque", a.text()}};
    }
    return nullptr;
}

json writeVal(const ValueMeta &v)
{
    switch (v.kind) {
    case ValueMeta::Kind::Unknown: return nullptr;
    case ValueMeta::Kind::Tensor: {
        json shape = json::array();
        for (const auto &d : v.tensor.shape) {
            if (d.isStatic())
                shape.push_back(d.value);
            else
                shape.push_back(d.symbol);
        }
        json t = {{"shape", shape}, {"dtype", v.tensor.dtype}, {"stride", v.tensor.stride}, {"requires_grad", v.tensor.requiresGrad}};
        return json{{"tensor", t}};
    }
    case ValueMeta::Kind::Sequence: {
        json arr = json::array();
        for (const auto &i : v.items)
            arr.push_back(writeVal(i));
        return json{{"seq", arr}};
    }
    case ValueMeta::Kind::Scalar: return json{{"scalar", json::parse(v.scalar)}};
    }
    return nullptr;
}

json writeNode(const Node &n)
{
    json j;
    j["name"] = n.name();
    j["op"] = opKindName(n.op());
    j["target"] = n.target();
    json args = json::array();
    for (const auto &a : n.args())
        args.push_back(writeArg(a));
    j["args"] = args;
    json kwargs = json::object();
    for (const auto &[k, v] : n.kwargs())
        kwargs[k] = writeArg(v);
    j["kwargs"] = kwargs;
    json meta = json::object();
    const Meta &m = n.meta();
    if (m.val.kind != ValueMeta::Kind::Unknown)
        meta["val"] = writeVal(m.val);
    if (!m.moduleStack.empty()) {
        json st = json::array();
        for (const auto &f : m.moduleStack)
            st.push_back({{"key", f.key}, {"path", f.path}, {"type", f.type}});
        meta["nn_module_stack"] = st;
    }
    if (!m.stackTrace.empty())
        meta["stack_trace"] = m.stackTrace;
    if (!m.sourceFnName.empty() || !m.sourceFnTarget.empty())
        meta["source_fn"] = {m.sourceFnName, m.sourceFnTarget};
    if (m.provenance)
        meta["provenance"] = {{"pattern", m.provenance->pattern}, {"step", m.provenance->step}, {"replaced", m.provenance->replaced}};
    if (m.decomposition)
        meta["decomposition"] = json::parse(*m.decomposition);
    if (!m.customOp.empty())
        meta["custom_op"] = m.customOp;
    j["meta"] = meta;
    return j;
}

} // namespace

std::string writeGraphJson(const Graph &g)
{
    json head = json::object();
    head["format"] = kFormatName;
    head["version"] = kFormatVersion;
    head["name"] = g.name;
    head["ir"] = g.irLevel.empty() ? "torch" : g.irLevel;
    head["source"] = g.source;
    if (!g.weightsFile.empty())
        head["weights"] = g.weightsFile;
    if (!g.inputsFile.empty())
        head["inputs"] = g.inputsFile;
    if (!g.foldFile.empty())
        head["fold"] = g.foldFile;
    json mods = json::array();
    for (const auto &m : g.modules) {
        json jm = {{"path", m.path}, {"type", m.type}};
        if (!m.attrs.empty()) {
            json attrs = json::object();
            for (const auto &kv : m.attrs)
                attrs[kv.first] = writeArg(kv.second);
            jm["attrs"] = attrs;
        }
        mods.push_back(std::move(jm));
    }
    head["modules"] = mods;
    json params = json::array();
    for (const auto &p : g.params)
        params.push_back({{"name", p.name},
                          {"kind", p.isBuffer ? "buffer" : "parameter"},
                          {"shape", p.shape},
                          {"dtype", p.dtype},
                          {"requires_grad", p.requiresGrad}});
    head["params"] = params;
    std::string out = head.dump();
    out.pop_back(); // reopen the object to append the node array, one node per line
    out += ",\n\"nodes\": [\n";
    bool first = true;
    for (Node *n = g.first(); n; n = n->next()) {
        if (!first)
            out += ",\n";
        first = false;
        out += writeNode(*n).dump();
    }
    out += "\n]}\n";
    return out;
}

Status writeTextFile(const std::string &path, std::string text)
{
    const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (gz) {
        // gzip in memory (deflate with a gzip wrapper), then one atomic write.
        z_stream z{};
        if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "cannot start compression"};
        std::string packed(deflateBound(&z, uLong(text.size())), '\0');
        z.next_in = reinterpret_cast<Bytef *>(text.data());
        z.avail_in = uInt(text.size());
        z.next_out = reinterpret_cast<Bytef *>(packed.data());
        z.avail_out = uInt(packed.size());
        const int rc = deflate(&z, Z_FINISH);
        packed.resize(z.total_out);
        deflateEnd(&z);
        if (rc != Z_STREAM_END)
            return Diagnostic{Diagnostic::Severity::Error, path, 0, 0, {}, "compression failed"};
        text.swap(packed);
    }
    return writeFileAtomic(path, text);
}

Status writeGraphFile(const Graph &g, const std::string &path) { return writeTextFile(path, writeGraphJson(g)); }

} // namespace fxlens::io
