"""The pip extras (issue #18): pyproject.toml has gpuemu[torch], [jax], [tensorflow] and [triton], each
naming its framework, and every extra an error message tells users to install is one of them.
"""
from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

from gpuemu._internal import loading
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as tomli
    tomllib = pytest.importorskip("tomli", reason="Python 3.10 reads pyproject.toml with tomli")
from gpuemu.frameworks import FRAMEWORKS, adapter

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
# The frameworks an extra installs: each adapter's but numpy's (a dependency of gpuemu itself), from the
# one list of framework names (FRAMEWORKS, checked against src/config/framework.cpp by unit_config).
ADAPTED = [name for name in FRAMEWORKS if name != "numpy"]
# extra -> the distributions it must install, besides each adapter's EXTRA -> its MODULE
EXPECTED = {"triton": {"torch", "triton"}}


def extras() -> dict[str, dict[str, str]]:
    """{extra: {distribution: version specifier}} from pyproject.toml."""
    table = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    out = {}
    for name, requirements in table.items():
        parsed = {}
        for req in requirements:
            m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", req)
            assert m, req
            parsed[m.group(1).lower()] = m.group(2)
        out[name] = parsed
    return out


def test_each_framework_has_its_extra():
    found = extras()
    expected = {**{adapter(name).EXTRA: {adapter(name).MODULE} for name in ADAPTED}, **EXPECTED}
    for extra, distributions in expected.items():
        assert extra in found, f"pyproject.toml has no gpuemu[{extra}]"
        assert set(found[extra]) == distributions, (extra, found[extra])
    # gpuemu[frameworks] is all of them, and no extra names a framework gpuemu has no adapter for.
    assert set(found) == set(expected) | {"frameworks"}, set(found) ^ (set(expected) | {"frameworks"})
    assert found["frameworks"] == {dist: spec for extra in expected for dist, spec in found[extra].items()}


@pytest.mark.parametrize("framework", ADAPTED)
def test_the_extra_an_adapter_names_installs_its_module(framework):
    module = adapter(framework)
    assert module.MODULE in extras()[module.EXTRA], (framework, module.EXTRA, module.MODULE)


def test_every_extra_a_load_error_names_exists():
    found = extras()
    assert set(loading._EXTRAS.values()) <= set(found), set(loading._EXTRAS.values()) - set(found)


def test_the_installed_frameworks_meet_the_lower_bounds():
    # The suite runs against the installed frameworks; an extra whose bound excludes them is untested.
    for extra, requirements in extras().items():
        for dist, spec in requirements.items():
            m = re.fullmatch(r">=\s*([0-9.]+)", spec)
            assert m, f"gpuemu[{extra}]: {dist}{spec} is not a plain lower bound"
            try:
                installed = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                continue  # not installed here: nothing to compare (the framework tests say so)
            have = tuple(int(p) for p in re.findall(r"\d+", installed)[:3])
            need = tuple(int(p) for p in m.group(1).split("."))
            assert have[:len(need)] >= need, f"gpuemu[{extra}] asks {dist}>={m.group(1)}, installed {installed}"
