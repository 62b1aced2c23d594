# @triton.autotune under gpuemu's interpreter: each config is its own variant of the op, so the worker runs
# the config gpuemu pins instead of benchmarking through a GPU driver (docs/frameworks.md, "Autotuned kernels").
"""install(): under TRITON_INTERPRET=1 (or with a pinned config), Autotuner.run uses the config GPUEMU_AUTOTUNE_PIN names.

GPUEMU_AUTOTUNE_PIN is what the op's variant name holds between its brackets, set by gpuemu for each
variant's worker: a config label ("BLOCK_N=64,num_warps=2", as config_label gives it) when the op
reaches one autotuned kernel, else "kernel:label;kernel:label" with each kernel's function name. A
kernel the pin does not name runs its first config that survives pruning; a config whose kernel fails a
``tl.static_assert`` for the call's arguments gives way to the next, as on a GPU. No benchmark runs.

discover(fn) lists the autotuned kernels reachable from a loaded op (its module's globals and the
globals its code names, through modules it names), for the load check (`--check`).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

__all__ = ["install", "discover", "config_label", "kernel_key", "PIN_VARIABLE"]

PIN_VARIABLE = "GPUEMU_AUTOTUNE_PIN"
_installed = False


def _autotuner_class() -> Any:
    module = sys.modules.get("triton.runtime.autotuner")
    return getattr(module, "Autotuner", None) if module is not None else None


def kernel_key(tuner: Any) -> str:
    base = tuner.base_fn
    return f"{base.__module__}:{base.__qualname__}"


def _labels(configs: list) -> list[str]:
    """One label per config: its kwargs, num_warps, and whichever of num_stages, num_ctas, maxnreg differ
    between the configs; unique (a repeated config gets "#i")."""
    varying = [name for name in ("num_stages", "num_ctas", "maxnreg")
               if len({repr(getattr(c, name, None)) for c in configs}) > 1]
    labels = []
    for i, c in enumerate(configs):
        parts = [f"{k}={v}" for k, v in c.kwargs.items()] + [f"num_warps={c.num_warps}"]
        parts += [f"{name}={getattr(c, name, None)}" for name in varying]
        label = ",".join(parts)
        labels.append(label if label not in labels else f"{label},#{i}")
    return labels


def config_label(tuner: Any, config: Any) -> str:
    return _labels(tuner.configs)[tuner.configs.index(config)]


def _wanted(tuner: Any, labels: list[str]) -> str | None:
    """The label GPUEMU_AUTOTUNE_PIN names for this kernel, or None."""
    text = os.environ.get(PIN_VARIABLE, "")
    if not text:
        return None
    if text in labels:
        return text
    for part in text.split(";"):
        name, sep, label = part.partition(":")
        if sep and name == tuner.base_fn.__name__ and label in labels:
            return label
    return None


def _pruned(tuner: Any, kwargs: dict) -> list:
    """The configs a GPU run could pick for these arguments: early_config_prune applied, and perf_model's
    top_k when the model runs on this machine (one that needs a GPU driver is skipped)."""
    configs = list(tuner.configs)
    if tuner.early_config_prune:
        configs = list(tuner.early_config_prune(tuner.configs, tuner.nargs, **kwargs)) or configs
    if tuner.perf_model and len(configs) > 1:
        top_k = tuner.configs_top_k
        if isinstance(top_k, float) and top_k <= 1.0:
            top_k = max(1, int(len(configs) * top_k))
        try:
            timing = {id(c): tuner.perf_model(**tuner.nargs, **kwargs, **c.all_kwargs()) for c in configs}
        except Exception:  # noqa: BLE001  (a model that asks the GPU driver cannot run here)
            return configs
        configs = sorted(configs, key=lambda c: timing[id(c)])[:int(top_k)]
    return configs


def _choose(tuner: Any, survivors: list) -> Any:
    labels = _labels(tuner.configs)
    wanted = _wanted(tuner, labels)
    if wanted is None:
        return survivors[0]
    pinned = tuner.configs[labels.index(wanted)]
    # A config the kernel's own pruning rules out for these arguments is never run on a GPU for them:
    # the case then runs the first config that survives (documented in docs/frameworks.md).
    return pinned if any(c is pinned for c in survivors) else survivors[0]


def _fails_static_assert(exc: BaseException) -> bool:
    """True when the launch failed on a tl.static_assert (the interpreter's own, an AssertionError anywhere
    in the chain the interpreter and the batching layer wrap it in)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, AssertionError):
            tb = exc.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            if tb is not None and tb.tb_frame.f_code.co_name == "_new_static_assert":
                return True
        exc = exc.__cause__ or exc.__context__
    return False


