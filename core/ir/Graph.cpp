// SPDX-License-Identifier: MIT
// Graph edits, ordering, topological sort and lint.
#include "ir/Graph.h"

#include <optional>

#include <algorithm>
#include <atomic>
#include <unordered_set>

namespace fxlens::ir {

const char *opKindName(OpKind k)
{
    switch (k) {
    case OpKind::Placeholder: return "placeholder";
    case OpKind::GetAttr: return "get_attr";
    case OpKind::CallFunction: return "call_function";
    case OpKind::CallMethod: return "call_method";
    case OpKind::CallModule: return "call_module";
    case OpKind::Output: return "output";
    }
    return "?";
}

bool parseOpKind(const std::string &s, OpKind &out)
{
    // clang-format off
    static const std::pair<const char *, OpKind> table[] = {
        {"placeholder", OpKind::Placeholder}, {"get_attr", OpKind::GetAttr},
        {"call_function", OpKind::CallFunction}, {"call_method", OpKind::CallMethod},
        {"call_module", OpKind::CallModule}, {"output", OpKind::Output},
    };
    // clang-format on
    for (const auto &[name, k] : table)
        if (s == name) {
            out = k;
            return true;
        }
    return false;
}

const Argument *Node::kwarg(const std::string &key) const
{
    for (const auto &e : m_kwargs)
        if (e.first == key)
            return &e.second;
    return nullptr;
}

const Argument *Node::arg(size_t i, const std::string &key) const
{
    if (i < m_args.size())
        return &m_args[i];
    return key.empty() ? nullptr : kwarg(key);
}

std::vector<Node *> Node::inputNodes() const
{
    std::vector<Node *> out;
    auto add = [&](Node *n) {
        if (n)
            out.push_back(n);
    };
    for (const auto &a : m_args)
        a.forEachNode(add);
    for (const auto &e : m_kwargs)
        e.second.forEachNode(add);
    // Keep first occurrences in order. A cat of 6400 tensors must not cost 6400^2 comparisons.
    if (out.size() <= 16) {
        size_t k = 0;
        for (size_t i = 0; i < out.size(); ++i)
            if (std::find(out.begin(), out.begin() + long(k), out[i]) == out.begin() + long(k))
                out[k++] = out[i];
        out.resize(k);
    } else {
        std::unordered_set<Node *> seen;
        seen.reserve(out.size() * 2);
        size_t k = 0;
        for (size_t i = 0; i < out.size(); ++i)
            if (seen.insert(out[i]).second)
                out[k++] = out[i];
        out.resize(k);
    }
    return out;
}

Graph::Graph() { touch(); }
Graph::~Graph() = default;

std::unique_ptr<Graph> Graph::clone() const
{
    auto g = std::make_unique<Graph>();
    g->name = name;
    g->irLevel = irLevel;
    g->source = source;
    g->weightsFile = weightsFile;
    g->inputsFile = inputsFile;
    g->foldFile = foldFile;
    g->sourcePath = sourcePath;
    g->session = session;
    g->modules = modules;
    g->params = params;
    std::unordered_map<const Node *, Node *> map;
    map.reserve(m_size);
    auto remap = [&](const Argument &a) {
        Argument c = a;
        std::function<void(Argument &)> fix = [&](Argument &x) {
            if (x.isNode()) {
                x = Argument::node(map.at(x.toNode()));
                return;
            }
            for (auto &i : x.items())
                fix(i);
            for (auto &e : x.entries())
                fix(e.second);
        };
        fix(c);
        return c;
    };
    for (Node *n = m_head; n; n = n->next()) {
        std::vector<Argument> args;
        args.reserve(n->args().size());
        for (const auto &a : n->args())
            args.push_back(remap(a));
        std::vector<std::pair<std::string, Argument>> kwargs;
        for (const auto &e : n->kwargs())
            kwargs.emplace_back(e.first, remap(e.second));
        Node *c = g->create(n->op(), n->target(), std::move(args), std::move(kwargs), n->name());
        c->meta() = n->meta();
        map[n] = c;
    }
    return g;
}

std::vector<Node *> Graph::nodes() const
{
    std::vector<Node *> out;
    out.reserve(m_size);
    for (Node *n = m_head; n; n = n->next())
        out.push_back(n);
    return out;
}

Node *Graph::find(const std::string &nm) const
{
    auto it = m_byName.find(nm);
    return it == m_byName.end() ? nullptr : it->second;
}

Node *Graph::outputNode() const
{
    for (Node *n = m_tail; n; n = n->prev())
        if (n->op() == OpKind::Output)
            return n;
    return nullptr;
}

/// Python keywords and builtins: torch.fx never gives a node such a name (it would shadow the
/// builtin in generated code), so neither does fxlens.
static bool reservedName(const std::string &n)
{
    // clang-format off
    static const std::unordered_set<std::string> names = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
    "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
    "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
    "ModuleNotFoundError", "NameError", "None", "NotADirectoryError", "NotImplemented", "NotImplementedError",
    "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
    "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
    "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit",
    "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
    "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning",
    "ValueError", "Warning", "ZeroDivisionError", "abs", "aiter", "all", "and", "anext", "any", "as", "ascii",
    "assert", "async", "await", "bin", "bool", "break", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "class", "classmethod", "compile", "complex", "continue", "copyright", "credits", "def", "del", "delattr",
    "dict", "dir", "divmod", "elif", "else", "enumerate", "eval", "except", "exec", "exit", "filter",
    "finally", "float", "for", "format", "from", "frozenset", "getattr", "global", "globals", "hasattr",
    "hash", "help", "hex", "id", "if", "import", "in", "input", "int", "is", "isinstance", "issubclass",
    "iter", "lambda", "len", "license", "list", "locals", "map", "max", "memoryview", "min", "next",
    "nonlocal", "not", "object", "oct", "open", "or", "ord", "pass", "pow", "print", "property", "quit",
    "raise", "range", "repr", "return", "reversed", "round", "set", "setattr", "slice", "sorted",
    "staticmethod", "str", "sum", "super", "try", "tuple", "type", "vars", "while", "with", "yield", "zip",
    };
    // clang-format on
    return names.count(n) > 0;
}

