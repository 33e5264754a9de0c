// SPDX-License-Identifier: MIT
// safetensors reading and writing.
#include "io/Safetensors.h"
#include "io/AtomicFile.h"

#include <filesystem>

#include <fstream>
#include <nlohmann/json.hpp>

namespace fxlens::io {

namespace {

/// Every dtype safetensors has a code for that torch has too: fxlens (torch) name, code, bytes per
/// torch element. F4 holds float4_e2m1fn_x2, whose torch element is a pair of 4-bit values.
struct DtypeCode {
    const char *fxlens, *code;
    size_t size;
};
const DtypeCode kDtypes[] = {
    {"float64", "F64", 8},
    {"float32", "F32", 4},
    {"float16", "F16", 2},
    {"bfloat16", "BF16", 2},
    {"complex64", "C64", 8},
    {"int64", "I64", 8},
    {"int32", "I32", 4},
    {"int16", "I16", 2},
    {"int8", "I8", 1},
    {"uint64", "U64", 8},
    {"uint32", "U32", 4},
    {"uint16", "U16", 2},
    {"uint8", "U8", 1},
    {"bool", "BOOL", 1},
    {"float8_e4m3fn", "F8_E4M3", 1},
    {"float8_e5m2", "F8_E5M2", 1},
    {"float8_e4m3fnuz", "F8_E4M3FNUZ", 1},
    {"float8_e5m2fnuz", "F8_E5M2FNUZ", 1},
    {"float8_e8m0fnu", "F8_E8M0", 1},
    {"float4_e2m1fn_x2", "F4", 1},
};

std::string knownCodes()
{
    std::string s;
    for (const auto &d : kDtypes)
        s += (s.empty() ? "" : ", ") + std::string(d.code);
    return s;
}

Diagnostic err(const std::string &path, const std::string &msg)
{
    Diagnostic d;
    d.file = path;
    d.message = msg;
    return d;
}

} // namespace

std::string safetensorsDtype(const std::string &f)
{
    for (const auto &d : kDtypes)
        if (f == d.fxlens)
            return d.code;
    return {};
}

std::string fxlensDtype(const std::string &s)
{
    for (const auto &d : kDtypes)
        if (s == d.code)
            return d.fxlens;
    return {};
}

size_t dtypeSize(const std::string &s)
{
    for (const auto &d : kDtypes)
        if (s == d.code)
            return d.size;
    return 0;
}

std::string unstorableReason(const std::string &f)
{
    if (!safetensorsDtype(f).empty())
        return {};
    const std::string no = "safetensors has no code for " + (f.empty() ? std::string("a tensor without a dtype") : f);
    auto starts = [&](const char *p) { return f.rfind(p, 0) == 0; };
    if (f == "complex128" || f == "complex32")
        return no + " (its one complex code is C64): convert it with .to(torch.complex64), or store torch.view_as_real(t)";
    if (starts("qint") || starts("quint"))
        return no + " (a quantized dtype): store t.dequantize(), or t.int_repr() with its scale and zero point";
    if (starts("bits"))
        return no + " (an untyped bit container): view it as a typed dtype, e.g. t.view(torch.uint8)";
    if ((starts("int") || starts("uint")) && f.size() <= 5)
        return no + " (a sub-byte integer): store it as uint8 or int8";
    return no + " (it has " + knownCodes() + ")";
}

Result<std::map<std::string, SafeTensor>> readSafetensors(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return err(path, "cannot open file");
    uint8_t lenBytes[8];
    if (!in.read(reinterpret_cast<char *>(lenBytes), 8))
        return err(path, "not a safetensors file (shorter than its 8-byte header length)");
    uint64_t len = 0;
    for (int i = 7; i >= 0; --i)
        len = (len << 8) | lenBytes[i];
    std::error_code ec;
    const uint64_t fileSize = std::filesystem::file_size(path, ec);
    if (len > (uint64_t(1) << 30) || (!ec && len > fileSize - 8))
        return err(
            path, "not a safetensors file (header length " + std::to_string(len) + " in a file of " + std::to_string(fileSize) + " bytes)");
    std::string header(len, '\0');
    if (!in.read(header.data(), std::streamsize(len)))
        return err(path, "truncated safetensors header");
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    nlohmann::json h = nlohmann::json::parse(header, nullptr, false);
    if (h.is_discarded() || !h.is_object())
        return err(path, "safetensors header is not a JSON object");
    std::map<std::string, SafeTensor> out;
    try {
        for (auto it = h.begin(); it != h.end(); ++it) {
            if (it.key() == "__metadata__")
                continue;
            const auto &e = it.value();
            if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
                return err(path, "tensor '" + it.key() + "': needs dtype, shape and data_offsets");
            SafeTensor t;
            t.dtype = e["dtype"].get<std::string>();
            t.shape = e["shape"].get<std::vector<int64_t>>();
            auto off = e["data_offsets"].get<std::vector<uint64_t>>();
            if (!dtypeSize(t.dtype))
                return err(path, "tensor '" + it.key() + "': unsupported dtype " + t.dtype + " (fxlens reads " + knownCodes() + ")");
            uint64_t count = 1;
            for (auto s : t.shape)
                if (s < 0 || __builtin_mul_overflow(count, uint64_t(s), &count))
                    return err(path, "tensor '" + it.key() + "': shape " + nlohmann::json(t.shape).dump() + " is negative or too large");
            if (t.dtype == "F4") { // the file counts 4-bit values, torch pairs of them
                if (t.shape.empty() || t.shape.back() % 2)
                    return err(path,
                               "tensor '" + it.key() + "': F4 shape " + nlohmann::json(t.shape).dump() +
                                   " does not end in an even dimension (float4_e2m1fn_x2 holds pairs)");
                t.shape.back() /= 2;
                count /= 2;
            }
            uint64_t bytes = 0;
            if (__builtin_mul_overflow(count, uint64_t(dtypeSize(t.dtype)), &bytes))
                return err(path, "tensor '" + it.key() + "': shape " + nlohmann::json(t.shape).dump() + " is too large");
            if (off.size() != 2 || off[1] < off[0] || off[1] > data.size() || off[1] - off[0] != bytes)
                return err(path, "tensor '" + it.key() + "': data_offsets do not fit its shape or the file");
            t.data.assign(data.begin() + long(off[0]), data.begin() + long(off[1]));
            out.emplace(it.key(), std::move(t));
        }
    } catch (const nlohmann::json::exception &e) { // a field of the wrong type
        return err(path, std::string("malformed safetensors header: ") + e.what());
    }
    // Tied weights are stored once; "fxlens.aliases" (a JSON object as the metadata string) names the
    // other names of each stored tensor.
    if (auto m = h.find("__metadata__");
        m != h.end() && m->is_object() && m->contains("fxlens.aliases") && (*m)["fxlens.aliases"].is_string()) {
        nlohmann::json aliases = nlohmann::json::parse((*m)["fxlens.aliases"].get<std::string>(), nullptr, false);
        if (aliases.is_object())
            for (auto a = aliases.begin(); a != aliases.end(); ++a) {
                if (!a.value().is_string())
                    continue;
                auto src = out.find(a.value().get<std::string>());
                if (src != out.end() && !out.count(a.key()))
                    out.emplace(a.key(), src->second);
            }
    }
    return out;
}

Status writeSafetensors(const std::map<std::string, SafeTensor> &tensors, const std::string &path)
{
    // Everything is checked before the file is touched: a reader opens every file this writes.
    nlohmann::json h = nlohmann::json::object();
    uint64_t offset = 0;
    for (const auto &[name, t] : tensors) {
        const size_t size = dtypeSize(t.dtype);
        if (!size) { // an empty dtype, or a torch name (of a dtype with no code, or by mistake)
            std::string why = unstorableReason(t.dtype);
            if (why.empty())
                why = "dtype '" + t.dtype + "' is a torch name, not its safetensors code " + safetensorsDtype(t.dtype);
            return err(path, "tensor '" + name + "': " + why + "; nothing was written");
        }
        uint64_t count = 1;
        for (auto s : t.shape)
            if (s < 0 || __builtin_mul_overflow(count, uint64_t(s), &count))
                return err(path, "tensor '" + name + "': shape " + nlohmann::json(t.shape).dump() + " is negative or too large");
        uint64_t bytes = 0;
        if (__builtin_mul_overflow(count, uint64_t(size), &bytes) || bytes != t.data.size())
            return err(path,
                       "tensor '" + name + "': " + std::to_string(t.data.size()) + " bytes of data for shape " +
                           nlohmann::json(t.shape).dump() + " of " + t.dtype + "; nothing was written");
        std::vector<int64_t> shape = t.shape;
        if (t.dtype == "F4") {
            if (shape.empty())
                return err(path,
                           "tensor '" + name +
                               "': a 0-dim float4_e2m1fn_x2 has no safetensors shape (F4 counts 4-bit "
                               "values in its last dimension); nothing was written");
            shape.back() *= 2;
        }
        h[name] = {{"dtype", t.dtype}, {"shape", shape}, {"data_offsets", {offset, offset + t.data.size()}}};
        offset += t.data.size();
    }
    std::string header = h.dump();
    while (header.size() % 8)
        header += ' ';
    std::string out;
    uint64_t len = header.size();
    for (int i = 0; i < 8; ++i)
        out.push_back(char((len >> (8 * i)) & 0xff));
    out += header;
    for (const auto &[name, t] : tensors)
        out.append(reinterpret_cast<const char *>(t.data.data()), t.data.size());
    if (Status st = writeFileAtomic(path, out); !st)
        return err(path, "cannot write file: " + st.error().message);
    return {};
}

} // namespace fxlens::io
