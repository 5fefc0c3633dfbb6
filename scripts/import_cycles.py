#!/usr/bin/env python3
"""Import cycles in src/: between files, and between top-level modules.

Reads every `.rs` file under src/ (written apart from the crate: it shares no
code with it), finds the crates' module trees from `src/lib.rs` and
`src/main.rs` by their `mod` declarations (`#[path]` included), and takes
every path that starts with `crate::`, `super::`, `self::` or (in the binary)
`compactor::`, in `use` lines and in code alike, `#[cfg(test)]` code
included. Each path resolves to the deepest module it names; a module
declared inline (`mod tests { ... }`) belongs to its file. A `mod`
declaration is not an import: a parent that only declares a child does not
depend on it.

Prints each cycle (a strongly connected component of more than one node) as
its nodes and the edges inside it, with the file and line of one use per
edge. Exit status 1 when there is any cycle, 0 otherwise.

Usage: scripts/import_cycles.py [SRC_DIR]   (default: src next to this script)
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_strings(text):
    """Blanks comments, string and char literals, keeping line numbers."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.match(r'(b|c)?r(#*)"', text[i:i + 300]) if c in "rbc" else None
        if m and (i == 0 or not re.match(r"[A-Za-z0-9_]", text[i - 1])):
            hashes = m.group(2)
            end = text.find('"' + hashes, i + m.end())
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
            continue
        if c == "'":
            # A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9A-Fa-f]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


class Module:
    def __init__(self, path, file, crate):
        self.path = path  # tuple of names from the crate root
        self.file = file  # the file that holds its text
        self.crate = crate  # "lib" or "bin"


TEST_CFG = re.compile(r"#\[cfg\(([^\]]*\btest\b[^\]]*)\)\]")


def test_spans(text):
    """The spans of items under `#[cfg(test)]` (or any cfg naming `test`)."""
    spans = []
    for m in TEST_CFG.finditer(text):
        depth, j = 0, m.end()
        while j < len(text):
            ch = text[j]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            elif ch == ";" and depth == 0:
                j += 1
                break
            j += 1
        spans.append((m.start(), j))
    return spans


def parse_file(src, file, mod_path, crate, modules, files, test_only=False):
    """Registers the modules of `file` (and of its children, recursively)."""
    text = strip_comments_and_strings(open(os.path.join(src, file), encoding="utf-8").read())
    tests = test_spans(text)
    files[file] = (text, mod_path, crate, test_only, tests)
    modules[(crate,) + mod_path] = Module(mod_path, file, crate)
    directory = os.path.dirname(file)
    stem = os.path.splitext(os.path.basename(file))[0]
    own_dir = directory if stem in ("mod", "lib", "main") else os.path.join(directory, stem)
    raw = open(os.path.join(src, file), encoding="utf-8").read()
    # `#[path = "..."]` sits in a string, so read it from the raw text by line.
    path_attrs = {}
    for ln, line in enumerate(raw.split("\n")):
        m = re.search(r"#\[path\s*=\s*\"([^\"]+)\"\]", line)
        if m:
            path_attrs[ln] = m.group(1)
    for m, inner in mod_items(text):
        name, kind = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start())
        child_path = mod_path + inner + (name,)
        if kind == "{":
            modules[(crate,) + child_path] = Module(child_path, file, crate)
        else:
            attr = next((path_attrs[k] for k in range(line, max(line - 4, -1), -1) if k in path_attrs), None)
            base = os.path.join(own_dir, *inner)
            if attr is not None:
                child = os.path.normpath(os.path.join(directory if not inner else base, attr))
            else:
                a = os.path.join(base, name + ".rs")
                b = os.path.join(base, name, "mod.rs")
                child = a if os.path.exists(os.path.join(src, a)) else b
            if os.path.exists(os.path.join(src, child)):
                is_test = test_only or any(a <= m.start() < b for a, b in tests)
                parse_file(src, child, child_path, crate, modules, files, is_test)


