# Op specs for the pytest plugin: an [[ops]] table of gpuemu.toml, or an op declared in Python with
# the same keys; either way one ResolvedOp that plans cases, knows tolerances and runs the reference.
"""Op (an op spec declared in Python), ResolvedOp, and resolve_project_op / resolve_inline_op."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from gpuemu._config_keys import DEFAULTS
from gpuemu._internal import loading
from gpuemu._internal.client.inline import CALLABLE_RE, InlineProject, find_config, result_kernels
from gpuemu._internal.core.fuzz.cases import OpSpec
from gpuemu._internal.core.tolerance import ToleranceConfig, tolerance_from_tables

__all__ = ["Op", "ResolvedOp", "resolve_project_op", "resolve_inline_op", "DEFAULT_ITERATIONS"]

DEFAULT_ITERATIONS = DEFAULTS["validation", "fuzz_iterations"]  # as the CLI's


@dataclass
class Op:
    """An op spec declared in Python, with the keys and meaning of an [[ops]] table of gpuemu.toml
    (docs/configuration.md): `reference` is a callable fn(inputs, **kwargs) or "module:function";
    `schema`, `inputs`, `tolerances` are dicts shaped like their TOML tables, e.g.
    schema={"dims": {"M": [1, 40], "N": [1, 300]}, "inputs": {"x": ["M", "N"]}}."""

    name: str
    reference: Callable | str
    schema: dict | None = None
    inputs: dict = field(default_factory=dict)
    dtypes: list = field(default_factory=lambda: list(DEFAULTS["validation", "dtypes"]))
    layouts: list = field(default_factory=lambda: list(DEFAULTS["ops", "layouts"]))
    tolerances: dict = field(default_factory=dict)
    kwargs: dict = field(default_factory=dict)
    check_nan: bool = DEFAULTS["validation", "check_nan"]
    check_inf: bool = DEFAULTS["validation", "check_inf"]
    iterations: int = DEFAULT_ITERATIONS
    seed: int = DEFAULTS["validation", "seed"]  # 0: none fixed (the session's seed, or --gpuemu-seed)

    def table(self) -> dict:
        table: dict[str, Any] = {"name": self.name, "dtypes": list(self.dtypes), "layouts": list(self.layouts),
                                 "inputs": dict(self.inputs), "kwargs": dict(self.kwargs),
                                 "execution_mode": "client_side"}
        if self.schema is not None:
            table["schema"] = self.schema
        return table


@dataclass
class ResolvedOp:
    """Everything the plugin needs of one op, wherever it was declared."""

    spec: OpSpec  # spec.name is the [[ops]] name: case seeds derive from it
    name: str  # the result name the CLI and the store use: the op, or "OP/IMPLEMENTATION"
    tolerance: Callable[[str], ToleranceConfig]
    reference: Callable[[], Callable]  # loads (once) and returns fn(inputs, **kwargs)
    own_kernel: Callable[[], Callable | None]  # the op's op_script / module as fn(inputs, **kwargs), or None
    check_nan: bool
    check_inf: bool
    iterations: int
    seed: int  # 0: none fixed
    config_path: Path | None = None  # None for an op declared in Python: nothing to store it under
    op_script: str = ""


_projects: dict[Path, InlineProject] = {}


def project(path: Path) -> InlineProject:
    path = path.resolve()
    if path not in _projects:
        _projects[path] = InlineProject(path)
    return _projects[path]


def resolve_project_op(config_path: Path, name: str) -> ResolvedOp:
    proj = project(config_path)
    spec_name = name.partition("/")[0]
    spec = proj.op(spec_name)  # ClientError with "did you mean" for an unknown name
    table = proj._tables[spec_name]
    validation = proj.data.get("validation", {})
    kernels_by_name = result_kernels(spec_name, table)
    if name not in kernels_by_name:
        known = ", ".join(n for n in kernels_by_name if "/" in n) or "none"
        raise ValueError(f"op '{name}': name one implementation of '{spec_name}' in the marker (known: {known})")
    op_script = kernels_by_name[name]
    kernels: dict[str, Callable | None] = {}

    def own_kernel() -> Callable | None:
        if "fn" not in kernels:
            kernels["fn"] = _load(proj, op_script) if op_script else None
        return kernels["fn"]

    return ResolvedOp(spec=spec, name=name, tolerance=lambda dtype: proj.tolerance(spec_name, dtype),
                      reference=lambda: proj.reference(spec_name), own_kernel=own_kernel,
                      check_nan=proj.check_nan, check_inf=proj.check_inf,
                      iterations=int(validation.get("fuzz_iterations", DEFAULT_ITERATIONS)),
                      seed=int(validation.get("seed", DEFAULTS["validation", "seed"])), config_path=proj.path, op_script=op_script)


def _load(proj: InlineProject, spec: str) -> Callable:
    proj._import_paths()
    if CALLABLE_RE.match(spec):
        return loading.load_callable(spec)
    fn, _role = loading.load_script(str((proj._base["ops"] / spec).resolve()))
    return fn


def resolve_inline_op(op: Op) -> ResolvedOp:
    spec = OpSpec.from_toml(op.table(), list(op.dtypes))
    loaded: dict[str, Callable] = {}

    def reference() -> Callable:
        if "fn" not in loaded:
            loaded["fn"] = loading.load_callable(op.reference) if isinstance(op.reference, str) else op.reference
        return loaded["fn"]

    if isinstance(op.reference, str) and not CALLABLE_RE.match(op.reference):
        raise ValueError(f"gpuemu.testing.Op {op.name!r}: reference {op.reference!r} is neither a callable nor "
                         "'module:function'")
    return ResolvedOp(spec=spec, name=op.name, reference=reference,
                      tolerance=lambda dtype: tolerance_from_tables(dtype, [op.tolerances]),
                      own_kernel=lambda: None, check_nan=op.check_nan, check_inf=op.check_inf,
                      iterations=int(op.iterations), seed=int(op.seed))


def find_config_from(start: Path) -> Path | None:
    """The nearest gpuemu.toml in start or above it."""
    return find_config(start if start.is_dir() else start.parent)


def relative(path: Path) -> str:
    """path relative to the current directory when it is below it (shorter replay commands)."""
    try:
        return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
    except ValueError:
        return str(path)
