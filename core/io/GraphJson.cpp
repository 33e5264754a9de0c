// SPDX-License-Identifier: MIT
// Graph file reader/writer over nlohmann::json (ordered, so kwargs keep their order).
#include "io/GraphJson.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace fxlens::io {

using json = nlohmann::ordered_json;
using namespace fxlens::ir;

namespace {

/// Thrown inside the reader only; converted to a Diagnostic at the API boundary.
struct ReadError {
    std::string node;
    std::string message;
};

[[noreturn]] void fail(const std::string &node, const std::string &msg) { throw ReadError{node, msg}; }

const char *typeName(const json &j)
{
    return j.type_name();
}

const std::unordered_map<std::string, int> &knownDtypes()
{
    static const std::unordered_map<std::string, int> d = {
        {"float32", 1}, {"float64", 1}, {"float16", 1}, {"bfloat16", 1}, {"int64", 1}, {"int32", 1},
        {"int16", 1},   {"int8", 1},    {"uint8", 1},   {"bool", 1},     {"complex64", 1}, {"complex128", 1},
        {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"uint16", 1}, {"uint32", 1}, {"uint64", 1},
    };
    return d;
}

void checkDtype(const std::string &node, const std::string &dtype, const char *where)
{
    if (!knownDtypes().count(dtype))
        fail(node, std::string("unknown dtype '") + dtype + "' in " + where);
}

class Reader {
public:
    explicit Reader(Graph &g) : m_g(g) {}

    Argument readArg(const json &j, const std::string &node)
    {
        switch (j.type()) {
        case json::value_t::null: return Argument::none();
        case json::value_t::boolean: return Argument::boolean(j.get<bool>());
        case json::value_t::number_integer: return Argument::integer(j.get<int64_t>());
        case json::value_t::number_unsigned: return Argument::integer(int64_t(j.get<uint64_t>()));
        case json::value_t::number_float: return Argument::real(j.get<double>());
        case json::value_t::string: return Argument::string(j.get<std::string>());
        case json::value_t::array: {
            std::vector<Argument> items;
            items.reserve(j.size());
            for (const auto &e : j)
                items.push_back(readArg(e, node));
            return Argument::list(std::move(items));
        }
        case json::value_t::object: return readTagged(j, node);
        default: fail(node, std::string("argument of unsupported JSON type ") + typeName(j));
        }
    }

    Argument readTagged(const json &j, const std::string &node)
    {
        if (j.size() != 1)
            fail(node, "a tagged argument object must have exactly one key, found " + std::to_string(j.size()));
        const auto &[tag, v] = *j.items().begin();
        auto needString = [&](const char *what) -> std::string {
            if (!v.is_string())
                fail(node, std::string("'") + what + "' argument must be a string, found " + typeName(v));
            return v.get<std::string>();
        };
        if (tag == "node") {
            std::string ref = needString("node");
            auto it = m_byName.find(ref);
            if (it == m_byName.end())
                fail(node, "references unknown node '" + ref + "' (dangling reference)");
            return Argument::node(it->second);
        }
        if (tag == "tuple" || tag == "slice") {
            if (!v.is_array())
                fail(node, "'" + tag + "' argument must be an array, found " + typeName(v));
            std::vector<Argument> items;
            for (const auto &e : v)
                items.push_back(readArg(e, node));
            if (tag == "tuple")
                return Argument::tuple(std::move(items));
            if (items.size() != 3)
                fail(node, "'slice' argument must have 3 items (start, stop, step), found " + std::to_string(items.size()));
            return Argument::slice(items[0], items[1], items[2]);
        }
        if (tag == "dict") {
            if (!v.is_object())
                fail(node, std::string("'dict' argument must be an object, found ") + typeName(v));
            std::vector<std::pair<std::string, Argument>> entries;
            for (const auto &[k, e] : v.items())
                entries.emplace_back(k, readArg(e, node));
            return Argument::dict(std::move(entries));
        }
        if (tag == "float") {
            std::string s = needString("float");
            if (s == "inf")
                return Argument::real(INFINITY);
            if (s == "-inf")
                return Argument::real(-INFINITY);
            if (s == "nan")
                return Argument::real(NAN);
            fail(node, "'float' argument must be \"inf\", \"-inf\" or \"nan\", found \"" + s + "\"");
        }
        if (tag == "dtype") {
            std::string s = needString("dtype");
            checkDtype(node, s, "an argument");
            return Argument::tagged(Argument::Kind::Dtype, s);
        }
        if (tag == "device")
            return Argument::tagged(Argument::Kind::Device, needString("device"));
        if (tag == "layout")
            return Argument::tagged(Argument::Kind::Layout, needString("layout"));
        if (tag == "memory_format")
            return Argument::tagged(Argument::Kind::MemoryFormat, needString("memory_format"));
        if (tag == "opaque")
            return Argument::tagged(Argument::Kind::Opaque, needString("opaque"));
        fail(node, "unknown argument tag '" + tag + "' (expected node, tuple, dict, slice, float, dtype, device, layout, memory_format or opaque)");
    }