std::string Graph::uniqueName(const std::string &base) const
{
    if (!m_byName.count(base) && !reservedName(base))
        return base;
    // torch.fx style: strip an existing numeric suffix, then count up.
    std::string stem = base;
    auto us = stem.rfind('_');
    if (us != std::string::npos && us + 1 < stem.size() &&
        std::all_of(stem.begin() + long(us) + 1, stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
        stem = stem.substr(0, us);
    // Remember where the count stopped for each stem, so that the k-th "view" costs O(1), not O(k).
    size_t &next = m_nextSuffix[stem];
    for (size_t i = std::max<size_t>(next, 1);; ++i) {
        std::string cand = stem + "_" + std::to_string(i);
        if (!m_byName.count(cand)) {
            next = i + 1;
            return cand;
        }
    }
}

void Graph::linkBefore(Node *n, Node *before)
{
    touch();
    if (!before) {
        n->m_prev = m_tail;
        n->m_next = nullptr;
        if (m_tail)
            m_tail->m_next = n;
        else
            m_head = n;
        m_tail = n;
    } else {
        n->m_next = before;
        n->m_prev = before->m_prev;
        if (before->m_prev)
            before->m_prev->m_next = n;
        else
            m_head = n;
        before->m_prev = n;
    }
    ++m_size;
    m_orderValid = false;
}

void Graph::touch()
{
    static std::atomic<uint64_t> s_revisions{0};
    m_revision = ++s_revisions;
}

void Graph::unlink(Node *n)
{
    touch();
    if (n->m_prev)
        n->m_prev->m_next = n->m_next;
    else
        m_head = n->m_next;
    if (n->m_next)
        n->m_next->m_prev = n->m_prev;
    else
        m_tail = n->m_prev;
    n->m_prev = n->m_next = nullptr;
    --m_size;
    m_orderValid = false;
}

void Graph::addUses(Node *n, bool fresh)
{
    // A fresh node is in no user list yet, and inputNodes() has no duplicates: skip the search
    // (it is what keeps loading a node with 100k users linear).
    for (Node *in : n->inputNodes())
        if (fresh || std::find(in->m_users.begin(), in->m_users.end(), n) == in->m_users.end())
            in->m_users.push_back(n);
}

void Graph::removeUser(Node *input, Node *user)
{
    auto &u = input->m_users;
    auto it = std::find(u.begin(), u.end(), user);
    if (it != u.end())
        u.erase(it);
}

void Graph::removeUses(Node *n)
{
    for (Node *in : n->inputNodes())
        removeUser(in, n);
}

Node *Graph::create(OpKind op, std::string target, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs,
                    std::string nm, Node *before)
{
    auto owned = std::unique_ptr<Node>(new Node());
    Node *n = owned.get();
    n->m_id = uint32_t(m_arena.size());
    m_arena.push_back(std::move(owned));
    n->m_graph = this;
    n->m_op = op;
    n->m_target = std::move(target);
    n->m_args = std::move(args);
    n->m_kwargs = std::move(kwargs);
    n->m_name = uniqueName(nm.empty() ? std::string("node") : std::move(nm));
    m_byName.emplace(n->m_name, n);
    linkBefore(n, before);
    addUses(n, true);
    for (auto *o : m_observers)
        o->notifyNodeInserted(n);
    return n;
}

void Graph::setArgs(Node *n, std::vector<Argument> args)
{
    touch();
    bool fresh = n->m_args.empty() && n->m_kwargs.empty();
    if (!fresh)
        n->m_meta.decomposition.reset(); // traced for the old call
    removeUses(n);
    n->m_args = std::move(args);
    addUses(n, fresh);
    for (auto *o : m_observers)
        o->notifyNodeChanged(n);
}

void Graph::setKwargs(Node *n, std::vector<std::pair<std::string, Argument>> kwargs)
{
    touch();
    if (!n->m_args.empty() || !n->m_kwargs.empty())
        n->m_meta.decomposition.reset(); // traced for the old call
    removeUses(n);
    n->m_kwargs = std::move(kwargs);
    addUses(n);
    for (auto *o : m_observers)
        o->notifyNodeChanged(n);
}

void Graph::setInputs(Node *n, std::vector<Argument> args, std::vector<std::pair<std::string, Argument>> kwargs)
{
    touch();
    bool fresh = n->m_args.empty() && n->m_kwargs.empty();
    if (!fresh)
        n->m_meta.decomposition.reset(); // traced for the old call
    removeUses(n);
    n->m_args = std::move(args);
    n->m_kwargs = std::move(kwargs);
    addUses(n, fresh);
    for (auto *o : m_observers)
        o->notifyNodeChanged(n);
}

void Graph::setTarget(Node *n, std::string target)
{
    touch();
    if (n->m_target != target)
        n->m_meta.decomposition.reset(); // traced for the old call
    n->m_target = std::move(target);
    for (auto *o : m_observers)
        o->notifyNodeChanged(n);
}

void Graph::replaceUse(Node *user, Node *from, Node *to)
{
    if (from == to)
        return;
    int hits = 0;
    for (auto &a : user->m_args)
        hits += a.replaceNode(from, to);
    for (auto &e : user->m_kwargs)
        hits += e.second.replaceNode(from, to);
    if (!hits)
        return;
    touch();
    removeUser(from, user);
    if (to && std::find(to->m_users.begin(), to->m_users.end(), user) == to->m_users.end())
        to->m_users.push_back(user);
    for (auto *o : m_observers)
        o->notifyNodeChanged(user);
}

std::vector<Node *> Graph::replaceAllUsesWith(Node *from, Node *to)
{
    std::vector<Node *> users = from->m_users;
    for (Node *u : users)
        if (u != to) // a node never becomes its own input
            replaceUse(u, from, to);
    return users;
}

bool Graph::erase(Node *n)
{
    if (!n || n->m_erased || !n->m_users.empty())
        return false;
    for (auto *o : m_observers)
        o->notifyNodeErased(n);
    removeUses(n);
    unlink(n);
    m_byName.erase(n->m_name);
    n->m_erased = true;
    return true;
}

void Graph::restore(Node *n, Node *before)
{
    if (!n->m_erased)
        return;
    n->m_erased = false;
    if (m_byName.count(n->m_name))
        n->m_name = uniqueName(n->m_name);
    m_byName.emplace(n->m_name, n);
    linkBefore(n, before);
    addUses(n);
    for (auto *o : m_observers)
        o->notifyNodeInserted(n);
}

void Graph::moveBefore(Node *n, Node *before)
{
    if (n == before || (before && n->m_next == before) || (!before && n == m_tail))
        return;
    unlink(n);
    linkBefore(n, before);
}

bool Graph::rename(Node *n, const std::string &nm)
{
    if (nm == n->m_name)
        return true;
    if (m_byName.count(nm) || nm.empty())
        return false;
    touch();
    m_byName.erase(n->m_name);
    n->m_name = nm;
    m_byName.emplace(nm, n);
    return true;
}

void Graph::renumber() const
{
    uint64_t i = 0;
    for (Node *n = m_head; n; n = n->m_next)
        n->m_order = i++;
    m_orderValid = true;
}

bool Graph::before(const Node *a, const Node *b) const
{
    if (!m_orderValid)
        renumber();
    return a->m_order < b->m_order;
}

bool Graph::topologicalSort()
{
    touch();
    // Iterative DFS over inputs in program order: each node is emitted after its inputs, and
    // nodes already in a valid order stay where they are.
    enum : uint8_t { White, Grey, Black };
    std::vector<uint8_t> state(m_arena.size(), White);
    std::vector<Node *> order;
    order.reserve(m_size);
    struct Frame {
        Node *node;
        std::vector<Node *> inputs;
        size_t next = 0;
    };
    std::vector<Frame> stack;
    for (Node *root = m_head; root; root = root->m_next) {
        if (state[root->m_id] != White)
            continue;
        stack.push_back({root, root->inputNodes()});
        state[root->m_id] = Grey;
        while (!stack.empty()) {
            Frame &f = stack.back();
            Node *n = f.node;
            if (f.next < f.inputs.size()) {
                Node *in = f.inputs[f.next++];
                if (state[in->m_id] == Grey)
                    return false;
                if (state[in->m_id] == White) {
                    state[in->m_id] = Grey;
                    stack.push_back({in, in->inputNodes()});
                }
                continue;
            }
            state[n->m_id] = Black;
            order.push_back(n);
            stack.pop_back();
        }
    }
    m_head = m_tail = nullptr;
    Node *prev = nullptr;
    for (Node *n : order) {
        n->m_prev = prev;
        n->m_next = nullptr;
        if (prev)
            prev->m_next = n;
        else
            m_head = n;
        prev = n;
    }
    m_tail = prev;
    m_orderValid = false;
    return true;
}

const ModuleInfo *Graph::module(const std::string &path) const
{
    if (m_moduleIndexed != modules.data() || m_moduleCount != modules.size()) {
        m_moduleIndex.clear();
        for (size_t i = 0; i < modules.size(); ++i)
            m_moduleIndex.emplace(modules[i].path, i);
        m_moduleIndexed = modules.data();
        m_moduleCount = modules.size();
    }
    auto it = m_moduleIndex.find(path);
    return it == m_moduleIndex.end() ? nullptr : &modules[it->second];
}

/// getitem(x, k) of a sequence value with a known length: k must name one of its items.
static std::optional<LintError> getitemRangeError(const Node &n)
{
    const auto &args = n.args();
    if (n.op() != OpKind::CallFunction || n.target() != "operator.getitem" || args.size() != 2 || !args[0].isNode() || !args[1].isInt() ||
        !args[0].toNode() || args[0].toNode()->meta().val.kind != ValueMeta::Kind::Sequence)
        return std::nullopt;
    const auto items = int64_t(args[0].toNode()->meta().val.items.size());
    const int64_t k = args[1].toInt();
    if (items == 0 || (k < items && k >= -items))
        return std::nullopt;
    return LintError{n.name(),
                     "index " + std::to_string(k) + " is out of range for the " + std::to_string(items) + " values of '" +
                         args[0].toNode()->name() + "'"};
}

std::vector<LintError> Graph::lint() const
{
    std::vector<LintError> errors;
    std::unordered_set<const Node *> seen;
    std::unordered_set<std::string> names;
    seen.reserve(m_size);
    size_t outputs = 0;
    std::unordered_set<std::string> moduleNames, paramNames;
    for (const auto &m : modules)
        moduleNames.insert(m.path);
    for (const auto &p : params)
        paramNames.insert(p.name);
    size_t count = 0, forwardEdges = 0, listedUsers = 0;
    for (Node *n = m_head; n; n = n->m_next) {
        ++count;
        if (n->m_graph != this || n->m_erased)
            errors.push_back({n->m_name, "is linked into the graph but not owned by it or erased"});
        if (!names.insert(n->m_name).second)
            errors.push_back({n->m_name, "duplicate node name"});
        if (n->m_name.empty())
            errors.push_back({"", "a node has an empty name"});
        auto checkRef = [&](Node *in) {
            if (!in) {
                errors.push_back({n->m_name, "has a null input reference"});
                return;
            }
            if (in->m_graph != this)
                errors.push_back({n->m_name, "uses '" + in->m_name + "', which belongs to another graph"});
            else if (in->m_erased)
                errors.push_back({n->m_name, "uses '" + in->m_name + "', which was erased"});
            else if (!seen.count(in))
                errors.push_back({n->m_name, "uses '" + in->m_name + "' before it is defined (not in topological order)"});
            else if (std::find(in->m_users.begin(), in->m_users.end(), n) == in->m_users.end())
                errors.push_back({n->m_name, "is missing from the users of its input '" + in->m_name + "'"});
        };
        auto inputs = n->inputNodes();
        for (Node *in : inputs) {
            checkRef(in);
            if (in->m_graph == this && !in->m_erased)
                ++forwardEdges;
        }
        if (inputs.empty()) // null references are dropped by inputNodes(); look for them directly
            for (const auto &a : n->m_args)
                a.forEachNode([&](Node *in) {
                    if (!in)
                        checkRef(in);
                });
        listedUsers += n->m_users.size();
        for (Node *u : n->m_users)
            if (u->m_erased)
                errors.push_back({n->m_name, "lists erased node '" + u->m_name + "' as a user"});
        if (n->m_op == OpKind::Output) {
            ++outputs;
            if (n->m_next)
                errors.push_back({n->m_name, "output node is not the last node"});
        }
        // getitem(x, k) of a tuple value with known length: k must name one of its items.
        if (auto e = getitemRangeError(*n))
            errors.push_back(*e);
        if (n->m_op == OpKind::CallModule && !modules.empty() && !moduleNames.count(n->m_target))
            errors.push_back({n->m_name, "calls module '" + n->m_target + "', which is not in the module hierarchy"});
        if (n->m_op == OpKind::GetAttr && !params.empty() && !paramNames.count(n->m_target)) {
            // get_attr may also fetch a submodule or plain attribute; only flag unknown dotted paths.
            if (!moduleNames.count(n->m_target))
                errors.push_back({n->m_name, "reads attribute '" + n->m_target + "', which is neither a parameter, buffer nor module"});
        }
        seen.insert(n);
    }
    // Every (input, user) edge was found in the input's user list above; equal totals mean the user
    // lists hold nothing else.
    if (listedUsers != forwardEdges)
        errors.push_back({"",
                          "user lists hold " + std::to_string(listedUsers) + " entries for " + std::to_string(forwardEdges) +
                              " edges (a node lists a user that does not use it)"});
    if (count != m_size)
        errors.push_back({"", "node count mismatch: list has " + std::to_string(count) + ", graph records " + std::to_string(m_size)});
    if (outputs == 0)
        errors.push_back({"", "graph has no output node"});
    else if (outputs > 1)
        errors.push_back({"", "graph has " + std::to_string(outputs) + " output nodes (exactly one allowed)"});
    return errors;
}

std::vector<LintError> Graph::lintNodes(const std::vector<const Node *> &nodes) const
{
    std::vector<LintError> errors;
    for (const Node *n : nodes) {
        if (!n || n->m_erased)
            continue;
        if (n->m_graph != this) {
            errors.push_back({n->m_name, "is not owned by this graph"});
            continue;
        }
        if (n->m_name.empty() || find(n->m_name) != n)
            errors.push_back({n->m_name, "its name does not find it (empty or duplicate)"});
        for (Node *in : n->inputNodes()) {
            if (in->m_graph != this)
                errors.push_back({n->m_name, "uses '" + in->m_name + "', which belongs to another graph"});
            else if (in->m_erased)
                errors.push_back({n->m_name, "uses '" + in->m_name + "', which was erased"});
            else if (!before(in, n))
                errors.push_back({n->m_name, "uses '" + in->m_name + "' before it is defined (not in topological order)"});
            else if (std::find(in->m_users.begin(), in->m_users.end(), n) == in->m_users.end())
                errors.push_back({n->m_name, "is missing from the users of its input '" + in->m_name + "'"});
        }
        for (Node *u : n->m_users) {
            const auto ins = u->inputNodes();
            if (u->m_erased)
                errors.push_back({n->m_name, "lists erased node '" + u->m_name + "' as a user"});
            else if (std::find(ins.begin(), ins.end(), n) == ins.end())
                errors.push_back({n->m_name, "lists '" + u->m_name + "' as a user, which does not use it"});
        }
        if (n->m_op == OpKind::Output && n->m_next)
            errors.push_back({n->m_name, "output node is not the last node"});
        if (auto e = getitemRangeError(*n))
            errors.push_back(*e);
    }
    return errors;
}

void Graph::addObserver(GraphObserver *o) { m_observers.push_back(o); }

void Graph::removeObserver(GraphObserver *o)
{
    m_observers.erase(std::remove(m_observers.begin(), m_observers.end(), o), m_observers.end());
}

std::string RecordedSession::summary() const
{
    auto count = [](size_t n, const char *one, const char *many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
    std::string s = "recorded by " + (tool.empty() ? std::string("an unnamed tool") : tool) + ": ";
    s += patterns.empty() ? "preset " + preset : "patterns " + patterns;
    s += ", " + count(steps.size(), "step", "steps");
    if (!patternPaths.empty())
        s += ", " + count(patternPaths.size(), "pattern path", "pattern paths");
    return s;
}

} // namespace fxlens::ir
