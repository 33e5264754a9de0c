// SPDX-License-Identifier: MIT
// Graph file reader: simdjson for the common (valid) case, nlohmann::json for the exact position of a
// syntax error; gzip for .gz files; size and depth limits.
#include "io/GraphJson.h"
#include "io/AtomicFile.h"

#include <filesystem>

#include <nlohmann/json.hpp>
#include <simdjson.h>
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

using Element = simdjson::dom::element;
using Kind = simdjson::dom::element_type;

const char *typeName(Element e)
{
    switch (e.type()) {
    case Kind::ARRAY: return "array";
    case Kind::OBJECT: return "object";
    case Kind::INT64:
    case Kind::UINT64:
    case Kind::DOUBLE: return "number";
    case Kind::STRING: return "string";
    case Kind::BOOL: return "boolean";
    case Kind::NULL_VALUE: return "null";
    }
    return "?";
}

/// Every dtype torch has, by its torch name (str(torch.float32) without "torch."): docs/FORMAT.md.
const std::unordered_map<std::string_view, int> &knownDtypes()
{
    static const std::unordered_map<std::string_view, int> d = [] {
        static const std::string names = "float64 float32 float16 bfloat16 complex32 complex64 complex128 "
                                         "int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool "
                                         "float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu "
                                         "float4_e2m1fn_x2 qint8 quint8 qint32 quint4x2 quint2x4 "
                                         "bits1x8 bits2x4 bits4x2 bits8 bits16 int1 int2 int3 int4 int5 int6 int7 "
                                         "uint1 uint2 uint3 uint4 uint5 uint6 uint7";
        std::unordered_map<std::string_view, int> m;
        for (size_t i = 0, j; i < names.size(); i = j + 1) {
            j = std::min(names.find(' ', i), names.size());
            m.emplace(std::string_view(names).substr(i, j - i), 1);
        }
        return m;
    }();
    return d;
}

void checkDtype(const std::string &node, std::string_view dtype, const std::string &where)
{
    if (!knownDtypes().count(dtype))
        fail(node, "unknown dtype '" + std::string(dtype) + "' in " + where);
}

// By-value accessors: range-for over `e.get_array().value_unsafe()` would bind a reference into a
// temporary simdjson_result that is gone before the loop body runs.
simdjson::dom::array arrayOf(Element e) { return simdjson::dom::array(e.get_array().value_unsafe()); }
simdjson::dom::object objectOf(Element e) { return simdjson::dom::object(e.get_object().value_unsafe()); }

/// Field lookup: a missing key gives false.
bool field(simdjson::dom::object o, std::string_view key, Element &out) { return !o.at_key(key).get(out); }

std::string str(Element e)
{
    std::string_view v = e.get_string().value_unsafe();
    if (v.size() > readLimits().maxStringBytes)
        fail("",
             "a string of " + std::to_string(v.size()) + " bytes (the limit is " + std::to_string(readLimits().maxStringBytes) + "): \"" +
                 std::string(v.substr(0, 40)) + "...\"");
    return std::string(v);
}

std::string stringField(simdjson::dom::object o, std::string_view key, const std::string &dflt = {})
{
    Element e;
    if (!field(o, key, e) || !e.is_string())
        return dflt;
    return str(e);
}

class Reader {
public:
    explicit Reader(Graph &g) : m_g(g) {}

    Argument readArg(Element j, const std::string &node)
    {
        switch (j.type()) {
        case Kind::NULL_VALUE: return Argument::none();
        case Kind::BOOL: return Argument::boolean(j.get_bool().value_unsafe());
        case Kind::INT64: return Argument::integer(j.get_int64().value_unsafe());
        case Kind::UINT64: // past INT64_MAX: Python ints are unbounded, fxlens' are int64
            fail(node, "integer " + std::to_string(j.get_uint64().value_unsafe()) + " is outside the int64 range fxlens keeps");
        case Kind::DOUBLE: return Argument::real(j.get_double().value_unsafe());
        case Kind::STRING: return Argument::string(str(j));
        case Kind::ARRAY: {
            simdjson::dom::array arr = arrayOf(j);
            std::vector<Argument> items;
            items.reserve(arr.size());
            for (Element e : arr)
                items.push_back(readArg(e, node));
            return Argument::list(std::move(items));
        }
        case Kind::OBJECT: return readTagged(objectOf(j), node);
        }
        fail(node, "argument of unsupported JSON type");
    }

