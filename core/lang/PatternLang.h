// SPDX-License-Identifier: MIT
// The pattern language: a file holds one pattern written as a `pattern` function and a
// `replacement` function in restricted Python (the convention of torch.fx's replace_pattern and
// Inductor's register_replacement), plus `assert` constraints and settings. It compiles into the
// same pattern graphs the built-in patterns use and registers through the same registry, so files
// run in the same engine (step, undo, breakpoints). docs/PATTERNS.md is the reference.
#pragma once

#include "lang/Syntax.h"
#include "rewrite/PatternGraph.h"
#include "util/Diagnostic.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fxlens::lang {

/// A compiled pattern file. Keeps its source so that it can be shown and exported.
class FilePattern : public rewrite::GraphPattern {
public:
    std::string file;
    std::string source;
    Module module;
    struct Program;
    std::shared_ptr<const Program> program;
};

/// Compiles one pattern file (its text and the name to report it by). Errors carry file, line and
/// column; renderDiagnostic() adds the source line and a caret.
Result<std::unique_ptr<FilePattern>> compilePattern(const std::string &source, const std::string &file);

/// "file:line:col: error: message" + the source line + a caret under the offending token.
std::string renderDiagnostic(const Diagnostic &d, const std::string &source);

/// The closest known op to a misspelled one ("" when nothing is close).
std::string suggestOp(const std::string &name);
/// The option closest to a misspelled name by edit distance ("" when nothing is close): the
/// "did you mean" of every diagnostic.
std::string closestName(const std::string &name, const std::vector<std::string> &options);

/// The pattern as Python: `pattern` and `replacement` functions usable with
/// torch.fx.subgraph_rewriter.replace_pattern (asserts become a `match_filter` function).
std::string exportPython(const FilePattern &p);

/// One instance of a pattern for the equivalence check: its `pattern` body spelled out as a graph on
/// random parameter values (tensors: random static shapes, float32; ints, lists, bools from small
/// ranges, by annotation), returning the anchor. nullptr + `why` when the pattern cannot be spelled
/// out (a '_' wildcard, a str parameter, an op the sample does not fit). `desc` lists the values.
std::unique_ptr<ir::Graph> instantiate(const FilePattern &p, uint64_t seed, std::string &why, std::string &desc);

/// Pattern files of directories, registered into a registry; reloads files that changed. A file
/// that fails to compile keeps its diagnostic and takes nothing else down.
class PatternLibrary {
public:
    struct FileState {
        std::string path;
        std::filesystem::file_time_type mtime;
        std::string pattern;    ///< name registered from this file ("" when it failed)
        std::string diagnostic; ///< rendered error ("" when it compiled)
    };
    /// Loads every *.fxpat file of `dir` (sorted by name). Returns the number of files that failed.
    size_t loadDirectory(const std::string &dir, rewrite::PatternRegistry &reg);
    /// Loads one file (replacing what the same file registered before).
    bool loadFile(const std::string &path, rewrite::PatternRegistry &reg);
    /// Re-reads files whose modification time changed, and files added to the loaded directories;
    /// returns the paths reloaded. Patterns of removed files are unregistered.
    std::vector<std::string> reloadChanged(rewrite::PatternRegistry &reg);
    const std::vector<FileState> &files() const { return m_files; }
    /// Every diagnostic, one rendered block per failing file.
    std::string diagnostics() const;

private:
    std::vector<std::string> m_dirs;
    std::vector<FileState> m_files;
};

} // namespace fxlens::lang
