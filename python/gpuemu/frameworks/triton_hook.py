# Installs gpuemu's Triton layers (the compatibility layer, then the sanitizer) in a process the moment
# it imports Triton under TRITON_INTERPRET=1, without importing Triton for code that never does.
"""The install point of the Triton interpreter layers (docs/frameworks.md).

:func:`arm` is called by the warm worker, cold scripts (``gpuemu.script``), the pytest plugin and the
Python client before the user's code is imported. When ``TRITON_INTERPRET`` is 1 it puts a finder
on ``sys.meta_path`` that runs each installer of :data:`INSTALLERS` right after ``triton`` finishes
importing (and again after ``torch`` does, for the torch.cuda part); a process that never imports
Triton pays one dictionary lookup per import and nothing else. When Triton is already imported,
the installers run at once.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from typing import Any, Callable

__all__ = ["arm", "armed", "INSTALLERS"]


def _install_batch() -> None:
    # lazy: as below; the batched launches (one kernel call per group of programs) go first, so the
    # compatibility layer and the sanitizer wrap its builder and see every program's lanes
    from gpuemu.frameworks import _triton_batch as triton_batch

    if os.environ.get("TRITON_INTERPRET", "0").strip() == "1":
        triton_batch.install()


def _install_compat() -> None:
    # lazy: the layer imports triton and numpy; it is loaded only once triton itself is imported.
    from gpuemu.frameworks import _triton_compat as triton_compat

    triton_compat.install()


def _install_library() -> None:
    # lazy: as above; jit'd functions look like the compiler's to libraries built around it (FlagGems)
    from gpuemu.frameworks import _triton_library as triton_library

    triton_library.install()


def _install_sanitizer() -> None:
    # lazy: as above; and only in an op's own worker, where gpuemu set GPUEMU_SANITIZE=1
    from gpuemu.frameworks import _triton_sanitizer as triton_sanitizer

    if os.environ.get(triton_sanitizer.ENV, "0").strip() == "1":
        triton_sanitizer.install()


def _install_launches() -> None:
    # lazy: as above; counts each call's @triton.jit launches and reads every grid (a malformed launch is
    # the op's error)
    from gpuemu.frameworks import _triton_launches as triton_launches

    triton_launches.install()


def _install_autotune() -> None:
    # lazy: as above; pins each @triton.autotune kernel to the config of the op's variant, never benchmarks
    from gpuemu.frameworks import triton_autotune

    triton_autotune.install()


# Each runs (in order) once triton is imported under TRITON_INTERPRET=1, and again after torch is:
# each must be idempotent. Batching comes first (the innermost layer: it reshapes what the builder
# computes); the sanitizer comes after the compatibility layer, so its checks wrap the bridged
# interpreter (it sees the loads and stores a bridged kernel really makes).
INSTALLERS: list[Callable[[], None]] = [_install_batch, _install_compat, _install_library, _install_sanitizer,
                                        _install_launches, _install_autotune]
_WATCHED = ("triton", "torch")


def _run_installers() -> None:
    if "triton" not in sys.modules:
        return
    for installer in INSTALLERS:
        try:
            installer()
        except Exception as exc:  # noqa: BLE001  (never break `import triton`; say so instead)
            print(f"gpuemu: warning: a Triton interpreter layer could not be installed ({installer.__name__}: "
                  f"{type(exc).__name__}: {exc}); kernels run on the bare interpreter", file=sys.stderr, flush=True)


class _LoaderWithHook(importlib.abc.Loader):
    """Runs the original loader, then the installers, and gives the module its own loader back."""

    def __init__(self, loader: Any):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        try:
            self.loader.exec_module(module)
        finally:
            module.__loader__ = self.loader
            if module.__spec__ is not None:
                module.__spec__.loader = self.loader
        _run_installers()


class _TritonFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.searching = False

    def find_spec(self, fullname, path, target=None):
        if fullname not in _WATCHED or self.searching:
            return None
        self.searching = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.searching = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _LoaderWithHook(spec.loader)
        return spec


_finder = _TritonFinder()


def armed() -> bool:
    return _finder in sys.meta_path


def arm() -> None:
    """Installs the Triton layers now if Triton is imported, else when it is; nothing at all unless
    TRITON_INTERPRET is 1 (a GPU run: the compiler needs no bridge)."""
    # A variant's pinned autotune config (GPUEMU_AUTOTUNE_PIN) applies on a GPU run too; the other
    # installers do nothing there (they check TRITON_INTERPRET / GPUEMU_SANITIZE themselves).
    if os.environ.get("TRITON_INTERPRET", "0").strip() != "1" and not os.environ.get("GPUEMU_AUTOTUNE_PIN"):
        return
    if "triton" in sys.modules:
        _run_installers()
    if not armed():
        sys.meta_path.insert(0, _finder)
