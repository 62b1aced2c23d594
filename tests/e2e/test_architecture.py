"""The layer table of docs/ARCHITECTURE.md is what src/ does: checked from the sources, no build.

Each folder of src/ is a layer; its `#include "folder/..."` lines may name only the folders the
table lists for it, the table lists no folder it does not use, its CMake DEPS are the same list,
no two layers use each other (directly or around a loop), and no two files in src/ share a base
name (so a file name says which layer a header is from).
"""
import pathlib
import re

from e2e_support import REPO

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ROW = re.compile(r"^\|\s*`(\w+)`\s*\|[^|]*\|([^|]*)\|\s*$", re.M)
MODULE = re.compile(r"gpuemu_module\(\s*(\w+)([^)]*)\)", re.S)
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".inc"}


def layer_table(root: pathlib.Path) -> dict[str, set[str]]:
    """folder -> the folders its row lets it use ("—" is none)."""
    text = (root / "docs" / "ARCHITECTURE.md").read_text()
    # Only the table of src/'s layers (the page has others, e.g. the Python package's parts).
    start = text.index("| folder | what it is for | uses |")
    end = text.find("\n\n", start)
    table = {}
    for folder, uses in ROW.findall(text[start:end if end >= 0 else len(text)]):
        table[folder] = set(re.findall(r"`?(\w+)`?", uses.replace("—", "")))
    return table


def layers(root: pathlib.Path) -> list[str]:
    return sorted(p.name for p in (root / "src").iterdir() if p.is_dir())


def sources(root: pathlib.Path):
    for path in sorted((root / "src").rglob("*")):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            yield path


def include_graph(root: pathlib.Path) -> dict[str, dict[str, list[str]]]:
    """layer -> used layer -> the `file: #include` lines that use it."""
    folders = set(layers(root))
    graph: dict[str, dict[str, list[str]]] = {name: {} for name in folders}
    for path in sources(root):
        rel = path.relative_to(root / "src")
        if len(rel.parts) < 2:
            continue  # src/main.cpp: the program, above every layer
        layer = rel.parts[0]
        for included in INCLUDE.findall(path.read_text(errors="replace")):
            target = included.split("/")[0]
            if "/" in included and target in folders and target != layer:
                graph[layer].setdefault(target, []).append(f"src/{rel}: #include \"{included}\"")
    return graph


