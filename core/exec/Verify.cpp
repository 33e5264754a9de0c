// SPDX-License-Identifier: MIT
// Comparing outputs: dtype-aware tolerances, ground-truth files, and the per-step verifier of the
// rewrite engine.
#include "exec/RunnerImpl.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace fxlens::exec {

using namespace detail;

static OutputDiff diffOne(size_t k, const at::Tensor &e, const at::Tensor &a)
{
    OutputDiff d;
    d.index = k;
    d.dtype = dtypeName(a.scalar_type());
    d.shape = a.sizes().vec();
    if (e.sizes() != a.sizes()) {
        d.note = "shape " + c10::str(a.sizes()) + " != expected " + c10::str(e.sizes());
        return d;
    }
    if (e.scalar_type() != a.scalar_type()) {
        d.note = "dtype " + dtypeName(a.scalar_type()) + " != expected " + dtypeName(e.scalar_type());
        return d;
    }
    if (e.numel() == 0) {
        d.pass = true;
        return d;
    }
    at::Tensor ed, ad;
    try {
        ed = asDouble(e);
        ad = asDouble(a);
    } catch (const std::exception &ex) {
        // No numeric values (bits, sub-byte integers, float4): equal when the bytes are.
        const bool raw = e.layout() == at::kStrided && a.layout() == at::kStrided && e.is_contiguous() && a.is_contiguous();
        if (!raw) {
            d.note = "cannot compare " + d.dtype + " values: " + firstLine(ex.what());
            return d;
        }
        at::Tensor ec = e.to(at::kCPU), ac = a.to(at::kCPU);
        d.pass = ec.nbytes() == ac.nbytes() && std::memcmp(ec.data_ptr(), ac.data_ptr(), ec.nbytes()) == 0;
        if (!d.pass)
            d.note = d.dtype + " values differ (compared bit for bit)";
        return d;
    }
    at::Tensor diff = (ad - ed).abs();
    d.maxAbs = diff.max().item<double>();
    d.maxRel = (diff / ed.abs().clamp_min(1e-12)).max().item<double>();
    const auto st = a.scalar_type();
    if (st == at::kFloat || st == at::kComplexFloat) {
        d.rtol = 1e-4;
        d.atol = 1e-5;
    } else if (st == at::kDouble || st == at::kComplexDouble) {
        d.rtol = 1e-7;
        d.atol = 1e-9;
    } else if (st == at::kHalf || st == at::kBFloat16 || st == at::kComplexHalf) {
        d.rtol = 1e-2;
        d.atol = 1e-3;
    } else if (at::isFloat8Type(st)) { // 2 or 3 mantissa bits: one step of rounding
        d.rtol = 0.25;
        d.atol = 1e-3;
    }
    // Tolerances scale with the output's magnitude (a sum of 10^4 terms rounds differently).
    double scale = std::max(1.0, ed.abs().max().item<double>());
    bool nanMismatch = (ed.isnan() != ad.isnan()).any().item<bool>();
    d.pass = !nanMismatch && (diff <= d.atol * scale + d.rtol * ed.abs()).logical_or(ed.isnan()).all().item<bool>();
    if (nanMismatch)
        d.note = "NaN in one output but not the other";
    else if (ed.isnan().any().item<bool>())
        d.note = "NaN in both outputs (compared where finite)";
    return d;
}

VerifyReport Runner::compare(const Outputs &expected, const Outputs &actual) const
{
    VerifyReport r;
    r.pass = expected.tensors.size() == actual.tensors.size();
    for (size_t k = 0; k < std::min(expected.tensors.size(), actual.tensors.size()); ++k) {
        r.outputs.push_back(diffOne(k, expected.tensors[k], actual.tensors[k]));
        r.pass = r.pass && r.outputs.back().pass;
    }
    if (expected.tensors.size() != actual.tensors.size()) {
        OutputDiff d;
        d.note = std::to_string(actual.tensors.size()) + " outputs, expected " + std::to_string(expected.tensors.size());
        r.outputs.push_back(d);
    }
    return r;
}

