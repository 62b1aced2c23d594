# The public/private line of the gpuemu package (docs/python-api.md "Public and private"): gpuemu
# exports exactly what the page lists, and every import the docs and examples show keeps working.
"""gpuemu.__all__ against docs/python-api.md, the documented imports, and the moved module paths."""

import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest

import gpuemu
from gpuemu._internal import moved

ROOT = Path(__file__).resolve().parents[2]
API_DOC = ROOT / "docs" / "python-api.md"


def documented_exports(text: str) -> list[str]:
    """The names in the table under "### What `gpuemu` exports" (second column, in backticks)."""
    section = text.split("### What `gpuemu` exports", 1)[1]
    names = []
    for line in section.splitlines()[1:]:
        if line.startswith("#"):
            break
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 2 and not set(cells[1].strip()) <= {"-"}:
            names += re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", cells[2])
    return names


def shown_imports() -> list[tuple[str, str, list[str]]]:
    """(file, module, names) of every `from gpuemu... import ...` and `import gpuemu...` that docs/
    and examples/ show, in code blocks, inline code and example sources alike."""
    found = []
    sources = [ROOT / "README.md"] + sorted(ROOT.glob("docs/**/*.md")) + sorted(ROOT.glob("examples/**/*.py")) + sorted(ROOT.glob("examples/**/*.md"))
    pattern = re.compile(r"^\s*(from\s+gpuemu[\w.]*\s+import\s+[^#`\n]+|import\s+gpuemu[\w.]*)", re.M)
    for path in sources:
        for match in pattern.finditer(path.read_text()):
            statement = match.group(1).strip().rstrip("\\").strip()
            if statement.endswith("("):
                continue  # a multi-line import: its names are on the lines after
            node = ast.parse(statement.replace("(", "").replace(")", "")).body[0]
            if isinstance(node, ast.ImportFrom):
                found.append((str(path.relative_to(ROOT)), node.module, [a.name for a in node.names]))
            else:
                found += [(str(path.relative_to(ROOT)), a.name, []) for a in node.names]
    return found


def test_gpuemu_exports_exactly_what_python_api_md_lists():
    listed = documented_exports(API_DOC.read_text())
    assert len(listed) == len(set(listed)), "a name is listed twice in docs/python-api.md"
    assert sorted(gpuemu.__all__) == sorted(listed)
    for name in listed:
        assert hasattr(gpuemu, name), name


def test_the_export_table_reader_sees_a_drift():
    # The check above can fail: a table with a name gpuemu lacks, and one missing a name, differ.
    table = "### What `gpuemu` exports\n\n| Group | Names |\n|---|---|\n| Client | `Client`, `validate_op` |\n\n## Next\n| x | `Nope` |\n"
    assert documented_exports(table) == ["Client", "validate_op"]
    assert sorted(documented_exports(table)) != sorted(gpuemu.__all__)


def test_every_import_the_docs_and_examples_show_works():
    imports = shown_imports()
    assert any(module == "gpuemu.script" for _, module, _ in imports)  # the scan finds the common ones
    broken = []
    for where, module, names in imports:
        try:
            loaded = importlib.import_module(module)
        except ImportError as exc:
            broken.append(f"{where}: {module}: {exc}")
            continue
        broken += [f"{where}: {module} has no {name}" for name in names if not hasattr(loaded, name)
                   and importlib.util.find_spec(f"{module}.{name}") is None]
    assert broken == []


@pytest.mark.parametrize("old", ["gpuemu.client", "gpuemu.client.seeded_fuzzer", "gpuemu.core.fuzzing",
                                 "gpuemu.core.layouts", "gpuemu.core.rng", "gpuemu.core.tolerance",
                                 "gpuemu.wire.tensors"])
def test_a_moved_module_path_is_the_moved_module_itself(old):
    # Earlier docs named these paths; importing one must not load a second copy of the module.
    assert importlib.import_module(old) is importlib.import_module(moved.new_name(old))


def test_the_seed_documents_spellings_work():
    from gpuemu.client import Client
    from gpuemu.tolerances import calibrate_tolerance
    from gpuemu.validate import validate_op as v1
    from gpuemu.validation import validate_op as v2

    assert Client is gpuemu.Client and calibrate_tolerance is gpuemu.calibrate_tolerance
    assert v1 is v2 is gpuemu.validate_op


def test_a_name_that_did_not_move_is_left_to_the_path_finder():
    assert moved.new_name("gpuemu.frameworks") is None
    assert moved.new_name("gpuemu.corefoo") is None
    assert moved.new_name("gpuemu.core") == "gpuemu._internal.core"


def test_a_module_renamed_on_the_way_answers_its_old_name():
    # gpuemu.core.fuzzing became the fuzz generators' module of gpuemu._internal.core.fuzz.
    assert moved.new_name("gpuemu.core.fuzzing") == "gpuemu._internal.core.fuzz.generators"
    from gpuemu.core.fuzzing import fuzz_shapes_seeded

    assert fuzz_shapes_seeded is gpuemu.fuzz_shapes_seeded