    ValueMeta readVal(const json &j, const std::string &node)
    {
        ValueMeta v;
        if (j.is_null())
            return v;
        if (!j.is_object() || j.size() != 1)
            fail(node, "meta.val must be null or an object with one key (tensor, seq, scalar)");
        const auto &[tag, body] = *j.items().begin();
        if (tag == "tensor") {
            v.kind = ValueMeta::Kind::Tensor;
            if (!body.is_object() || !body.contains("shape") || !body.contains("dtype"))
                fail(node, "meta.val.tensor needs 'shape' and 'dtype'");
            const auto &shape = body["shape"];
            if (!shape.is_array())
                fail(node, "meta.val.tensor.shape must be an array");
            for (const auto &d : shape) {
                if (d.is_number_integer())
                    v.tensor.shape.push_back({d.get<int64_t>(), {}});
                else if (d.is_string())
                    v.tensor.shape.push_back({0, d.get<std::string>()});
                else
                    fail(node, std::string("meta.val.tensor.shape holds a ") + typeName(d) + " (expected int or symbol)");
            }
            if (!body["dtype"].is_string())
                fail(node, "meta.val.tensor.dtype must be a string");
            v.tensor.dtype = body["dtype"].get<std::string>();
            checkDtype(node, v.tensor.dtype, "meta.val");
            if (body.contains("stride")) {
                if (!body["stride"].is_array())
                    fail(node, "meta.val.tensor.stride must be an array");
                for (const auto &s : body["stride"]) {
                    if (!s.is_number_integer())
                        fail(node, "meta.val.tensor.stride must hold integers");
                    v.tensor.stride.push_back(s.get<int64_t>());
                }
            }
            if (body.contains("requires_grad"))
                v.tensor.requiresGrad = body["requires_grad"].get<bool>();
            return v;
        }
        if (tag == "seq") {
            v.kind = ValueMeta::Kind::Sequence;
            if (!body.is_array())
                fail(node, "meta.val.seq must be an array");
            for (const auto &e : body)
                v.items.push_back(readVal(e, node));
            return v;
        }
        if (tag == "scalar") {
            v.kind = ValueMeta::Kind::Scalar;
            v.scalar = body.dump();
            return v;
        }
        fail(node, "unknown meta.val kind '" + tag + "' (expected tensor, seq or scalar)");
    }