def cmake_deps(root: pathlib.Path) -> dict[str, set[str]]:
    """layer -> the gpuemu_<layer> targets in its gpuemu_module(... DEPS ...)."""
    deps = {}
    for name in layers(root):
        text = (root / "src" / name / "CMakeLists.txt").read_text()
        match = MODULE.search(text)
        assert match, f"src/{name}/CMakeLists.txt declares no gpuemu_module({name} DEPS ...)"
        deps[match.group(1)] = set(re.findall(r"\bgpuemu_(\w+)", match.group(2)))
    return deps


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One loop through each node that can reach itself (each loop once), as the path that closes it."""
    found, covered = [], set()
    for start in sorted(graph):
        if start in covered:
            continue
        # Breadth-first from start's successors, remembering how each node was reached.
        came_from, frontier = {}, []
        for nxt in sorted(graph.get(start, ())):
            came_from.setdefault(nxt, start)
            frontier.append(nxt)
        while frontier and start not in frontier:
            following = []
            for node in frontier:
                for nxt in sorted(graph.get(node, ())):
                    if nxt not in came_from:
                        came_from[nxt] = node
                        following.append(nxt)
            frontier = following
        if start in came_from:
            loop, node = [start], came_from[start]
            while node != start:
                loop.append(node)
                node = came_from[node]
            loop.append(start)
            loop.reverse()
            covered.update(loop)
            found.append(loop)
    return found


def layer_problems(root: pathlib.Path) -> list[str]:
    """Everything in src/ that disagrees with the table, one sentence each (empty: all agree)."""
    table = layer_table(root)
    problems = []
    folders = layers(root)
    for name in folders:
        if name not in table:
            problems.append(f"src/{name} has no row in the layer table of docs/ARCHITECTURE.md: add one")
    for name in sorted(set(table) - set(folders)):
        problems.append(f"the layer table lists `{name}`, which is no folder of src/: remove its row")
    for name, uses in sorted(table.items()):
        for used in sorted(uses - set(table)):
            problems.append(f"the row of `{name}` may use `{used}`, which is no layer in the table")

    graph = include_graph(root)
    for name in folders:
        allowed = table.get(name, set())
        for used, lines in sorted(graph[name].items()):
            if used not in allowed:
                problems.append(
                    f"`{name}` uses `{used}`, which its row of the layer table does not list: move the "
                    f"code or change the table (and say why); {len(lines)} include(s), e.g. {lines[0]}")
        for unused in sorted(allowed - set(graph[name])):
            problems.append(f"the row of `{name}` lists `{unused}`, which no file of src/{name} includes: "
                            "drop it from the table and the CMake DEPS")

    for name, deps in sorted(cmake_deps(root).items()):
        allowed = table.get(name, set())
        if deps != allowed:
            problems.append(
                f"src/{name}/CMakeLists.txt DEPS name the layers {sorted(deps)}, the table {sorted(allowed)}: "
                "make them equal")

    for loop in cycles({name: set(uses) for name, uses in graph.items()}):
        problems.append("the layers use each other in a loop: " + " -> ".join(loop))
    for loop in cycles(table):
        problems.append("the layer table has a loop: " + " -> ".join(loop))
    return problems


def shared_base_names(root: pathlib.Path) -> dict[str, list[str]]:
    """base name -> its files, for base names found in more than one folder of src/."""
    files: dict[str, list[pathlib.Path]] = {}
    for path in sources(root):
        files.setdefault(path.stem, []).append(path)
    return {
        stem: [str(p.relative_to(root)) for p in paths]
        for stem, paths in sorted(files.items())
        if len({p.parent for p in paths}) > 1
    }


def test_includes_and_cmake_deps_follow_the_layer_table():
    problems = layer_problems(REPO)
    assert not problems, "docs/ARCHITECTURE.md's layer table and src/ disagree:\n" + "\n".join(problems)


def test_no_two_files_in_src_share_a_base_name():
    shared = shared_base_names(REPO)
    assert not shared, "files in different folders of src/ share a base name (rename them for what each is): " + \
        "; ".join(f"{stem}: {', '.join(files)}" for stem, files in shared.items())


def test_the_checks_see_a_crossing_include_an_unused_row_a_loop_and_a_shared_name(tmp_path):
    # A two-layer tree that breaks each rule once: the checks above cannot pass vacuously.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ARCHITECTURE.md").write_text(
        "| folder | what it is for | uses |\n| --- | --- | --- |\n"
        "| `low` | below | — |\n| `high` | above | low, mid |\n| `mid` | between | high |\n\n"
        "| part | what it is for | may import |\n| --- | --- | --- |\n| `other` | not a layer | nothing |\n")
    for name, deps, body in [("low", "", '#include "high/a.hpp"\n'),
                             ("high", "gpuemu_low gpuemu_mid", '#include "low/b.hpp"\n'),
                             ("mid", "gpuemu_high gpuemu_low", '#include "mid/c.hpp"\n')]:
        folder = tmp_path / "src" / name
        folder.mkdir(parents=True)
        (folder / "CMakeLists.txt").write_text(f"gpuemu_module({name} DEPS {deps} fmt::fmt)\n")
        (folder / "util.cpp").write_text(body)
    problems = "\n".join(layer_problems(tmp_path))
    assert "`low` uses `high`" in problems
    assert "src/low/util.cpp" in problems
    assert "the row of `high` lists `mid`, which no file of src/high includes" in problems
    assert "src/mid/CMakeLists.txt DEPS name the layers ['high', 'low'], the table ['high']" in problems
    assert "src/high/CMakeLists.txt DEPS" not in problems
    assert "the layers use each other in a loop: high -> low -> high" in problems
    assert "the layer table has a loop: high -> mid -> high" in problems
    assert "`other`" not in problems, "a later table of the page is no part of the layer table"
    assert set(shared_base_names(tmp_path)) == {"util"}
