# The client's inline mode (docs/python-api.md "Execution modes and inline validation"): with no
# daemon, client-side validation reads gpuemu.toml itself, calls the reference here and compares.
"""InlineProject: gpuemu.toml ops, tolerances and references for validation without a daemon."""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gpuemu._internal import loading
from gpuemu._config_keys import DEFAULTS
from gpuemu.frameworks import triton_hook
from gpuemu._internal.client.repro import input_snapshot
from gpuemu._internal.core.fuzz.cases import OpSpec, declare_output_hint, declared_output, generate_case, run_case_seed
from gpuemu._internal.core.compare import compare_outputs, named_outputs
from gpuemu._internal.core.dtypes import canonical_dtype
from gpuemu._internal.core.tolerance import ToleranceConfig, tolerance_from_tables
from gpuemu.errors import ClientError
from gpuemu.results import Failure, ReproductionInfo, TestCase, ValidationResult
from gpuemu._internal.wire import tensors

__all__ = ["InlineProject", "ColdScript", "find_config", "result_kernels", "CALLABLE_RE", "BFLOAT16_STARTUP"]

# package.module:function, as config::is_callable_spelling (src/config/runnable.cpp).
CALLABLE_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")


def find_config(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest gpuemu.toml in start (default: the current directory) or any directory above it."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "gpuemu.toml"
        if candidate.is_file():
            return candidate
    return None


def _load(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as err:
        raise ClientError(f"{path}: {err}; run `gpuemu test` in that folder for a full diagnostic") from None


def _merge(low: dict, high: dict) -> dict:
    """Tables merge key by key (recursively), anything else is taken whole from the higher file."""
    out = dict(low)
    for key, value in high.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


# The kernel keys go together through `extends`: a child naming one of the first three replaces all four.
_KERNEL_KEYS = ("op_script", "module", "implementations", "source")


def _resolve_extends(tables: dict[str, dict]) -> dict[str, dict]:
    """Each [[ops]] table with what it inherits through `extends` (docs/configuration.md, "extends"):
    the parent's keys under the child's, tables merged key by key, the kernel keys replaced together.
    A `module` without a function that the child inherits keeps the parent's function (named like the
    parent), as the C++ loader resolves it once, on the parent. Unknown parents and cycles are left for
    the binary to diagnose; here the table stays as written. tests/vectors/op_family.json holds this
    and result_kernels() to the C++ loader's results."""
    resolved: dict[str, dict] = {}

    def get(name: str, chain: tuple[str, ...]) -> dict:
        if name in resolved:
            return resolved[name]
        table = tables[name]
        parent = table.get("extends")
        if not isinstance(parent, str) or parent not in tables or parent in chain or parent == name:
            resolved[name] = table
            return table
        base = {k: v for k, v in get(parent, (*chain, name)).items() if k not in ("name", "extends")}
        if any(k in table for k in _KERNEL_KEYS[:3]):
            base = {k: v for k, v in base.items() if k not in _KERNEL_KEYS}
        elif isinstance(base.get("module"), str) and ":" not in base["module"] and "op_script" not in base:
            base["module"] = f"{base['module']}:{parent}"
        merged = _merge(base, table)
        if "schema" in table:  # a schema is replaced whole; an input's table per input
            merged["schema"] = table["schema"]
        if "inputs" in table:
            merged["inputs"] = {**base.get("inputs", {}), **table["inputs"]}
        resolved[name] = merged
        return merged

    return {name: get(name, ()) for name in tables}


def _implementation(entry: Any) -> tuple[str, str]:
    """(name, kernel) of one `implementations` entry: a table by its `name`, a callable by its
    function, a script by its stem."""
    if isinstance(entry, dict):
        kernel = str(entry.get("op_script", ""))
        return str(entry.get("name") or _implementation(kernel)[0]), kernel
    kernel = str(entry)
    if CALLABLE_RE.match(kernel):
        return kernel.split(":", 1)[1], kernel
    return Path(kernel).stem, kernel


def result_kernels(name: str, table: dict) -> dict[str, str]:
    """The results one resolved [[ops]] table makes, each with the kernel it runs (docs/configuration.md,
    "One op, many implementations"): `NAME/IMPL` per implementation, else NAME with its `op_script`, or
    its `module` (alone, it names the function called like the op: "pkg.mod:NAME")."""
    if "implementations" in table:
        return {f"{name}/{impl}": kernel for impl, kernel in map(_implementation, table["implementations"])}
    kernel = str(table.get("op_script", "") or table.get("module", ""))
    if "op_script" not in table and kernel and ":" not in kernel:
        kernel = f"{kernel}:{name}"
    return {name: kernel}


class InlineProject:
    """The merged configuration (daemon defaults < user defaults < gpuemu.toml) of one project."""

    def __init__(self, config_path: str | os.PathLike):
        self.path = Path(config_path).resolve()
        if not self.path.is_file():
            raise ClientError(f"config file {self.path} does not exist; pass config= the path of your gpuemu.toml")
        home = Path(os.environ.get("GPUEMU_HOME") or Path.home() / ".gpuemu")
        layers = [home / "daemon.toml", Path.home() / ".config" / "gpuemu" / "config.toml", self.path]
        merged: dict = {}
        self._base = {"ops": self.path.parent, "python_path": self.path.parent}
        for layer in layers:
            if not layer.is_file():
                continue
            data = _load(layer)
            for key in ("ops",):
                if key in data:
                    self._base[key] = layer.parent
            if "python_path" in data.get("validation", {}):
                self._base["python_path"] = layer.parent
            merged = _merge(merged, data)
        self.data = merged
        self.check_nan = bool(self._setting("validation", "check_nan"))
        self.check_inf = bool(self._setting("validation", "check_inf"))
        default_dtypes = list(self._setting("validation", "dtypes"))
        self._tables = _resolve_extends({str(t["name"]): t for t in merged.get("ops", [])})
        self.ops = {name: OpSpec.from_toml(t, default_dtypes) for name, t in self._tables.items()}
        self._references: dict[str, Callable] = {}

    @classmethod
    def discover(cls, config: str | os.PathLike | None = None) -> "InlineProject":
        path = Path(config) if config else find_config()
        if path is None:
            raise ClientError(f"no gpuemu.toml in {os.getcwd()} or above it, and no daemon is running; run from "
                              "your project or pass config=, or start the daemon with `gpuemu daemon start`")
        return cls(path)

    def op_framework(self, name: str) -> str | None:
        """The op's `framework`, else the `[project] framework` written in a config layer, else None
        (the written-only rule of docs/configuration.md: configs from before frameworks stay numpy)."""
        self.op(name)
        return self._tables[name].get("framework") or self.data.get("project", {}).get("framework")

    @property
    def numpy_bfloat16(self) -> str:
        """[project] numpy_bfloat16: how numpy callables get bfloat16 cases ("ml_dtypes" or "float32")."""
        return str(self._setting("project", "numpy_bfloat16"))

    def _setting(self, section: str, key: str) -> Any:
        """A key of [section] as the merged files set it, else its default from the C++ key table."""
        return self.data.get(section, {}).get(key, DEFAULTS[section, key])

    def op(self, name: str) -> OpSpec:
        if name not in self.ops:
            close = difflib.get_close_matches(name, list(self.ops), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; known ops: {', '.join(self.ops) or 'none'}"
            raise ClientError(f"op '{name}' is not in {self.path}{hint}")
        return self.ops[name]

    def tolerance(self, op_name: str, dtype: str) -> ToleranceConfig:
        """[ops.tolerances] field by field, then [validation.tolerances], then the built-in default."""
        return tolerance_from_tables(dtype, [self.data.get("validation", {}).get("tolerances", {}),
                                             self._tables[op_name].get("tolerances", {})])

    def _python_path(self) -> list[str]:
        """[validation] python_path, resolved against the file that set it."""
        return [str((self._base["python_path"] / p).resolve())
                for p in self.data.get("validation", {}).get("python_path", [])]

    def _import_paths(self) -> None:
        triton_hook.arm()  # the op's code runs here, in the caller's process: same Triton layers as a worker
        for folder in [*self._python_path(), str(self.path.parent)]:
            if folder not in sys.path:
                sys.path.insert(0, folder)

    def reference(self, op_name: str) -> Callable:
        """fn(inputs, **kwargs) for the op's reference: imported (module:function or a script that
        calls gpuemu.script.serve) or, for any other script, run as a subprocess per call."""
        if op_name in self._references:
            return self._references[op_name]
        spec = self.op(op_name).reference
        if not spec:
            raise ClientError(f"op '{op_name}' has no reference in {self.path}")
        self._import_paths()
        if CALLABLE_RE.match(spec):
            fn = loading.load_callable(spec)
        else:
            script = (self._base["ops"] / spec).resolve()
            # Imported only when it opts in as the engine's warm worker sees it (serve(), or run()
            # with persistent = true); anything else, e.g. a stdin/stdout script, runs as a process.
            entry = loading.warm_entry(str(script))
            if entry == "serve" or (entry == "run" and bool(self._tables[op_name].get("persistent", DEFAULTS["ops", "persistent"]))):
                fn, _role = loading.load_script(str(script))
            else:
                table = self._tables[op_name]
                timeout = float(table.get("timeout", self._setting("validation", "timeout")))
                fn = ColdScript(script, self._python(), self.numpy_bfloat16, self._python_path(), self.path.parent,
                                timeout)
        self._references[op_name] = fn
        return fn

    def _python(self) -> str:
        return os.environ.get("GPUEMU_PYTHON") or self.data.get("validation", {}).get("python") or sys.executable

    def validate(self, op_name: str, inputs: dict, output: Any, dtype: str | None, seed: int,
                 kwargs: dict | None = None) -> ValidationResult:
        op = self.op(op_name)
        dtype = canonical_dtype(dtype or _infer_dtype(inputs, output, op))
        start = time.perf_counter()
        result = ValidationResult(passed=False, seed=seed, op_name=op_name, dtype=dtype)
        first = next(iter(inputs.values()), None)
        result.repro_info = ReproductionInfo(
            seed=seed, shape=tuple(np.shape(first)) if first is not None else (),
            strides=tuple(s // first.itemsize for s in first.strides) if isinstance(first, np.ndarray) else (),
            dtype=dtype, layout="contiguous" if first is None or first.flags.c_contiguous else "strided",
            input_snapshot=input_snapshot(inputs))
        try:
            reference = self.reference(op_name)
            given = {k: self._reference_input(v) for k, v in inputs.items()}
            if isinstance(reference, ColdScript):  # a process gets the case dtype, as from the engine
                expected = reference.run(given, {**op.kwargs, **(kwargs or {})}, dtype)
            else:
                expected = reference(given, **{**op.kwargs, **(kwargs or {})})
        except Exception as exc:  # a broken reference is a result of its own kind
            result.kind = "reference_error"
            result.failures = [Failure(f"the reference of '{op_name}' raised {type(exc).__name__}: {exc}",
                                       "reference_error")]
            result.duration_ms = int((time.perf_counter() - start) * 1000)
            return result
        expected = named_outputs(expected)
        declared = declared_output(op, inputs)
        wrong = next(((name, ref) for name, ref in expected.items()
                      if declared is not None and tuple(np.shape(ref)) != declared[0]), None)
        if wrong is not None:
            # As the C++ side: a reference of the wrong shape cannot judge the op.
            (shape, source), (name, ref) = declared, wrong
            hint = "" if op.schema_output else "; " + declare_output_hint(op, inputs, tuple(np.shape(ref)))
            result.kind = "reference_error"
            result.failures = [Failure(f"reference output '{name}' has shape {list(np.shape(ref))}, but {source} is "
                                       f"{list(shape)}: fix the reference (or the declaration); a reference of the "
                                       f"wrong shape cannot judge the op{hint}", "reference_error")]
            result.duration_ms = int((time.perf_counter() - start) * 1000)
            return result
        verdict = compare_outputs(output, expected, self.tolerance(op_name, dtype), self.check_nan, self.check_inf)
        result.passed = verdict.passed
        result.kind = verdict.kind
        result.max_diff, result.max_rel_diff = verdict.max_abs, verdict.max_rel
        result.mismatches, result.tolerance_used = verdict.mismatches, verdict.tolerance_used
        result.failures = [] if verdict.passed else [Failure(verdict.message, verdict.kind)]
        threshold = float(self._setting("policies", "warn_threshold"))
        if verdict.passed and verdict.tolerance_used > threshold:  # as the daemon's validate reply
            result.warnings = [f"{op_name} [{dtype}] passed but used {100 * verdict.tolerance_used:.0f}% of its "
                               f"tolerance (warn_threshold {100 * threshold:.0f}%, seed {seed}): close to failing; "
                               "look at the op, or widen the tolerance ('gpuemu calibrate')"]
        result.duration_ms = int((time.perf_counter() - start) * 1000)
        return result

    def _reference_input(self, value: Any) -> np.ndarray:
        """A numpy reference's input: a bfloat16 array (a torch/jax/tf bfloat16 tensor given to
        validate_op) stays bfloat16 unless the config keeps the float32 form."""
        arr = np.asarray(value)
        if arr.dtype.name == "bfloat16" and self.numpy_bfloat16 == "float32":
            return arr.astype(np.float32)
        return arr

    def test_case(self, op_name: str, master_seed: int, index: int = 0, stream: str = "fuzz",
                  dtype: str | None = None) -> TestCase:
        op = self.op(op_name)
        return generate_case(op, run_case_seed(op, master_seed, stream, index, dtype))


def _infer_dtype(inputs: dict, output: Any, op: OpSpec) -> str:
    for arr in (*inputs.values(), output):
        kind = np.asarray(arr).dtype
        if kind.kind == "f" or kind.name == "bfloat16":
            return kind.name
    return op.dtypes[0] if op.dtypes else "float32"


# Where gpuemu.script's startup hook for bfloat16 cases lives (docs/script-protocol.md, "bfloat16 in
# cold scripts"); the C++ cold runner puts the same folder first on PYTHONPATH (proc/runner_common.cpp).
# This file is gpuemu/_internal/client/inline.py: parents[2] is the gpuemu package, parents[3] the
# folder that holds it (what a cold script needs on PYTHONPATH to import gpuemu.script).
PACKAGE_DIR = Path(__file__).resolve().parents[3]
BFLOAT16_STARTUP = Path(__file__).resolve().parents[2] / "script_startup"


class ColdScript:
    """A reference script that does not opt in to being imported: one subprocess per call, the
    request and environment the C++ cold runner gives it (script protocol), so a stdin/stdout
    script behaves the same with and without a daemon."""

    def __init__(self, script: Path, python: str, numpy_bfloat16: str = "ml_dtypes",
                 python_path: list[str] | None = None, cwd: Path | None = None, timeout: float = 60.0):
        self.script, self.python, self.numpy_bfloat16 = script, python, numpy_bfloat16
        self.python_path = list(python_path or [])
        self.cwd = cwd or script.parent  # the engine runs scripts in the project root
        self.timeout = timeout

    def __call__(self, inputs: dict, **kwargs) -> Any:
        return self.run(inputs, kwargs, None)

    def run(self, inputs: dict, kwargs: dict, dtype: str | None) -> Any:
        bf16 = dtype == "bfloat16" or any(_is_bfloat16(v) for v in inputs.values())
        # A bfloat16 case travels as bfloat16 bits, as the engine sends it: its inputs arrive here as
        # float32 arrays holding exact bfloat16 values; any other input keeps its own dtype.
        wire = {k: tensors.encode_tensor(v, "bfloat16" if bf16 and _holds_bfloat16(v) else None)
                for k, v in inputs.items()}
        request = {"inputs": wire, "kwargs": kwargs, "numpy_bfloat16": self.numpy_bfloat16}
        if dtype:
            request["dtype"] = dtype
        paths = ([str(BFLOAT16_STARTUP)] if bf16 else []) + [str(PACKAGE_DIR), *self.python_path]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        # Its own process group, killed whole at the timeout, as the engine does (script-protocol.md).
        with subprocess.Popen([self.python, str(self.script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=str(self.cwd), env=env,
                              start_new_session=True) as proc:
            try:
                stdout, stderr = proc.communicate(json.dumps(request), timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                raise RuntimeError(f"{self.script} timed out after {self.timeout:g} s; the whole process group "
                                   "was killed") from None
        if proc.returncode != 0:
            raise RuntimeError(f"{self.script} exited with status {proc.returncode}: {stderr.strip()[-2000:]}")
        try:
            reply = json.loads(stdout)
        except json.JSONDecodeError:
            raise RuntimeError(f"{self.script} printed something other than one JSON reply on stdout (print logs "
                               f"to stderr): {stdout[:200]!r}") from None
        if "outputs" in reply:
            return {k: tensors.decode_tensor(v) for k, v in reply["outputs"].items()}
        return tensors.decode_tensor(reply)


def _is_bfloat16(value: Any) -> bool:
    return np.asarray(value).dtype.name == "bfloat16"


def _holds_bfloat16(value: Any) -> bool:
    """A float32 array whose every value is a bfloat16 (the low 16 bits zero): nothing is rounded."""
    arr = np.asarray(value)
    if arr.dtype != np.float32:
        return False
    return not np.any(np.ascontiguousarray(arr).view(np.uint32) & np.uint32(0xFFFF))