def _pinned_run(self: Any, *args: Any, **kwargs: Any) -> Any:
    self.nargs = dict(zip(self.arg_names, args))
    survivors = _pruned(self, kwargs)
    chosen = _choose(self, survivors)
    # On a GPU a config whose kernel fails a tl.static_assert for these arguments does not compile, and the
    # autotuner's benchmark skips it (FlagGems' attention relies on it): the next surviving config runs.
    order = [chosen] + [c for c in survivors if c is not chosen]
    try:
        for i, config in enumerate(order):
            self.best_config = config
            if config.pre_hook is not None:
                config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
            try:
                return self.fn.run(*args, **kwargs, **config.all_kwargs())
            except Exception as exc:
                if i + 1 == len(order) or not _fails_static_assert(exc):
                    raise
    finally:
        self.nargs = None


def install() -> bool:
    """Patches triton's Autotuner.run when Triton runs under its interpreter (TRITON_INTERPRET=1) and
    triton is imported; a no-op otherwise (on a GPU autotune benchmarks as usual). True when patched."""
    global _installed
    if _installed:
        return True
    # On a GPU autotune benchmarks as usual, unless the user ran one variant (a pinned config).
    if os.environ.get("TRITON_INTERPRET") != "1" and not os.environ.get(PIN_VARIABLE):
        return False
    tuner_class = _autotuner_class()
    if tuner_class is None:
        return False
    tuner_class.run = _pinned_run
    # A library's own tuner (FlagGems' LibTuner) subclasses Autotuner and overrides run with its own
    # benchmarking: its run is pinned too, for the subclasses defined now and those defined later.
    pending = list(tuner_class.__subclasses__())
    while pending:
        subclass = pending.pop()
        _pin_subclass(subclass)
        pending += subclass.__subclasses__()
    tuner_class.__init_subclass__ = classmethod(_pinned_subclass)
    _installed = True
    return True


def _pin_subclass(subclass: type) -> None:
    if "run" in vars(subclass):
        subclass.run = _pinned_run


def _pinned_subclass(cls: type, **kwargs: Any) -> None:
    super(_autotuner_class(), cls).__init_subclass__(**kwargs)
    _pin_subclass(cls)


def _tuners_in(value: Any, seen: set) -> list:
    """The Autotuners in a kernel object's chain of .fn wrappers (heuristics over autotune, ...)."""
    tuner_class = _autotuner_class()
    found = []
    depth = 0
    while value is not None and depth < 8 and id(value) not in seen:
        seen.add(id(value))
        if tuner_class is not None and isinstance(value, tuner_class):
            found.append(value)
        value = getattr(value, "fn", None) if not isinstance(value, (types.FunctionType, types.ModuleType)) else None
        depth += 1
    return found


# Packages whose functions never launch a user's autotuned kernel: the walk does not enter them.
_NOT_WALKED = ("torch", "triton", "numpy", "jax", "tensorflow", "gpuemu", "builtins", "functools", "typing")
_WALK_LIMIT = 256  # functions one discover() reads at most


def _codes(code: types.CodeType) -> list:
    """A code object and those of the functions, lambdas and classes defined in it."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _codes(const)
    return found


def _walked(value: Any) -> list:
    """The functions of value a walk enters: itself (a plain function outside _NOT_WALKED), a class's
    methods (an autograd.Function's forward launches the kernel)."""
    value = getattr(value, "__func__", value)  # a staticmethod or bound method
    if isinstance(value, type):
        if (value.__module__ or "").split(".")[0] in _NOT_WALKED:
            return []
        return [f for v in vars(value).values() for f in _walked(v) if not isinstance(v, type)]
    if not isinstance(value, types.FunctionType):
        return []
    return [] if (value.__module__ or "").split(".")[0] in _NOT_WALKED else [value]


def discover(fn: Any) -> list[dict]:
    """[{"kernel": key, "name": ..., "configs": [label, ...]}] for the autotuned kernels fn reaches: the
    names its code (and the code of the functions, classes and module attributes it names, transitively)
    refers to. A kernel the op's module defines but its code never names is not the op's: its configs
    do not split the op into variants."""
    if _autotuner_class() is None:
        return []
    pending = _walked(getattr(fn, "__wrapped__", fn)) or _walked(fn)
    visited: set = set()
    seen: set = set()
    kernels = {}
    while pending and len(visited) < _WALK_LIMIT:
        function = pending.pop()
        if id(function) in visited:
            continue
        visited.add(id(function))
        namespace = getattr(function, "__globals__", {})
        names = {name for code in _codes(function.__code__) for name in code.co_names}
        values = [namespace[name] for name in names if name in namespace]
        values += [getattr(m, name) for m in list(values) if isinstance(m, types.ModuleType)
                   for name in names if hasattr(m, name)]
        values += [cell.cell_contents for cell in function.__closure__ or () if _filled(cell)]
        for value in values:
            for tuner in _tuners_in(value, seen):
                kernels.setdefault(kernel_key(tuner), {"kernel": kernel_key(tuner), "name": tuner.base_fn.__name__,
                                                       "configs": _labels(tuner.configs)})
            pending += _walked(value)
    return [kernels[k] for k in sorted(kernels)]


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
