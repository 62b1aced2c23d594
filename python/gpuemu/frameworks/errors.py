# The two ways a framework conversion fails: the framework is not installed (one message naming the
# pip extra), or a tensor the adapter cannot represent (naming op, input or output, and dtype).
"""AdapterError and FrameworkNotInstalledError, and require() that imports a framework or says how to get it."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["AdapterError", "FrameworkNotInstalledError", "require"]


class AdapterError(TypeError, ValueError):
    """A value gpuemu cannot turn into (or read back from) a framework tensor without changing it:
    an unsupported dtype, a tensor on the wrong device, one that requires grad, a JAX tracer, a
    non-tensor. The message names the op, the input or output and the dtype."""


class FrameworkNotInstalledError(ImportError):
    """The op's framework cannot be imported; the message names the pip extra that installs it."""

    def __init__(self, framework: str, module: str, extra: str, cause: BaseException | None = None):
        why = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        super().__init__(
            f"the op runs with framework '{framework}', but Python module '{module}' cannot be imported{why}; "
            f"install it with: pip install 'gpuemu[{extra}]'"
        )
        self.framework = framework
        self.module_name = module
        self.extra = extra


def require(module: str, framework: str, extra: str) -> ModuleType:
    """import_module(module), or FrameworkNotInstalledError naming `extra`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # includes sys.modules[module] = None (a blocked import)
        raise FrameworkNotInstalledError(framework, module, extra, exc) from None
