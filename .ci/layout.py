#!/usr/bin/env python3
"""The layout rules of src/: no file above MAX_LINES (tables of data excepted), no import
circle between two files, and each room (a top-level module of src/) uses only the rooms ROOMS
allows it (the map in docs/architecture.md). A file depends on another when it names an item the other defines,
through `crate::`, `super::` or `self::` paths; names re-exported by a `mod.rs` count as the
defining file's. Test modules (`#[cfg(test)] mod tests`, inline or in a `tests.rs`) are left out: they may use anything."""
import os, re, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
MAX_LINES = 650
# Files that are tables of data, not code.
DATA_TABLES = set()
# The rooms each room may use; a room not listed (the binary's cli, the hidden fuzzing entry)
# may use any. The arrows are one-way: member and views both stand on client, not on each other.
ROOMS = {
    "client": {"leader", "wire"},
    "member": {"client", "leader", "engine", "wire"},
    "views": {"client", "leader", "engine", "wire"},
    "leader": {"engine", "jdk", "wire"},
    "plugin": {"engine", "interrupt", "wire"},
    "report": {"sim", "engine", "wire"},
    "sim": {"engine", "rng", "wire"},
    "engine": {"flow", "interrupt", "jdk", "rng", "wire"},
    "jdk": {"wire"},
    "rng": {"wire"},
    "flow": {"interrupt"},
    # Cooperative interruption: the checkpoints of the flow solver and the engine, asked by a
    # host with a deadline (the plugin); it stands on nothing.
    "interrupt": set(),
    "wire": set(),
}


def room(path):
    """The top-level module of src/ a file belongs to (`lib` for lib.rs)."""
    return os.path.relpath(path, ROOT).split(os.sep)[0].removesuffix(".rs")


def module_path(path):
    parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def strip_tests(text):
    """The file without its test module and its comments (a doc link is not a dependency)."""
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod tests", text)
    text = text[: m.start()] if m else text
    return re.sub(r"//[^\n]*", "", text)


def main():
    files = []
    for d, _, names in os.walk(ROOT):
        files += [os.path.join(d, n) for n in names if n.endswith(".rs")]
    modules = {module_path(f): f for f in files}
    is_dir = {f: os.path.basename(f) in ("mod.rs", "lib.rs", "main.rs") for f in files}
    texts = {f: strip_tests(open(f, encoding="utf-8").read()) for f in files}

    # Re-exports: (module, name) -> module that the `use` points at.
    reexports = {}
    for f in files:
        mod = module_path(f)
        for m in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", texts[f]):
            for target, name in expand(m.group(1)):
                base = resolve_base(mod, is_dir[f], target)
                if base is not None:
                    reexports[(mod, name)] = base

    def locate(full):
        for i in range(len(full), 0, -1):
            prefix = tuple(full[:i])
            if prefix in modules:
                rest = full[i:]
                if rest and (prefix, rest[0]) in reexports:
                    return locate(list(reexports[(prefix, rest[0])]) + rest[1:]) or modules[prefix]
                return modules[prefix]
        return None

    edges = set()
    for f in files:
        if os.path.basename(f) == "tests.rs":
            continue  # a test module in a file of its own
        mod = module_path(f)
        for m in re.finditer(r"\buse\s+([^;]+);", texts[f]):
            for target, _ in expand(m.group(1)):
                full = resolve_base(mod, is_dir[f], target)
                if full is None:
                    continue
                dep = locate(list(full))
                if dep and dep != f:
                    edges.add((f, dep))
        for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)", texts[f]):
            full = resolve_base(mod, is_dir[f], m.group(1) + m.group(2))
            dep = locate(list(full)) if full is not None else None
            if dep and dep != f:
                edges.add((f, dep))

    problems = []
    for a, b in sorted(edges):
        if a < b and (b, a) in edges and not (is_dir[a] or is_dir[b]):
            problems.append(f"import circle: {rel(a)} <-> {rel(b)}")
    for a, b in sorted(edges):
        ra, rb = room(a), room(b)
        if ra != rb and ra in ROOMS and rb not in ROOMS[ra]:
            problems.append(f"room arrow not allowed: {rel(a)} ({ra}) uses {rel(b)} ({rb})")
    for f in sorted(files):
        n = sum(1 for _ in open(f, encoding="utf-8"))
        if n > MAX_LINES and rel(f) not in DATA_TABLES:
            problems.append(f"{rel(f)}: {n} lines (at most {MAX_LINES})")
    if "-v" in sys.argv:
        for a, b in sorted(edges):
            print(f"{rel(a)} -> {rel(b)}")
    for p in problems:
        print(p)
    print(f"layout: {len(files)} files, {len(edges)} file dependencies, {len(problems)} problem(s)")
    return 1 if problems else 0


def rel(f):
    return os.path.relpath(f, os.path.join(ROOT, ".."))


def expand(tree):
    """`a::{b, c::{d, e as f}}` -> [("a::b", "b"), ("a::c::d", "d"), ("a::c::e", "f")]."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        i = t.find("{")
        if i < 0:
            for part in split_top(t):
                if not part:
                    continue
                name = part.split("as")[-1] if "as" in part and re.search(r"\bas\b", part.replace("as", " as ")) else part
                path = part.split("as")[0] if re.fullmatch(r"[\w:]+as\w+", part) else part
                path = prefix + path
                out.append((path.rstrip(":"), path.rstrip(":").split("::")[-1]))
            return
        for part in split_top(t):
            if "{" in part:
                head, body = part.split("{", 1)
                walk(prefix + head, body[:-1])
            elif part:
                walk(prefix, part)

    walk("", tree)
    return out


def split_top(t):
    parts, depth, cur = [], 0, ""
    for ch in t:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def resolve_base(mod, is_dir, path):
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    here = list(mod)
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] in ("super", "self"):
        base = here if is_dir else here  # a file module's own path
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    if segs and segs[0] == "self":
        segs = segs[1:]
    return tuple(base + segs)


if __name__ == "__main__":
    sys.exit(main())
