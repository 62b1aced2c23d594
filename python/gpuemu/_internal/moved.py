# The module paths earlier docs and the seed documents told users to import (gpuemu.client.Client,
# gpuemu.core.fuzzing, gpuemu.wire.tensors, ...), kept working after those packages moved under _internal.
"""One table of moved packages, and the import hook that answers their old names with the moved modules.

An old name is the moved module itself (``gpuemu.core.rng is gpuemu._internal.core.rng``), never a
second copy, so classes and module state stay one. Only the names docs/python-api.md lists are
supported; the rest of a moved package is internal and may change.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

# Old package or module -> where it lives now. A package's submodules follow it (gpuemu.core.rng ->
# gpuemu._internal.core.rng). A module renamed on the way is listed before its package, which
# new_name() would otherwise match first: gpuemu.core.fuzzing is the fuzz generators' module now.
MOVED = {
    "gpuemu.core.fuzzing": "gpuemu._internal.core.fuzz.generators",
    "gpuemu.client": "gpuemu._internal.client",
    "gpuemu.core": "gpuemu._internal.core",
    "gpuemu.wire": "gpuemu._internal.wire",
}


def new_name(old: str) -> str | None:
    """Where the module `old` lives now, or None when it did not move."""
    for package, target in MOVED.items():
        if old == package or old.startswith(package + "."):
            return target + old[len(package):]
    return None


class _SameModule(importlib.abc.Loader):
    """Loads an old name as the module already imported (or imported now) under its new name."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        pass  # the module ran once, under its new name


class MovedModules(importlib.abc.MetaPathFinder):
    """Answers the old names before the path finder does, which would otherwise load a moved file a
    second time under its old name (or find a left-over __pycache__ folder as a namespace package)."""

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        moved = new_name(fullname)
        if moved is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _SameModule(moved))


def install() -> None:
    """Puts the hook first on sys.meta_path, once per interpreter."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModules())
