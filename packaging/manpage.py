# SPDX-License-Identifier: MIT
"""Writes a man page (troff) from a program's --help text: NAME and SYNOPSIS from its first lines,
the help itself as the description, verbatim. Used by CMake for fxlens(1) and fxlens-cli(1).

    python3 packaging/manpage.py PROGRAM NAME "SUMMARY" VERSION OUT.1
"""
import datetime
import os
import subprocess
import sys


def escape(line):
    line = line.replace("\\", "\\e").replace("-", "\\-")
    return ("\\&" + line) if line.startswith((".", "'")) else line


def main():
    prog, name, summary, version, out = sys.argv[1:6]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([prog, "--help"], capture_output=True, text=True, env=env, timeout=60)
    text = r.stdout.strip()
    if not text:
        sys.exit(f"{prog} --help printed nothing: {r.stderr[:500]}")
    lines = text.splitlines()
    date = datetime.date.today().isoformat() if "SOURCE_DATE_EPOCH" not in os.environ else \
        datetime.datetime.utcfromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"])).date().isoformat()
    page = [f'.TH "{name.upper()}" 1 "{date}" "fxlens {version}" "User Commands"',
            ".SH NAME", f"{name} \\- {escape(summary)}",
            ".SH SYNOPSIS", escape(lines[0].replace(prog, name)),
            ".SH DESCRIPTION", ".nf"]
    page += [escape(line.replace(prog, name)) for line in lines[1:]]
    page += [".fi", ".SH SEE ALSO", "fxlens(1), fxlens\\-cli(1); the project's docs/ directory."]
    with open(out, "w") as f:
        f.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