    void readMeta(Node *n, const json &m)
    {
        const std::string &nm = n->name();
        if (!m.is_object())
            fail(nm, "'meta' must be an object");
        Meta &meta = n->meta();
        for (const auto &[k, v] : m.items()) {
            if (k == "val")
                meta.val = readVal(v, nm);
            else if (k == "nn_module_stack") {
                if (!v.is_array())
                    fail(nm, "meta.nn_module_stack must be an array");
                for (const auto &f : v) {
                    if (!f.is_object() || !f.contains("path"))
                        fail(nm, "meta.nn_module_stack entries need a 'path'");
                    meta.moduleStack.push_back({f.value("key", ""), f["path"].get<std::string>(), f.value("type", "")});
                }
            } else if (k == "stack_trace")
                meta.stackTrace = v.is_string() ? v.get<std::string>() : "";
            else if (k == "source_fn") {
                if (!v.is_array() || v.size() != 2)
                    fail(nm, "meta.source_fn must be [name, target]");
                meta.sourceFnName = v[0].get<std::string>();
                meta.sourceFnTarget = v[1].get<std::string>();
            } else if (k == "provenance") {
                Provenance p;
                p.pattern = v.value("pattern", "");
                p.step = v.value("step", int64_t(-1));
                if (v.contains("replaced"))
                    for (const auto &r : v["replaced"])
                        p.replaced.push_back(r.get<std::string>());
                meta.provenance = p;
            }
            // Other keys are ignored: the exporter may add fields newer than this reader.
        }
    }

    void read(const json &root)
    {
        if (!root.is_object())
            fail("", std::string("the top level must be an object, found ") + typeName(root));
        if (!root.contains("format") || root["format"] != kFormatName)
            fail("", std::string("not an fxlens graph file (\"format\" must be \"") + kFormatName + "\")");
        if (!root.contains("version") || !root["version"].is_number_integer())
            fail("", "missing integer \"version\"");
        int version = root["version"].get<int>();
        if (version != kFormatVersion)
            fail("", "unsupported schema version " + std::to_string(version) + " (this fxlens reads version " +
                         std::to_string(kFormatVersion) + ")");
        m_g.name = root.value("name", "");
        m_g.irLevel = root.value("ir", "torch");
        if (m_g.irLevel != "torch" && m_g.irLevel != "aten")
            fail("", "\"ir\" must be \"torch\" or \"aten\", found \"" + m_g.irLevel + "\"");
        m_g.source = root.value("source", "");
        if (root.contains("weights") && root["weights"].is_string())
            m_g.weightsFile = root["weights"].get<std::string>();
        if (root.contains("modules")) {
            for (const auto &m : root["modules"]) {
                if (!m.is_object() || !m.contains("path"))
                    fail("", "each entry of \"modules\" needs a \"path\"");
                m_g.modules.push_back({m["path"].get<std::string>(), m.value("type", "")});
            }
        }
        if (root.contains("params")) {
            for (const auto &p : root["params"]) {
                if (!p.is_object() || !p.contains("name") || !p.contains("shape") || !p.contains("dtype"))
                    fail("", "each entry of \"params\" needs \"name\", \"shape\" and \"dtype\"");
                ParamInfo pi;
                pi.name = p["name"].get<std::string>();
                pi.isBuffer = p.value("kind", "parameter") == "buffer";
                pi.shape = p["shape"].get<std::vector<int64_t>>();
                pi.dtype = p["dtype"].get<std::string>();
                checkDtype("", pi.dtype, ("parameter '" + pi.name + "'").c_str());
                pi.requiresGrad = p.value("requires_grad", false);
                m_g.params.push_back(std::move(pi));
            }
        }
        if (!root.contains("nodes") || !root["nodes"].is_array())
            fail("", "missing array \"nodes\"");
        const auto &nodes = root["nodes"];
        m_byName.reserve(nodes.size());
        // Pass 1: create every node, so references may be resolved in pass 2 and cycles reported as such.
        std::vector<Node *> created;
        created.reserve(nodes.size());
        size_t index = 0;
        for (const auto &jn : nodes) {
            std::string where = "nodes[" + std::to_string(index) + "]";
            if (!jn.is_object())
                fail("", where + " must be an object");
            if (!jn.contains("name") || !jn["name"].is_string() || jn["name"].get<std::string>().empty())
                fail("", where + " has no \"name\"");
            std::string name = jn["name"].get<std::string>();
            if (m_byName.count(name))
                fail(name, "duplicate node name (" + where + ")");
            if (!jn.contains("op") || !jn["op"].is_string())
                fail(name, "missing \"op\"");
            OpKind op;
            std::string opName = jn["op"].get<std::string>();
            if (!parseOpKind(opName, op))
                fail(name, "unknown op kind '" + opName +
                               "' (expected placeholder, get_attr, call_function, call_method, call_module or output)");
            if (!jn.contains("target") || !jn["target"].is_string())
                fail(name, "missing string \"target\"");
            Node *n = m_g.create(op, jn["target"].get<std::string>(), {}, {}, name);
            m_byName.emplace(name, n);
            created.push_back(n);
            ++index;
        }
        // Pass 2: arguments and meta.
        index = 0;
        for (const auto &jn : nodes) {
            Node *n = created[index++];
            if (jn.contains("args")) {
                if (!jn["args"].is_array())
                    fail(n->name(), "\"args\" must be an array");
                std::vector<Argument> args;
                args.reserve(jn["args"].size());
                for (const auto &a : jn["args"])
                    args.push_back(readArg(a, n->name()));
                m_g.setArgs(n, std::move(args));
            }
            if (jn.contains("kwargs")) {
                if (!jn["kwargs"].is_object())
                    fail(n->name(), "\"kwargs\" must be an object");
                std::vector<std::pair<std::string, Argument>> kwargs;
                for (const auto &[k, v] : jn["kwargs"].items())
                    kwargs.emplace_back(k, readArg(v, n->name()));
                if (!kwargs.empty())
                    m_g.setKwargs(n, std::move(kwargs));
            }
            if (jn.contains("meta"))
                readMeta(n, jn["meta"]);
        }
        checkCycles(created);
        checkOrder();
    }

