#!/usr/bin/env python3
# Files over ~800 lines and functions over ~100 lines in core/, patterns/, views/ and app/
# (docs/DESIGN.md, "Size limits"). A heuristic brace matcher, good enough for this code base.
#   scripts/sizes.py [FUNCTION_LIMIT [FILE_LIMIT]]  list what is over the limits (and which are exceptions)
#   scripts/sizes.py --check                        fail on anything over the limits that
#                                                   scripts/size-exceptions.txt does not allow, on an
#                                                   exception that grew past its size or is no longer
#                                                   needed, and on docs/DESIGN.md disagreeing with the list
#   scripts/sizes.py --write-docs                   rewrite the list in docs/DESIGN.md from the exceptions
# ctest runs the check (label lint: `ctest -L lint`).
import os
import re
import sys

if sys.version_info < (3, 11):
    sys.exit('sizes.py needs Python 3.11 or later (atomic groups in its patterns)')

ROOTS = ['core', 'patterns', 'views', 'app']
EXCEPTIONS = 'scripts/size-exceptions.txt'
DESIGN = 'docs/DESIGN.md'
DOCS_BEGIN = '<!-- size-exceptions: generated from scripts/size-exceptions.txt by scripts/sizes.py --write-docs -->'
DOCS_END = '<!-- /size-exceptions -->'
KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof', 'catch', 'decltype', 'alignof', 'static_assert', 'noexcept'}
# A function body's '{': after ')', qualifiers, a trailing return type or a constructor's initializers
# (atomic groups: the plain pattern backtracks for seconds on long headers).
HEADER = re.compile(r'\)(?>\s*)(?:const(?>\s*))?(?:noexcept(?>\s*))?(?:override(?>\s*))?(?:->(?>[\w:<>,\s\*&]+))?(?::.*)?\{')
NAME = re.compile(r'(~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*)\s*\(')


def strip(line):
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return re.sub(r'//.*', '', line)


def function_name(lines, i):
    """The name in the header that ends with the '{' on line i (the lines back to the previous statement)."""
    first = i
    while first > 0 and i - first < 6:
        prev = strip(lines[first - 1]).strip()
        if not prev or prev.endswith((';', '}', '{')) or prev.startswith('#'):
            break
        first -= 1
    header = ' '.join(strip(l) for l in lines[first:i + 1])
    for m in NAME.finditer(header):
        name = re.sub(r'\s+', '', m.group(1))
        if name.split('::')[-1] not in KEYWORDS:
            return name
    return '?'


def measure(fn_limit, file_limit):
    """(functions, files) over the limits: [(lines, path, line, name)], [(lines, path)]."""
    funcs, files = [], []
    for root in ROOTS:
        for dp, dn, fn in os.walk(root):
            dn.sort()
            for f in sorted(fn):
                if not f.endswith(('.cpp', '.h')):
                    continue
                p = os.path.join(dp, f)
                lines = open(p, errors='replace').read().splitlines()
                if len(lines) > file_limit:
                    files.append((len(lines), p))
                depth = 0
                start = sdepth = None
                for i, l in enumerate(lines):
                    s = strip(l)
                    for ch in s:
                        if ch == '{':
                            if start is None:
                                hdr = ' '.join(lines[max(0, i - 3):i + 1])
                                if HEADER.search(hdr) and not re.search(r'^\s*(if|for|while|switch|else|do)\b', l) \
                                        and not re.search(r'\b(namespace|class|struct|enum)\b', l):
                                    start, sdepth = i, depth
                            depth += 1
                        elif ch == '}':
                            depth -= 1
                            if start is not None and depth == sdepth:
                                n = i - start + 1
                                if n > fn_limit:
                                    funcs.append((n, p, start + 1, function_name(lines, start)))
                                start = None
    return sorted(funcs, reverse=True), sorted(files, reverse=True)


def read_exceptions():
    """{(path, name or '-'): (ceiling, justification)} from the list; name '-' is the file itself."""
    out = {}
    for k, line in enumerate(open(EXCEPTIONS).read().splitlines(), 1):
        if not line.strip() or line.startswith('#'):
            continue
        parts = line.split(None, 3)
        if len(parts) < 4 or not parts[2].isdigit():
            sys.exit(f'{EXCEPTIONS}:{k}: want "PATH FUNCTION|- LINES JUSTIFICATION"')
        out[(parts[0], parts[1])] = (int(parts[2]), parts[3].strip())
    return out


def docs_block(exceptions):
    rows = []
    for (path, name), (ceiling, why) in exceptions.items():
        what = f'`{path}` (file)' if name == '-' else f'`{name}` in `{path}`'
        rows.append(f'  * {what}, {ceiling} lines: {why}')
    return '\n'.join([DOCS_BEGIN] + rows + ['  ' + DOCS_END])


def docs_text():
    return open(DESIGN).read()


def check(fn_limit, file_limit):
    funcs, files = measure(fn_limit, file_limit)
    exceptions = read_exceptions()
    errors, used = [], set()
    found = [((p, name), n, f'{p}:{line} {name}', 'function', fn_limit) for n, p, line, name in funcs]
    found += [((p, '-'), n, p, 'file', file_limit) for n, p in files]
    for key, n, where, kind, limit in found:
        if key not in exceptions:
            errors.append(f'{where}: {kind} of {n} lines (limit {limit}): split it, or add it to {EXCEPTIONS} with a reason')
            continue
        used.add(key)
        if n > exceptions[key][0]:
            errors.append(f'{where}: {kind} of {n} lines, more than the {exceptions[key][0]} {EXCEPTIONS} allows')
    for key in exceptions:
        if key not in used:
            errors.append(f'{EXCEPTIONS}: {" ".join(key)} is within the limits now (or gone): remove it from the list')
    text = docs_text()
    if DOCS_BEGIN not in text or DOCS_END not in text:
        errors.append(f'{DESIGN}: the size exceptions block ({DOCS_BEGIN}) is missing')
    elif text[text.index(DOCS_BEGIN):text.index(DOCS_END) + len(DOCS_END)] != docs_block(exceptions):
        errors.append(f'{DESIGN}: the size exceptions differ from {EXCEPTIONS}: run scripts/sizes.py --write-docs')
    for e in errors:
        print(e)
    print(f'sizes.py: {len(funcs)} functions over {fn_limit} lines, {len(files)} files over {file_limit} lines, '
          f'{len(exceptions)} exceptions listed: {"FAILED" if errors else "ok"}')
    return 1 if errors else 0


def write_docs():
    text = docs_text()
    if DOCS_BEGIN not in text or DOCS_END not in text:
        sys.exit(f'{DESIGN}: no size exceptions block to rewrite ({DOCS_BEGIN} ... {DOCS_END})')
    a, b = text.index(DOCS_BEGIN), text.index(DOCS_END) + len(DOCS_END)
    open(DESIGN, 'w').write(text[:a] + docs_block(read_exceptions()) + text[b:])
    return 0


def main(argv):
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    if argv[:1] == ['--check']:
        return check(100, 800)
    if argv[:1] == ['--write-docs']:
        return write_docs()
    fn_limit = int(argv[0]) if argv else 100
    file_limit = int(argv[1]) if len(argv) > 1 else 800
    funcs, files = measure(fn_limit, file_limit)
    exceptions = read_exceptions() if os.path.exists(EXCEPTIONS) else {}
    for n, p, line, name in funcs:
        note = '  (exception)' if (p, name) in exceptions else ''
        print(f'{n} {p}:{line} {name}{note}')
    for n, p in files:
        note = '  (exception)' if (p, '-') in exceptions else ''
        print(f'file {n} {p}{note}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
