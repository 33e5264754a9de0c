// SPDX-License-Identifier: MIT
// fxlens-cli: the headless front end (scripts and CI). The commands are a table (Commands.cpp).
#include "Cli.h"

#include "Version.h"

#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    using namespace fxlens::cli;
    Args a;
    std::string err;
    if (!parseArgs(argc, argv, a, err)) {
        std::cerr << "fxlens-cli: " << err << "\n" << usageText();
        return kUsage;
    }
    if (a.help || a.command.empty() || a.command == "help") {
        std::cout << usageText();
        return a.command.empty() && !a.help ? kUsage : kOk;
    }
    if (a.command == "version") {
        std::cout << "fxlens-cli " FXLENS_VERSION "\n";
        return kOk;
    }
    const Command *c = findCommand(a.command);
    if (!c) {
        std::cerr << "fxlens-cli: unknown command '" << a.command << "'\n" << usageText();
        return kUsage;
    }
    if (!optionsApply(*c, a, err)) {
        std::cerr << "fxlens-cli " << a.command << ": " << err << "\n";
        return kUsage;
    }
    runInExecutor(argv, a);
    // The commands report failures as diagnostics; an exception that still escapes one (from ATen:
    // c10::Error's text carries a C++ backtrace) is one line, never a backtrace or an abort.
    try {
        return c->run(a);
    } catch (const std::exception &e) {
        const std::string what = e.what();
        std::cerr << "fxlens-cli " << a.command << ": error: " << what.substr(0, what.find('\n')) << "\n";
    } catch (...) {
        std::cerr << "fxlens-cli " << a.command << ": error: unexpected failure\n";
    }
    return kFailed;
}
