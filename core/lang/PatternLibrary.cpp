// SPDX-License-Identifier: MIT
// PatternLibrary: pattern files loaded into a registry, with their diagnostics, reloaded on change.
#include "lang/LangInternal.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fxlens::lang {

namespace {
std::filesystem::file_time_type mtimeOf(const std::string &p)
{
    std::error_code ec;
    auto t = std::filesystem::last_write_time(p, ec);
    return ec ? std::filesystem::file_time_type{} : t;
}
} // namespace

bool PatternLibrary::loadFile(const std::string &path, rewrite::PatternRegistry &reg)
{
    auto it = std::find_if(m_files.begin(), m_files.end(), [&](const FileState &f) { return f.path == path; });
    if (it == m_files.end()) {
        m_files.push_back({path, {}, {}, {}});
        it = m_files.end() - 1;
    }
    FileState &st = *it;
    if (!st.pattern.empty())
        reg.remove(st.pattern);
    st.pattern.clear();
    st.diagnostic.clear();
    st.mtime = mtimeOf(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        Diagnostic d;
        d.file = path;
        d.message = "cannot open the pattern file";
        st.diagnostic = d.toString() + "\n";
        return false;
    }
    std::string src((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = compilePattern(src, path);
    if (!r) {
        st.diagnostic = renderDiagnostic(r.error(), src);
        return false;
    }
    std::string name = r.value()->name;
    std::string err = reg.add(std::move(r.value()));
    if (!err.empty()) {
        Diagnostic d;
        d.file = path;
        d.line = 1;
        d.column = 1;
        d.message = err + " (another pattern, built in or from another file, has this name)";
        st.diagnostic = renderDiagnostic(d, src);
        return false;
    }
    st.pattern = name;
    return true;
}

size_t PatternLibrary::loadDirectory(const std::string &dir, rewrite::PatternRegistry &reg)
{
    if (std::find(m_dirs.begin(), m_dirs.end(), dir) == m_dirs.end())
        m_dirs.push_back(dir);
    std::vector<std::string> paths;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".fxpat")
            paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    size_t failed = 0;
    for (const auto &p : paths)
        failed += !loadFile(p, reg);
    return failed;
}

std::vector<std::string> PatternLibrary::reloadChanged(rewrite::PatternRegistry &reg)
{
    std::vector<std::string> changed;
    // Removed files.
    for (auto it = m_files.begin(); it != m_files.end();) {
        if (!std::filesystem::exists(it->path)) {
            if (!it->pattern.empty())
                reg.remove(it->pattern);
            changed.push_back(it->path);
            it = m_files.erase(it);
        } else {
            ++it;
        }
    }
    // Changed files.
    std::vector<std::string> paths;
    for (const auto &f : m_files)
        if (mtimeOf(f.path) != f.mtime)
            paths.push_back(f.path);
    // New files in the loaded directories.
    for (const auto &dir : m_dirs) {
        std::error_code ec;
        for (const auto &e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().extension() == ".fxpat" &&
                std::none_of(m_files.begin(), m_files.end(), [&](const FileState &f) { return f.path == e.path().string(); }))
                paths.push_back(e.path().string());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto &p : paths) {
        loadFile(p, reg);
        changed.push_back(p);
    }
    return changed;
}

std::string PatternLibrary::diagnostics() const
{
    std::string s;
    for (const auto &f : m_files)
        s += f.diagnostic;
    return s;
}

} // namespace fxlens::lang