Result<VerifyReport> Runner::compareWithFile(const Outputs &actual, const std::string &path) const
{
    auto f = io::readSafetensors(path);
    if (!f)
        return f.error();
    Outputs expected;
    try {
        for (size_t k = 0;; ++k) {
            auto it = f.value().find("output:" + std::to_string(k));
            if (it == f.value().end())
                break;
            expected.tensors.push_back(fromSafe(it->second));
        }
    } catch (const std::exception &e) {
        return diag(path + ": " + firstLine(e.what()));
    }
    if (expected.tensors.empty())
        return diag(path + ": no tensors named output:0, output:1, ...");
    return compare(expected, actual);
}

Status Runner::saveOutputs(const Outputs &o, const std::string &path) const
{
    // Every output is converted before the file is touched: one that safetensors cannot hold is
    // refused, naming the node it came from, and nothing is written.
    std::map<std::string, io::SafeTensor> m;
    for (size_t k = 0; k < o.tensors.size(); ++k) {
        const std::string name = "output:" + std::to_string(k);
        try {
            m[name] = toSafe(o.tensors[k]);
        } catch (const std::exception &e) {
            const at::Tensor &t = o.tensors[k];
            Diagnostic d = diag(name + " is " + dtypeName(t.scalar_type()) + c10::str(t.sizes()) + ": " + firstLine(e.what()) +
                                    "; nothing was written",
                                k < o.nodes.size() ? o.nodes[k] : std::string());
            d.file = path;
            return d;
        }
    }
    return io::writeSafetensors(m, path);
}

std::string VerifyReport::summary() const
{
    std::ostringstream s;
    for (const auto &o : outputs) {
        s << "output " << o.index << ": ";
        if (!o.note.empty())
            s << o.note;
        else
            s << o.dtype << " max abs err " << o.maxAbs << ", max rel err " << o.maxRel << " (atol " << o.atol << ", rtol " << o.rtol
              << ")";
        s << (o.pass ? "  ok" : "  MISMATCH") << "\n";
    }
    s << (pass ? "outputs match\n" : "outputs differ\n");
    return s.str();
}

Result<VerifyReport> verifyGraphs(const ir::Graph &a, const ir::Graph &b, const ExecOptions &opts)
{
    auto r = Runner::create(a, opts);
    if (!r)
        return r.error();
    // A frozen `b` reads `_frozen_*` values that `a`, its original, does not have: its fold graph
    // computes them from `a`'s weights.
    if (auto st = r.value()->computeFrozenWeights(b); !st)
        return st.error();
    auto oa = r.value()->run(a);
    if (!oa)
        return oa.error();
    auto ob = r.value()->run(b);
    if (!ob)
        return ob.error();
    return r.value()->compare(*oa.value(), *ob.value());
}

std::function<std::string(const ir::Graph &)> makeStepVerifier(const ir::Graph &original, const ExecOptions &opts, std::string &error)
{
    auto r = Runner::create(original, opts);
    if (!r) {
        error = r.error().toString();
        return nullptr;
    }
    std::shared_ptr<Runner> runner(std::move(r.value()));
    auto ref = runner->run(original);
    if (!ref) {
        error = ref.error().toString();
        return nullptr;
    }
    std::shared_ptr<Outputs> expected = ref.value();
    return [runner, expected](const ir::Graph &g) -> std::string {
        auto o = runner->run(g);
        if (!o)
            return "the new version does not run: " + o.error().toString();
        auto rep = runner->compare(*expected, *o.value());
        if (rep.pass)
            return {};
        for (const auto &d : rep.outputs)
            if (!d.pass)
                return "output " + std::to_string(d.index) + " changed: " +
                    (d.note.empty() ? "max abs err " + std::to_string(d.maxAbs) + ", max rel err " + std::to_string(d.maxRel) : d.note);
        return "outputs changed";
    };
}

} // namespace fxlens::exec