def mod_items(text):
    """Each `mod name;` / `mod name {` of `text`, with the inline modules it
    sits in (tracked by brace depth)."""
    stack = []  # (name, depth at which it closes)
    depth = 0
    for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*([;{])|[{}]", text):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            while stack and stack[-1][1] > depth:
                stack.pop()
        else:
            yield m, tuple(s[0] for s in stack)
            if m.group(2) == "{":
                depth += 1
                stack.append((m.group(1), depth))


def module_at(text, offset, mod_path):
    """The module path of the code at `offset` (inline modules included)."""
    # The inline modules open at `offset` are those around a `mod` item placed there.
    *_, (_, inner) = mod_items(text[:offset] + " mod __at__;")
    return mod_path + inner

def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"]."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, body = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p:
            out.extend(prefix + q for q in expand_use(p))
    return out


def resolve(segments, here, crate, modules):
    """The deepest module named by a path, as (crate, path), or None."""
    segs = list(segments)
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        base, rest = (), segs[1:]
    elif head == "compactor" and crate == "bin":
        crate, base, rest = "lib", (), segs[1:]
    elif head in ("super", "self"):
        base, rest = here, segs
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    else:
        return None
    best = base
    cur = base
    for s in rest:
        s = s.split(" as ")[0]
        if s in ("*", "self"):
            break
        cur = cur + (s,)
        if (crate,) + cur in modules:
            best = cur
        else:
            break
    return (crate, best)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = sys.argv[1:]
    with_tests = "--tests" in args
    args = [a for a in args if a != "--tests"]
    src = args[0] if args else os.path.join(here, "..", "src")
    modules, files = {}, {}
    for root, crate in (("lib.rs", "lib"), ("main.rs", "bin")):
        if os.path.exists(os.path.join(src, root)):
            parse_file(src, root, (), crate, modules, files)

    file_edges = {}  # (from file, to file) -> "file:line"
    top_edges = {}
    path_re = re.compile(r"\b(?:crate|super|self|compactor)(?:\s*::\s*(?:" + IDENT + r"|\*))+")
    use_re = re.compile(r"\buse\s+((?:crate|super|self|compactor)\s*::[^;]*);")
    for file, (text, mod_path, crate, test_only, tests) in files.items():
        if test_only and not with_tests:
            continue
        found = []  # (offset, path string)
        spans = []
        for m in use_re.finditer(text):
            for p in expand_use(m.group(1)):
                found.append((m.start(), p))
            spans.append((m.start(), m.end()))
        for m in path_re.finditer(text):
            if any(a <= m.start() < b for a, b in spans):
                continue
            prev = text[max(0, m.start() - 2):m.start()]
            if prev.endswith("::"):
                continue  # the tail of a longer path (`x::super`): not a root
            found.append((m.start(), m.group(0)))
        for offset, p in found:
            if not with_tests and any(a <= offset < b for a, b in tests):
                continue
            segs = [s.strip() for s in re.split(r"::", p) if s.strip()]
            if segs[0] == "compactor" and crate != "bin":
                continue
            if segs[0] == "self" and len(segs) == 1:
                continue
            at = module_at(text, offset, mod_path)
            target = resolve(segs, at, crate, modules)
            if target is None or (target[0],) + target[1] not in modules:
                continue
            to_file = modules[(target[0],) + target[1]].file
            line = text.count("\n", 0, offset) + 1
            where = f"src/{file}:{line}"
            if to_file != file:
                file_edges.setdefault((file, to_file), where)
            t_crate, t_path = target
            a = (crate, mod_path[:1] if mod_path else ("<root>",))
            b = (t_crate, t_path[:1] if t_path else ("<root>",))
            if a != b and a[1] != ("<root>",) and b[1] != ("<root>",):
                top_edges.setdefault((a, b), where)

    def name(node):
        crate, path = node
        return ("" if crate == "lib" else "bin:") + "::".join(path)

    def cycles(edges):
        graph = {}
        for a, b in edges:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
        index, low, on, stack, out = {}, {}, set(), [], []
        counter = [0]

        def strong(v):
            work = [(v, iter(sorted(graph[v])))]
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            while work:
                node, it = work[-1]
                advanced = False
                for w in it:
                    if w not in index:
                        index[w] = low[w] = counter[0]
                        counter[0] += 1
                        stack.append(w)
                        on.add(w)
                        work.append((w, iter(sorted(graph[w]))))
                        advanced = True
                        break
                    if w in on:
                        low[node] = min(low[node], index[w])
                if advanced:
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

        for v in sorted(graph):
            if v not in index:
                strong(v)
        return sorted(out)

    found_any = False
    file_cycles = cycles(file_edges)
    scope = "all code, tests included" if with_tests else "production code; --tests adds test code"
    print(f"import cycles in {os.path.normpath(src)} ({scope})")
    print(f"file-level cycles: {len(file_cycles)}")
    for comp in file_cycles:
        found_any = True
        members = set(comp)
        print("  cycle: " + " <-> ".join("src/" + f for f in comp))
        for (a, b), where in sorted(file_edges.items()):
            if a in members and b in members:
                print(f"    src/{a} -> src/{b}  ({where})")
    top_cycles = cycles(top_edges)
    print(f"top-level module cycles: {len(top_cycles)}")
    for comp in top_cycles:
        found_any = True
        members = set(comp)
        print("  cycle: " + " <-> ".join(name(m) for m in comp))
        for (a, b), where in sorted(top_edges.items()):
            if a in members and b in members:
                print(f"    {name(a)} -> {name(b)}  ({where})")
    return 1 if found_any else 0


if __name__ == "__main__":
    sys.exit(main())
