// SPDX-License-Identifier: MIT
// Meta helpers: printing and accessors.
#include "ir/Meta.h"

namespace fxlens::ir {

std::vector<int64_t> TensorMeta::sizes() const
{
    std::vector<int64_t> out;
    out.reserve(shape.size());
    for (const auto &d : shape)
        out.push_back(d.isStatic() ? d.value : -1);
    return out;
}

static std::string shortDtype(const std::string &d)
{
    static const std::pair<const char *, const char *> table[] = {
        {"float32", "f32"}, {"float16", "f16"},   {"bfloat16", "bf16"}, {"float64", "f64"},     {"int64", "i64"},  {"int32", "i32"},
        {"int16", "i16"},   {"int8", "i8"},       {"uint8", "u8"},      {"bool", "b8"},         {"uint16", "u16"}, {"uint32", "u32"},
        {"uint64", "u64"},  {"complex32", "c32"}, {"complex64", "c64"}, {"complex128", "c128"},
    };
    for (const auto &[full, s] : table)
        if (d == full)
            return s;
    return d;
}

std::string TensorMeta::toString() const
{
    std::string s = shortDtype(dtype) + "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ", ";
        s += shape[i].isStatic() ? std::to_string(shape[i].value) : shape[i].symbol;
    }
    return s + "]";
}

std::string ValueMeta::toString() const
{
    switch (kind) {
    case Kind::Unknown: return "?";
    case Kind::Tensor: return tensor.toString();
    case Kind::Scalar: return scalar;
    case Kind::Sequence: {
        std::string s = "(";
        for (size_t i = 0; i < items.size(); ++i) {
            if (i)
                s += ", ";
            s += items[i].toString();
        }
        return s + ")";
    }
    }
    return "?";
}

const std::string &Meta::modulePath() const
{
    static const std::string empty;
    return moduleStack.empty() ? empty : moduleStack.back().path;
}

} // namespace fxlens::ir
