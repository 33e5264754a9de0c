// SPDX-License-Identifier: MIT
// fxlens-cli: the headless front end (scripts and CI). The commands are a table (Commands.cpp).
#include "Cli.h"

#include "Version.h"

#include <iostream>

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
    return c->run(a);
}
