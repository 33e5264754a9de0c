// SPDX-License-Identifier: MIT
// Diagnostic: an error or warning that names where it happened (file, line, column, node).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace fxlens {

struct Diagnostic {
    enum class Severity { Error, Warning, Note };
    Severity severity = Severity::Error;
    std::string file;
    int line = 0;     ///< 1-based, 0 = unknown
    int column = 0;   ///< 1-based, 0 = unknown
    std::string node; ///< graph node the problem is about ("" if none)
    std::string message;

    /// "file:line:col: error: message" (parts that are unknown are left out).
    std::string toString() const
    {
        std::string s;
        if (!file.empty()) {
            s += file;
            if (line > 0) {
                s += ":" + std::to_string(line);
                if (column > 0)
                    s += ":" + std::to_string(column);
            }
            s += ": ";
        }
        s += severity == Severity::Error ? "error: " : severity == Severity::Warning ? "warning: " : "note: ";
        if (!node.empty())
            s += "node '" + node + "': ";
        return s + message;
    }
};

/// A value or the diagnostic that explains why there is none. No exceptions cross library borders.
template <typename T> class Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Diagnostic d) : m_v(std::move(d)) {}
    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T &value() { return std::get<0>(m_v); }
    const T &value() const { return std::get<0>(m_v); }
    T &operator*() { return value(); }
    T *operator->() { return &value(); }
    const Diagnostic &error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Diagnostic> m_v;
};

/// Success, or the diagnostic that explains the failure: what a function that returns no value
/// returns (Result<T> for one that does).
class Status {
public:
    Status() = default;
    Status(Diagnostic d) : m_error(std::move(d)) {}
    bool ok() const { return !m_error; }
    explicit operator bool() const { return ok(); }
    const Diagnostic &error() const { return *m_error; }

private:
    std::optional<Diagnostic> m_error;
};

} // namespace fxlens