    Argument readTagged(simdjson::dom::object j, const std::string &node)
    {
        if (j.size() != 1)
            fail(node, "a tagged argument object must have exactly one key, found " + std::to_string(j.size()));
        auto kv = *j.begin();
        std::string_view tag = kv.key;
        Element v = kv.value;
        auto needString = [&](const char *what) -> std::string {
            if (!v.is_string())
                fail(node, std::string("'") + what + "' argument must be a string, found " + typeName(v));
            return str(v);
        };
        if (tag == "node") {
            std::string ref = needString("node");
            Node *target = m_g.find(ref);
            if (!target)
                fail(node, "references unknown node '" + ref + "' (dangling reference)");
            return Argument::node(target);
        }
        if (tag == "tuple" || tag == "slice") {
            if (!v.is_array())
                fail(node, "'" + std::string(tag) + "' argument must be an array, found " + typeName(v));
            std::vector<Argument> items;
            for (Element e : arrayOf(v))
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
            for (auto e : objectOf(v))
                entries.emplace_back(std::string(e.key), readArg(e.value, node));
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
        fail(node,
             "unknown argument tag '" + std::string(tag) +
                 "' (expected node, tuple, dict, slice, float, dtype, device, layout, memory_format or opaque)");
    }

    ValueMeta readVal(Element j, const std::string &node)
    {
        ValueMeta v;
        if (j.is_null())
            return v;
        if (!j.is_object() || objectOf(j).size() != 1)
            fail(node, "meta.val must be null or an object with one key (tensor, seq, scalar)");
        auto kv = *objectOf(j).begin();
        std::string_view tag = kv.key;
        Element body = kv.value;
        if (tag == "tensor") {
            v.kind = ValueMeta::Kind::Tensor;
            Element shape, dtype, stride, rg;
            if (!body.is_object() || !field(objectOf(body), "shape", shape) || !field(objectOf(body), "dtype", dtype))
                fail(node, "meta.val.tensor needs 'shape' and 'dtype'");
            auto obj = objectOf(body);
            if (!shape.is_array())
                fail(node, "meta.val.tensor.shape must be an array");
            for (Element d : arrayOf(shape)) {
                if (d.is_int64())
                    v.tensor.shape.push_back({d.get_int64().value_unsafe(), {}});
                else if (d.is_string())
                    v.tensor.shape.push_back({0, str(d)});
                else
                    fail(node, std::string("meta.val.tensor.shape holds a value of type ") + typeName(d) + " (expected int or symbol)");
            }
            if (!dtype.is_string())
                fail(node, "meta.val.tensor.dtype must be a string");
            v.tensor.dtype = str(dtype);
            checkDtype(node, v.tensor.dtype, "meta.val");
            if (field(obj, "stride", stride)) {
                if (!stride.is_array())
                    fail(node, "meta.val.tensor.stride must be an array");
                for (Element s : arrayOf(stride)) {
                    if (!s.is_int64())
                        fail(node, "meta.val.tensor.stride must hold integers");
                    v.tensor.stride.push_back(s.get_int64().value_unsafe());
                }
            }
            if (field(obj, "requires_grad", rg) && rg.is_bool())
                v.tensor.requiresGrad = rg.get_bool().value_unsafe();
            return v;
        }
        if (tag == "seq") {
            v.kind = ValueMeta::Kind::Sequence;
            if (!body.is_array())
                fail(node, "meta.val.seq must be an array");
            for (Element e : arrayOf(body))
                v.items.push_back(readVal(e, node));
            return v;
        }
        if (tag == "scalar") {
            v.kind = ValueMeta::Kind::Scalar;
            v.scalar = simdjson::minify(body);
            return v;
        }
        fail(node, "unknown meta.val kind '" + std::string(tag) + "' (expected tensor, seq or scalar)");
    }

    void readMeta(Node *n, Element m)
    {
        const std::string &nm = n->name();
        if (!m.is_object())
            fail(nm, "'meta' must be an object");
        Meta &meta = n->meta();
        for (auto kv : objectOf(m)) {
            std::string_view k = kv.key;
            Element v = kv.value;
            if (k == "val")
                meta.val = readVal(v, nm);
            else if (k == "nn_module_stack") {
                if (!v.is_array())
                    fail(nm, "meta.nn_module_stack must be an array");
                for (Element f : arrayOf(v)) {
                    Element path;
                    if (!f.is_object() || !field(objectOf(f), "path", path) || !path.is_string())
                        fail(nm, "meta.nn_module_stack entries need a 'path'");
                    auto o = objectOf(f);
                    meta.moduleStack.push_back({stringField(o, "key"), str(path), stringField(o, "type")});
                }
            } else if (k == "stack_trace")
                meta.stackTrace = v.is_string() ? str(v) : "";
            else if (k == "source_fn") {
                if (!v.is_array() || arrayOf(v).size() != 2)
                    fail(nm, "meta.source_fn must be [name, target]");
                auto arr = arrayOf(v);
                Element a = arr.at(0).value_unsafe(), b = arr.at(1).value_unsafe();
                if (!a.is_string() || !b.is_string())
                    fail(nm, "meta.source_fn must be [name, target]");
                meta.sourceFnName = str(a);
                meta.sourceFnTarget = str(b);
            } else if (k == "provenance") {
                if (!v.is_object())
                    fail(nm, "meta.provenance must be an object");
                auto o = objectOf(v);
                Provenance p;
                p.pattern = stringField(o, "pattern");
                Element step, replaced;
                if (field(o, "step", step) && step.is_int64())
                    p.step = step.get_int64().value_unsafe();
                if (field(o, "replaced", replaced) && replaced.is_array())
                    for (Element r : arrayOf(replaced))
                        if (r.is_string())
                            p.replaced.push_back(str(r));
                meta.provenance = p;
            } else if (k == "custom_op") {
                meta.customOp = v.is_string() ? str(v) : "";
            } else if (k == "decomposition") {
                Element nodes;
                if (!v.is_object() || !field(objectOf(v), "nodes", nodes) || !nodes.is_array())
                    fail(nm, "meta.decomposition must be a graph document with 'nodes'");
                meta.decomposition = std::make_shared<const std::string>(simdjson::minify(v));
            }
            // Other keys are ignored: the exporter may add fields newer than this reader.
        }
    }

    /// "modules": path, type and attributes of each module.
    void readModules(Element e)
    {
        if (!e.is_array())
            fail("", "\"modules\" must be an array");
        for (Element m : arrayOf(e)) {
            Element path;
            if (!m.is_object() || !field(objectOf(m), "path", path) || !path.is_string())
                fail("", "each entry of \"modules\" needs a \"path\"");
            ir::ModuleInfo info{str(path), stringField(objectOf(m), "type"), {}};
            Element attrs;
            if (field(objectOf(m), "attrs", attrs)) {
                if (!attrs.is_object())
                    fail("", "\"attrs\" of module '" + info.path + "' must be an object");
                for (auto kv : objectOf(attrs))
                    info.attrs.emplace_back(std::string(kv.key), readArg(kv.value, "module " + info.path));
            }
            m_g.modules.push_back(std::move(info));
        }
    }

    /// "params": name, shape, dtype, kind and requires_grad of each parameter and buffer.
    void readParams(Element e)
    {
        if (!e.is_array())
            fail("", "\"params\" must be an array");
        for (Element p : arrayOf(e)) {
            Element name, shape, dtype, rg;
            if (!p.is_object() || !field(objectOf(p), "name", name) || !field(objectOf(p), "shape", shape) ||
                !field(objectOf(p), "dtype", dtype) || !name.is_string() || !shape.is_array() || !dtype.is_string())
                fail("", "each entry of \"params\" needs \"name\", \"shape\" and \"dtype\"");
            auto o = objectOf(p);
            ParamInfo pi;
            pi.name = str(name);
            pi.isBuffer = stringField(o, "kind", "parameter") == "buffer";
            for (Element d : arrayOf(shape)) {
                if (!d.is_int64())
                    fail("", "parameter '" + pi.name + "' has a non-integer dimension");
                pi.shape.push_back(d.get_int64().value_unsafe());
            }
            pi.dtype = str(dtype);
            checkDtype("", pi.dtype, "parameter '" + pi.name + "'");
            if (field(o, "requires_grad", rg) && rg.is_bool())
                pi.requiresGrad = rg.get_bool().value_unsafe();
            m_g.params.push_back(std::move(pi));
        }
    }

    /// "session": a rewrite session recorded on this graph (ir::RecordedSession, docs/FORMAT.md).
    void readSession(Element e)
    {
        if (!e.is_object())
            fail("", std::string("\"session\" must be an object, found ") + typeName(e));
        auto o = objectOf(e);
        auto s = std::make_shared<RecordedSession>();
        s->json = simdjson::minify(e);
        Element f;
        if (!field(o, "format", f) || !f.is_string() || str(f) != "fxlens-session")
            fail("", "\"session\": \"format\" must be \"fxlens-session\"");
        if (!field(o, "version", f) || !f.is_int64())
            fail("", "\"session\": missing integer \"version\"");
        if (f.get_int64().value_unsafe() != 1)
            fail("", "\"session\": unsupported version " + std::to_string(f.get_int64().value_unsafe()) + " (this fxlens reads version 1)");
        auto text = [&](const char *key, std::string &out) {
            if (!field(o, key, f))
                return;
            if (!f.is_string())
                fail("", std::string("\"session\": \"") + key + "\" must be a string, found " + typeName(f));
            out = str(f);
        };
        text("tool", s->tool);
        text("preset", s->preset);
        text("patterns", s->patterns);
        if (s->preset.empty())
            fail("", "\"session\": \"preset\" must not be empty");
        if (field(o, "pattern_paths", f)) {
            if (!f.is_array())
                fail("", std::string("\"session\": \"pattern_paths\" must be an array of strings, found ") + typeName(f));
            for (Element p : arrayOf(f)) {
                if (!p.is_string() || p.get_string().value_unsafe().empty())
                    fail("", "\"session\": \"pattern_paths\" must hold non-empty strings");
                s->patternPaths.push_back(str(p));
            }
        }
        if (!field(o, "steps", f) || !f.is_array())
            fail("", "\"session\": missing array \"steps\"");
        size_t index = 0;
        for (Element st : arrayOf(f)) {
            Element pattern, anchor;
            if (!st.is_object() || !field(objectOf(st), "pattern", pattern) || !field(objectOf(st), "anchor", anchor) ||
                !pattern.is_string() || !anchor.is_string() || pattern.get_string().value_unsafe().empty() ||
                anchor.get_string().value_unsafe().empty())
                fail("", "\"session\": steps[" + std::to_string(index) + "] needs non-empty strings \"pattern\" and \"anchor\"");
            s->steps.push_back({str(pattern), str(anchor)});
            ++index;
        }
        m_g.session = std::move(s);
    }

    /// Pass 1: every node, so that references may be resolved in pass 2 and cycles reported as such.
    std::vector<Node *> createNodes(simdjson::dom::array nodes)
    {
        std::vector<Node *> created;
        created.reserve(nodes.size());
        size_t index = 0;
        for (Element jn : nodes) {
            auto where = [&] { return "nodes[" + std::to_string(index) + "]"; };
            if (!jn.is_object())
                fail("", where() + " must be an object");
            auto o = objectOf(jn);
            Element nameEl, opEl, targetEl;
            if (!field(o, "name", nameEl) || !nameEl.is_string() || nameEl.get_string().value_unsafe().empty())
                fail("", where() + " has no \"name\"");
            std::string name = str(nameEl);
            if (m_g.find(name))
                fail(name, "duplicate node name (" + where() + ")");
            if (!field(o, "op", opEl) || !opEl.is_string())
                fail(name, "missing \"op\"");
            OpKind op;
            std::string opName = str(opEl);
            if (!parseOpKind(opName, op))
                fail(name,
                     "unknown op kind '" + opName +
                         "' (expected placeholder, get_attr, call_function, call_method, call_module or output)");
            if (!field(o, "target", targetEl) || !targetEl.is_string())
                fail(name, "missing string \"target\"");
            Node *n = m_g.create(op, str(targetEl), {}, {}, name);
            if (n->name() != name)
                m_g.rename(n, name); // a file may use names fxlens would not generate (Python builtins)
            created.push_back(n);
            ++index;
        }
        return created;
    }

    /// Pass 2: arguments and meta.
    void readInputs(simdjson::dom::array nodes, const std::vector<Node *> &created)
    {
        size_t index = 0;
        for (Element jn : nodes) {
            Node *n = created[index++];
            auto o = objectOf(jn);
            Element args, kwargs, meta;
            std::vector<Argument> argList;
            std::vector<std::pair<std::string, Argument>> kwargList;
            if (field(o, "args", args)) {
                if (!args.is_array())
                    fail(n->name(), "\"args\" must be an array");
                auto arr = arrayOf(args);
                argList.reserve(arr.size());
                for (Element a : arr)
                    argList.push_back(readArg(a, n->name()));
            }
            if (field(o, "kwargs", kwargs)) {
                if (!kwargs.is_object())
                    fail(n->name(), "\"kwargs\" must be an object");
                for (auto kv : objectOf(kwargs))
                    kwargList.emplace_back(std::string(kv.key), readArg(kv.value, n->name()));
            }
            if (!argList.empty() || !kwargList.empty())
                m_g.setInputs(n, std::move(argList), std::move(kwargList));
            if (field(o, "meta", meta))
                readMeta(n, meta);
        }
    }

    void read(Element rootEl)
    {
        if (!rootEl.is_object())
            fail("", std::string("the top level must be an object, found ") + typeName(rootEl));
        auto root = objectOf(rootEl);
        Element e;
        if (!field(root, "format", e) || !e.is_string() || str(e) != kFormatName)
            fail("", std::string("not an fxlens graph file (\"format\" must be \"") + kFormatName + "\")");
        if (!field(root, "version", e) || !e.is_int64())
            fail("", "missing integer \"version\"");
        int64_t version = e.get_int64().value_unsafe();
        if (version != kFormatVersion)
            fail("",
                 "unsupported schema version " + std::to_string(version) + " (this fxlens reads version " + std::to_string(kFormatVersion) +
                     ")");
        m_g.name = stringField(root, "name");
        m_g.irLevel = stringField(root, "ir", "torch");
        if (m_g.irLevel != "torch" && m_g.irLevel != "aten")
            fail("", "\"ir\" must be \"torch\" or \"aten\", found \"" + m_g.irLevel + "\"");
        m_g.source = stringField(root, "source");
        m_g.weightsFile = stringField(root, "weights");
        m_g.inputsFile = stringField(root, "inputs");
        m_g.foldFile = stringField(root, "fold");
        if (field(root, "session", e))
            readSession(e);
        if (field(root, "modules", e))
            readModules(e);
        if (field(root, "params", e))
            readParams(e);
        Element nodesEl;
        if (!field(root, "nodes", nodesEl) || !nodesEl.is_array())
            fail("", "missing array \"nodes\"");
        auto nodes = arrayOf(nodesEl);
        if (nodes.size() > readLimits().maxNodes)
            fail("", std::to_string(nodes.size()) + " nodes (the limit is " + std::to_string(readLimits().maxNodes) + ")");
        const std::vector<Node *> created = createNodes(nodes);
        readInputs(nodes, created);
        checkCycles(created);
        checkOrder();
    }

    /// Reports the first cycle as "a -> b -> a".
    void checkCycles(const std::vector<Node *> &nodes)
    {
        enum : uint8_t { White, Grey, Black };
        std::vector<uint8_t> state(m_g.idBound(), White);
        std::vector<Node *> path;
        struct Frame {
            Node *node;
            std::vector<Node *> inputs;
            size_t next = 0;
        };
        std::vector<Frame> stack;
        for (Node *root : nodes) {
            if (state[root->id()] != White)
                continue;
            stack.push_back({root, root->inputNodes()});
            state[root->id()] = Grey;
            while (!stack.empty()) {
                Frame &f = stack.back();
                Node *n = f.node;
                if (f.next < f.inputs.size()) {
                    Node *in = f.inputs[f.next++];
                    if (state[in->id()] == Grey) {
                        std::string cyc = in->name();
                        bool on = false;
                        for (auto &fr : stack) {
                            if (fr.node == in)
                                on = true;
                            if (on && fr.node != in)
                                cyc += " -> " + fr.node->name();
                        }
                        // Edges point from user to input; print the data flow direction.
                        fail(in->name(), "is part of a cycle: " + cyc + " -> " + in->name() + " (following inputs)");
                    }
                    if (state[in->id()] == White) {
                        state[in->id()] = Grey;
                        stack.push_back({in, in->inputNodes()});
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
        for (Node *n = m_g.first(); n; n = n->next())
            outputs += n->op() == OpKind::Output;
        if (outputs != 1)
            fail("", "a graph needs exactly one output node, found " + std::to_string(outputs));
        for (Node *n = m_g.first(); n; n = n->next()) {
            for (Node *in : n->inputNodes())
                if (!m_g.before(in, n))
                    fail(n->name(), "uses '" + in->name() + "' before it is defined (nodes must be in topological order)");
            if (n->op() == OpKind::Output && n->next())
                fail(n->name(), "the output node must be the last node");
        }
    }

private:
    Graph &m_g;
};

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
    // simdjson parses the common (valid) case quickly; on a syntax error nlohmann's parser is run
    // only to locate the error by line and column for the diagnostic.
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (auto err = parser.parse(text).get(root)) {
        Diagnostic d;
        d.file = fileName;
        d.message = std::string("malformed JSON: ") + simdjson::error_message(err);
        if (err == simdjson::DEPTH_ERROR) {
            d.message = "malformed JSON: nesting deeper than " + std::to_string(parser.max_depth()) + " levels";
            return d;
        }
        // nlohmann's SAX parser (iterative: no tree is built, so no recursion on deep input) locates
        // the error by line and column for the diagnostic.
        struct Locate : nlohmann::json_sax<json> {
            size_t byte = 0;
            std::string what;
            bool null() override { return true; }
            bool boolean(bool) override { return true; }
            bool number_integer(number_integer_t) override { return true; }
            bool number_unsigned(number_unsigned_t) override { return true; }
            bool number_float(number_float_t, const string_t &) override { return true; }
            bool string(string_t &) override { return true; }
            bool binary(binary_t &) override { return true; }
            bool start_object(std::size_t) override { return true; }
            bool key(string_t &) override { return true; }
            bool end_object() override { return true; }
            bool start_array(std::size_t) override { return true; }
            bool end_array() override { return true; }
            bool parse_error(std::size_t position, const std::string &, const nlohmann::detail::exception &ex) override
            {
                byte = position;
                what = ex.what();
                return false;
            }
        } locate;
        try {
            json::sax_parse(text, &locate);
        } catch (const std::exception &e) {
            locate.what = e.what();
        }
        if (!locate.what.empty()) {
            // The position is 1-based and points just past the offending character.
            auto [line, col] = lineColumn(text, locate.byte ? locate.byte - 1 : 0);
            auto pos = locate.what.find("syntax error");
            if (pos == std::string::npos)
                pos = locate.what.find("number overflow");
            d.line = line;
            d.column = col;
            d.message = "malformed JSON: " + (pos != std::string::npos ? locate.what.substr(pos) : locate.what);
        }
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
    } catch (const simdjson::simdjson_error &e) {
        Diagnostic d;
        d.file = fileName;
        d.message = std::string("wrong type in file: ") + e.what();
        return d;
    }
    return g;
}

ReadLimits &readLimits()
{
    static ReadLimits limits;
    return limits;
}

Result<std::string> readTextFile(const std::string &path)
{
    auto refuse = [&](std::string msg) {
        Diagnostic d;
        d.file = path;
        d.message = std::move(msg);
        return d;
    };
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return refuse("is a directory, not a file");
    const auto size = std::filesystem::file_size(path, ec);
    const ReadLimits lim = readLimits();
    if (!ec && size > lim.maxFileBytes)
        return refuse("file of " + std::to_string(size) + " bytes (the limit is " + std::to_string(lim.maxFileBytes) + ")");
    // gzread passes plain files through unchanged, so *.json and *.json.gz read alike.
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        return refuse("cannot open file");
    gzbuffer(f, 1 << 20);
    std::string text;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) {
        text.append(buf, size_t(n));
        const uint64_t len = text.size();
        if (len > lim.maxTextBytes || (len > (uint64_t(64) << 20) && !ec && size > 0 && len / size > lim.maxGzipRatio)) {
            gzclose(f);
            return refuse(len > lim.maxTextBytes ? "decompresses past " + std::to_string(lim.maxTextBytes) + " bytes (the limit)"
                                                 : "decompresses to more than " + std::to_string(lim.maxGzipRatio) + " times its " +
                                  std::to_string(size) + " bytes (a gzip bomb?)");
        }
    }
    int err = 0;
    const char *msg = gzerror(f, &err);
    // Z_BUF_ERROR here means the gzip stream ended early (a truncated file).
    bool failed = n < 0 || err != Z_OK;
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
    auto g = parseGraphJson(text.value(), path);
    if (g)
        g.value()->sourcePath = path;
    return g;
}

} // namespace fxlens::io
