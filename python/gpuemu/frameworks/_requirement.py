# Importing a framework on use: require() turns a missing one into one error naming the pip extra
# (FrameworkNotInstalledError, in gpuemu.errors with every other exception of the package).
"""require(module, framework, extra): the framework's module, or an error that says how to install it."""

from __future__ import annotations

import importlib
from types import ModuleType

from gpuemu.errors import FrameworkNotInstalledError

__all__ = ["require"]


def require(module: str, framework: str, extra: str) -> ModuleType:
    """import_module(module), or FrameworkNotInstalledError naming `extra`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # includes sys.modules[module] = None (a blocked import)
        raise FrameworkNotInstalledError(framework, module, extra, exc) from None