    /// Reports the first cycle as "a -> b -> a".
    void checkCycles(const std::vector<Node *> &nodes)
    {
        enum : uint8_t { White, Grey, Black };
        std::vector<uint8_t> state(m_g.idBound(), White);
        std::vector<Node *> path;
        std::vector<std::pair<Node *, size_t>> stack;
        for (Node *root : nodes) {
            if (state[root->id()] != White)
                continue;
            stack.emplace_back(root, 0);
            state[root->id()] = Grey;
            while (!stack.empty()) {
                auto &[n, idx] = stack.back();
                auto ins = n->inputNodes();
                if (idx < ins.size()) {
                    Node *in = ins[idx++];
                    if (state[in->id()] == Grey) {
                        std::string cyc = in->name();
                        bool on = false;
                        for (auto &[s, _] : stack) {
                            if (s == in)
                                on = true;
                            if (on && s != in)
                                cyc += " -> " + s->name();
                        }
                        // Edges point from user to input; print the data flow direction.
                        fail(in->name(), "is part of a cycle: " + cyc + " -> " + in->name() + " (following inputs)");
                    }
                    if (state[in->id()] == White) {
                        state[in->id()] = Grey;
                        stack.emplace_back(in, 0);
                    }
                    continue;
                }
                state[n->id()] = Black;
                stack.pop_back();
            }
        }
    }

