# The import graph of python/gpuemu, read from the source with ast (nothing is imported): no cycle
# between modules, no import inside a function unless marked "lazy:", packages only import downward.
"""docs/ARCHITECTURE.md's Python table (read from the doc): the rules this file checks."""

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gpuemu"

ARCHITECTURE = PACKAGE.parents[1] / "docs" / "ARCHITECTURE.md"


def part_key(text: str) -> str:
    """A part as the table writes it (`_internal/core/`, `script`) as part_of names it (`_internal.core`)."""
    return text.strip().strip("`").rstrip("/").replace("/", ".")


def read_layers(text: str) -> dict[str, set[str]]:
    """What each part may import, from the table under the header `| part | what it is for | may import |`.
    A part is a subpackage or a top-level module, under gpuemu/ or gpuemu/_internal/; a part may always
    import its own modules."""
    lines = text.split("| part | what it is for | may import |", 1)[1].splitlines()[2:]
    layers = {}
    for line in lines:
        if not line.startswith("|"):
            break
        cells = line.strip("|").split(" | ")
        uses = cells[-1].strip()
        allowed = set() if uses == "nothing" else {part_key(u) for u in uses.split(",")}
        for part in cells[0].split(","):
            layers[part_key(part)] = allowed
    return layers


LAYERS = read_layers(ARCHITECTURE.read_text())


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def part_of(name: str) -> str:
    parts = name.split(".")
    if len(parts) > 2 and parts[1] == "_internal":
        return f"_internal.{parts[2]}"
    return parts[1] if len(parts) > 1 else "__init__"


def imported(node: ast.AST, here: str, is_package: bool, known: set[str]) -> list[str]:
    """The gpuemu modules an import statement loads (a `from pkg import mod` names the module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "gpuemu"]
    if node.level:  # relative: resolve against this module's package
        base = here.split(".") if is_package else here.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "gpuemu":
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if sub in known else target)
    return out


def graph() -> tuple[dict[str, set[str]], list[str], list[str]]:
    """({module: gpuemu modules it imports}, unmarked and marked function-level imports as "file:line: code")."""
    mods = modules()
    known = set(mods)
    edges: dict[str, set[str]] = {name: set() for name in mods}
    hidden: list[str] = []
    lazy: list[str] = []
    for name, path in mods.items():
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text, str(path))
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        nested = {id(n) for f in functions for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = imported(node, name, path.name == "__init__.py", known)
            if id(node) in nested:
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {lines[node.lineno - 1].strip()}"
                (lazy if marked_lazy(lines, node) else hidden).append(where)
                continue  # a marked lazy import runs later, so it is no edge of the import-time graph
            edges[name].update(t for t in targets if t != name)
    return edges, hidden, lazy


def marked_lazy(lines: list[str], node: ast.AST) -> bool:
    """True when the import's own lines, or the comment lines right above it, say "lazy:" (and why)."""
    own = lines[node.lineno - 1 : node.end_lineno]
    above = []
    k = node.lineno - 2
    while k >= 0 and lines[k].strip().startswith("#"):
        above.append(lines[k])
        k -= 1
    return any("lazy:" in line for line in own + above)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle():
    edges, _, _ = graph()
    # A package's __init__ importing its own submodules is how Python packages work, not a cycle:
    # leave out edges from a package to the modules inside it.
    own = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in edges.items()}
    assert cycles(own) == []


def test_imports_inside_functions_are_marked_lazy():
    _, hidden, _ = graph()
    assert hidden == [], ("imports inside functions without a '# lazy: why' comment (move them to the top of "
                          "the module, or say which heavy optional dependency they defer):\n" + "\n".join(hidden))


def test_each_part_imports_only_the_parts_below_it():
    edges, _, _ = graph()
    crossing = []
    for module, targets in sorted(edges.items()):
        part = part_of(module)
        for target in sorted(targets):
            other = part_of(target)
            if other != part and other not in LAYERS[part]:
                crossing.append(f"{module} imports {target} ({part} may import {sorted(LAYERS[part]) or 'nothing'})")
    assert crossing == []


def test_every_part_is_in_the_layer_table():
    assert {part_of(m) for m in modules()} <= set(LAYERS)


def private_imports() -> list[str]:
    """Imports (at the top or in a function) of a module whose name starts with "_" from outside the
    package that holds it, as "importer imports target"."""
    mods = modules()
    found = []
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in imported(node, name, path.name == "__init__.py", set(mods)):
                parts = target.split(".")
                for i in range(2, len(parts)):
                    owner = ".".join(parts[:i])
                    inside = name == owner or name.startswith(owner + ".")
                    if parts[i].startswith("_") and not parts[i].startswith("__") and not inside:
                        found.append(f"{name} imports {target}")
    return found


def test_no_module_imports_another_packages_private_module():
    # A leading underscore keeps a module to its package (docs/python-api.md): `_internal` and the public
    # modules use what gpuemu.frameworks or gpuemu.testing export, not their `_` modules.
    assert private_imports() == []


def test_pyproject_lists_every_package_folder():
    # setuptools installs only the packages pyproject names: a new folder left out imports from a
    # checkout but is missing from a wheel.
    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {module_name(p.parent / "__init__.py") for p in PACKAGE.rglob("__init__.py")}
    assert listed == folders


def test_the_table_reader_reads_lists_and_nothing():
    table = ("| part | what it is for | may import |\n|---|---|---|\n| `errors` | x | nothing |\n"
             "| `validate`, `validation` | y | _internal/client |\n| `_internal/wire/` | z | _internal/core, errors |\n\nafter\n")
    assert read_layers(table) == {"errors": set(), "validate": {"_internal.client"}, "validation": {"_internal.client"},
                                  "_internal.wire": {"_internal.core", "errors"}}
    # The real table has the rule that protects a worker from running twice.
    assert "worker" not in LAYERS["__init__"] and "worker" in LAYERS["fork_server"]


def test_the_architecture_counts_the_lazy_imports_there_are():
    counted = int(re.search(r"(\d+) imports inside functions stay lazy", ARCHITECTURE.read_text()).group(1))
    assert counted == len(graph()[2]), "docs/ARCHITECTURE.md's count of lazy imports is out of date"


def test_the_cycle_finder_finds_a_cycle():
    # The checker itself can fail: a two-module cycle and a three-module cycle are reported.
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_an_unmarked_import_in_a_function_is_found():
    lines = ["def f():", "    import json", "", "def g():", "    # lazy: torch takes seconds to import", "    import torch"]
    tree = ast.parse("\n".join(lines))
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import)]
    assert [marked_lazy(lines, n) for n in imports] == [False, True]


def test_starting_a_worker_imports_its_module_once():
    # What the layer table's "never worker" protects, checked for real: runpy warns when the
    # package's own imports load gpuemu.worker before it runs as __main__.
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "gpuemu.worker", "--help"],
                          capture_output=True, text=True, cwd=PACKAGE.parent, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
