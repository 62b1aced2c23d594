# Framework name -> adapter module (numpy, pytorch, jax, tensorflow). The adapters import their
# framework only in load(), so looking one up here costs nothing until it converts a tensor.
"""adapter(framework): the adapter module of a framework name."""

from __future__ import annotations

import importlib
from types import ModuleType

from gpuemu.frameworks._settings import FRAMEWORKS, check_choice

__all__ = ["adapter"]


def adapter(framework: str) -> ModuleType:
    """The adapter module of a framework name (numpy, pytorch, jax, tensorflow). Importing it does
    not import the framework; its load() does (FrameworkNotInstalledError naming the pip extra)."""
    check_choice(framework, FRAMEWORKS, "framework")
    return importlib.import_module(f"gpuemu.frameworks.{framework}")