    void checkOrder()
    {
        size_t outputs = 0;
        for (Node *n = m_g.first(); n; n = n->next()) {
            for (Node *in : n->inputNodes())
                if (!m_g.before(in, n))
                    fail(n->name(), "uses '" + in->name() + "' before it is defined (nodes must be in topological order)");
            if (n->op() == OpKind::Output) {
                ++outputs;
                if (n->next())
                    fail(n->name(), "the output node must be the last node");
            }
        }
        if (outputs != 1)
            fail("", "a graph needs exactly one output node, found " + std::to_string(outputs));
    }

private:
    Graph &m_g;
    std::unordered_map<std::string, Node *> m_byName;
};

// ---------------------------------------------------------------- writer

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
        json t = {{"shape", shape}, {"dtype", v.tensor.dtype}, {"stride", v.tensor.stride},
                  {"requires_grad", v.tensor.requiresGrad}};
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
        meta["provenance"] = {{"pattern", m.provenance->pattern}, {"step", m.provenance->step},
                              {"replaced", m.provenance->replaced}};
    j["meta"] = meta;
    return j;
}

std::pair<int, int> lineColumn(const std::string &text, size_t byte)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else
            ++col;
    }
    return {line, col};
}

} // namespace

Result<std::unique_ptr<Graph>> parseGraphJson(const std::string &text, const std::string &fileName)
{
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error &e) {
        // e.byte is 1-based and points just past the offending character.
        auto [line, col] = lineColumn(text, e.byte ? e.byte - 1 : 0);
        std::string msg = e.what();
        auto pos = msg.find("syntax error");
        Diagnostic d;
        d.file = fileName;
        d.line = line;
        d.column = col;
        d.message = "malformed JSON: " + (pos != std::string::npos ? msg.substr(pos) : msg);
        return d;
    }
    auto g = std::make_unique<Graph>();
    try {
        Reader r(*g);
        r.read(root);
    } catch (const ReadError &e) {
        Diagnostic d;
        d.file = fileName;
        d.node = e.node;
        d.message = e.message;
        return d;
    } catch (const json::exception &e) {
        // A field of the wrong JSON type (e.g. a string where a number belongs).
        Diagnostic d;
        d.file = fileName;
        d.message = std::string("wrong type in file: ") + e.what();
        return d;
    }
    return g;
}

Result<std::string> readTextFile(const std::string &path)
{
    // gzread passes plain files through unchanged, so *.json and *.json.gz read alike.
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) {
        Diagnostic d;
        d.file = path;
        d.message = "cannot open file";
        return d;
    }
    gzbuffer(f, 1 << 20);
    std::string text;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0)
        text.append(buf, size_t(n));
    int err = 0;
    const char *msg = gzerror(f, &err);
    bool failed = n < 0 || (err != Z_OK && err != Z_BUF_ERROR);
    std::string why = failed ? msg : "";
    gzclose(f);
    if (failed) {
        Diagnostic d;
        d.file = path;
        d.message = "cannot read file (" + why + ")";
        return d;
    }
    return text;
}

Result<std::unique_ptr<Graph>> readGraphFile(const std::string &path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return parseGraphJson(text.value(), path);
}

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
    json mods = json::array();
    for (const auto &m : g.modules)
        mods.push_back({{"path", m.path}, {"type", m.type}});
    head["modules"] = mods;
    json params = json::array();
    for (const auto &p : g.params)
        params.push_back({{"name", p.name}, {"kind", p.isBuffer ? "buffer" : "parameter"}, {"shape", p.shape},
                          {"dtype", p.dtype}, {"requires_grad", p.requiresGrad}});
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

Result<bool> writeGraphFile(const Graph &g, const std::string &path)
{
    auto fail = [&](const std::string &m) {
        Diagnostic d;
        d.file = path;
        d.message = m;
        return d;
    };
    std::string text = writeGraphJson(g);
    bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (gz) {
        gzFile f = gzopen(path.c_str(), "wb6");
        if (!f)
            return fail("cannot open file for writing");
        bool ok = gzwrite(f, text.data(), unsigned(text.size())) == int(text.size());
        ok = gzclose(f) == Z_OK && ok;
        return ok ? Result<bool>(true) : Result<bool>(fail("write failed"));
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        return fail("cannot open file for writing");
    out << text;
    out.flush();
    if (!out)
        return fail("write failed");
    return true;
}

} // namespace fxlens::io
