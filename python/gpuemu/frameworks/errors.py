# Importing a framework on use: require() turns a missing one into one error naming the pip extra.
# The adapters' two error classes are part of gpuemu.errors' hierarchy and re-exported here.
"""require(), which imports a framework or says how to get it; the two error classes live in gpuemu.errors."""

from __future__ import annotations

import importlib
from types import ModuleType

from gpuemu.errors import AdapterError, FrameworkNotInstalledError

__all__ = ["AdapterError", "FrameworkNotInstalledError", "require"]


def require(module: str, framework: str, extra: str) -> ModuleType:
    """import_module(module), or FrameworkNotInstalledError naming `extra`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # includes sys.modules[module] = None (a blocked import)
        raise FrameworkNotInstalledError(framework, module, extra, exc) from None
