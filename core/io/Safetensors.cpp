// SPDX-License-Identifier: MIT
// safetensors reading and writing.
#include "io/Safetensors.h"
#include "io/AtomicFile.h"

#include <filesystem>

#include <fstream>
#include <nlohmann/json.hpp>

namespace fxlens::io {

namespace {

const std::pair<const char *, const char *> kDtypes[] = {
    {"float32", "F32"}, {"float16", "F16"}, {"bfloat16", "BF16"}, {"float64", "F64"}, {"int64", "I64"},
    {"int32", "I32"},   {"int16", "I16"},   {"int8", "I8"},       {"uint8", "U8"},    {"bool", "BOOL"},
};

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
    for (const auto &[a, b] : kDtypes)
        if (f == a)
            return b;
    return {};
}

std::string fxlensDtype(const std::string &s)
{
    for (const auto &[a, b] : kDtypes)
        if (s == b)
            return a;
    return {};
}

size_t dtypeSize(const std::string &s)
{
    if (s == "F64" || s == "I64")
        return 8;
    if (s == "F32" || s == "I32")
        return 4;
    if (s == "F16" || s == "BF16" || s == "I16")
        return 2;
    if (s == "I8" || s == "U8" || s == "BOOL")
        return 1;
    return 0;
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
                return err(path, "tensor '" + it.key() + "': unsupported dtype " + t.dtype);
            uint64_t count = 1;
            for (auto s : t.shape)
                if (s < 0 || __builtin_mul_overflow(count, uint64_t(s), &count))
                    return err(path, "tensor '" + it.key() + "': shape " + nlohmann::json(t.shape).dump() + " is negative or too large");
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
    nlohmann::json h = nlohmann::json::object();
    uint64_t offset = 0;
    for (const auto &[name, t] : tensors) {
        h[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
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
    if (auto e = writeFileAtomic(path, out); !e.empty())
        return err(path, "cannot write file: " + e);
    return {};
}

} // namespace fxlens::io
