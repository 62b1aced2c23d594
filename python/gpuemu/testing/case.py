# One seeded case of an op as a pytest test sees it: the generated inputs, run(kernel) / check(output)
# against the op's reference, and on failure a message with the worst element and the replay commands.
"""CaseRef (what collection knows: op, index, seed, dtype, shapes) and GpuemuCase (what a test gets)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gpuemu._internal.client.guard import run_guarded
from gpuemu._internal.client.minimize import shrink
from gpuemu._internal.core.fuzz.cases import case_params, case_shapes, generate_case, run_case_seed
from gpuemu._internal.core.compare import Verdict, compare_output
from gpuemu._internal.core.dtypes import canonical_dtype, round_to_dtype, to_bf16_bits
from gpuemu.frameworks import AdapterSettings, Converter, framework_of, to_numpy
from gpuemu.testing._spec import ResolvedOp, relative

__all__ = ["CaseRef", "GpuemuCase", "GpuemuCaseFailure", "plan_cases"]


class GpuemuCaseFailure(AssertionError):
    """A case failed its check; the message carries the verdict, the worst element and the replay."""


@dataclass
class CaseRef:
    """A case known at collection time, without its tensors (they are made when the test runs)."""

    op: ResolvedOp
    index: int
    seed: int
    master_seed: int
    dtype: str
    layout: str
    distribution: str
    shapes: dict

    @property
    def id(self) -> str:
        # Only characters `pytest -k` accepts in a word: letters, digits, _ and -.
        shapes = "-".join(f"{name}_{'x'.join(map(str, shape)) or 'scalar'}" for name, shape in self.shapes.items())
        return f"{self.op.name}-{self.dtype}-{shapes}-seed_{self.seed}"


def plan_cases(op: ResolvedOp, master_seed: int, iterations: int, dtype: str | None = None) -> list[CaseRef]:
    """Cases 0..iterations-1 of the "fuzz" stream of master_seed: the cases `gpuemu fuzz --seed
    MASTER --iterations N [--dtype D]` runs, so every case seed also replays in the CLI."""
    refs = []
    for index in range(iterations):
        seed = run_case_seed(op.spec, master_seed, "fuzz", index, dtype)
        case_dtype, layout, distribution = case_params(op.spec, seed)
        refs.append(CaseRef(op, index, seed, master_seed, case_dtype, layout, distribution,
                            case_shapes(op.spec, seed)))
    return refs


def to_numpy(value: Any) -> Any:
    """An output as numpy: torch tensors (any device, bfloat16 as exact float32) and dicts of them."""
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, np.ndarray) or value is None:
        return value
    # torch (any device), jax, tensorflow: gpuemu.frameworks' conversion (bfloat16 as ml_dtypes.bfloat16).
    return to_numpy(value, "the output") if framework_of(value) not in (None, "numpy") else value


class GpuemuCase:
    """The `gpuemu_case` fixture's value. Attributes: op, seed, index, master_seed, dtype, layout,
    distribution, shapes, inputs (fresh copies each time). Call run(kernel) or check(output)."""

    def __init__(self, ref: CaseRef, session, nodeid: str):
        self._ref = ref
        self._session = session
        self._nodeid = nodeid
        self._case = None
        self.checked = False
        self.op = ref.op.name  # the result name: "softmax", or "softmax/v1" for an implementation
        self.seed, self.index, self.master_seed = ref.seed, ref.index, ref.master_seed
        self.dtype, self.layout, self.distribution, self.shapes = ref.dtype, ref.layout, ref.distribution, ref.shapes

    def __repr__(self) -> str:
        return f"<gpuemu case {self._ref.id}>"

    def _pristine(self) -> dict[str, np.ndarray]:
        if self._case is None:
            self._case = generate_case(self._ref.op.spec, self.seed)
        return self._case.inputs

    @property
    def inputs(self) -> dict[str, np.ndarray]:
        """The case's inputs in their layout (bfloat16 as exact float32), copied so a test cannot spoil them."""
        return {name: _copy(arr) for name, arr in self._pristine().items()}

    @property
    def kwargs(self) -> dict:
        return dict(self._ref.op.spec.kwargs)

    def tensors(self, framework: str = "pytorch", device: str = "auto") -> dict[str, Any]:
        """The inputs as tensors of a framework (pytorch, jax, tensorflow, numpy) on a device (auto:
        the GPU when the framework sees one), converted by gpuemu.frameworks (bfloat16 stays bfloat16)."""
        conv = _converter(framework, device)
        return conv.inputs({name: self._storage(name, arr) for name, arr in self.inputs.items()}, self.op)

    def run(self, kernel: Callable | None = None, *, framework: str = "numpy", device: str = "auto") -> Any:
        """Calls kernel(inputs, **op kwargs) (default: the op's own op_script from gpuemu.toml) under the
        guard (an op that writes its inputs or returns a view of one fails), checks its output against
        the reference, and returns the output. With framework="pytorch" (or jax, tensorflow) the kernel
        gets that framework's tensors on `device` and may return them. A failure raises GpuemuCaseFailure."""
        __tracebackhide__ = True
        self.checked = True
        kernel = kernel if kernel is not None else self._own_kernel()
        call = self._call(kernel) if framework == "numpy" else self._framework_call(kernel, framework, device)
        guarded = run_guarded(call, self.inputs)
        if guarded.kind != "none":
            self._fail(Verdict(guarded.kind, guarded.message), guarded.output, call)
        self._check(to_numpy(guarded.output), call)
        return guarded.output

    def check(self, output: Any) -> None:
        """Checks an output the test computed itself (numpy or torch, or a dict of them) against the
        reference. --gpuemu-minimize needs run(kernel), which can call the kernel again."""
        __tracebackhide__ = True
        self.checked = True
        self._check(to_numpy(output), None)

    # ── internals ─────────────────────────────────────────────────────────────────────────
    def _own_kernel(self) -> Callable:
        kernel = self._ref.op.own_kernel()
        if kernel is None:
            raise TypeError(f"op '{self.op}' has no op_script in gpuemu.toml: pass the kernel, "
                            "gpuemu_case.run(my_kernel), or check an output with gpuemu_case.check(out)")
        return kernel

    def _call(self, kernel: Callable) -> Callable[[dict], Any]:
        kwargs = self.kwargs
        bf16 = self.dtype == "bfloat16"

        def call(inputs: dict) -> Any:
            out = to_numpy(kernel(inputs, **kwargs))
            # As gpuemu.script does for ops: a float32 output of a bfloat16 case is stored as bfloat16.
            if bf16 and isinstance(out, np.ndarray) and out.dtype == np.float32:
                out = round_to_dtype(out, "bfloat16")
            return out
        return call

    def _storage(self, name: str, arr: np.ndarray) -> tuple[np.ndarray, str]:
        """(gpuemu storage, dtype) of an input: a bfloat16 input (exact float32 here) as its bit patterns."""
        spec = self._ref.op.spec.inputs.get(name)
        dtype = canonical_dtype(spec.dtype) if spec is not None and spec.dtype else self.dtype
        if dtype == "bfloat16" and arr.dtype == np.float32:
            return to_bf16_bits(arr).reshape(arr.shape), "bfloat16"
        return arr, arr.dtype.name

    def _framework_call(self, kernel: Callable, framework: str, device: str) -> Callable[[dict], Any]:
        conv = _converter(framework, device)
        kwargs, dtype = self.kwargs, self.dtype

        def call(inputs: dict) -> Any:
            tensors = conv.inputs({name: self._storage(name, arr) for name, arr in inputs.items()}, self.op)
            outputs = conv.outputs(conv.call(kernel, tensors, kwargs, dtype), self.op)
            return outputs[0][1] if len(outputs) == 1 and outputs[0][0] == "out" else dict(outputs)
        return call

    def _verdict(self, inputs: dict, output: Any) -> tuple[Verdict, Any]:
        op = self._ref.op
        try:
            expected = op.reference()({k: np.asarray(v) for k, v in inputs.items()}, **self.kwargs)
        except Exception as exc:  # a broken reference is a verdict of its own, as in the CLI
            return Verdict("reference_error", f"the reference of '{self.op}' raised {type(exc).__name__}: {exc}"), None
        if isinstance(expected, dict):
            expected = expected.get("out", next(iter(expected.values())))
        if isinstance(output, dict):
            output = output.get("out", next(iter(output.values()), None))
        verdict = compare_output(output, expected, op.tolerance(self.dtype), op.check_nan, op.check_inf)
        return verdict, expected

    def _check(self, output: Any, call: Callable | None) -> None:
        __tracebackhide__ = True
        verdict, _ = self._verdict(self._pristine(), output)
        if not verdict.passed:
            self._fail(verdict, output, call)

    def _fail(self, verdict: Verdict, output: Any, call: Callable | None) -> None:
        __tracebackhide__ = True
        ref = self._ref
        lines = [f"gpuemu: op {self.op} case seed {self.seed} ({self.dtype}, {self.layout}, {self.distribution} "
                 f"values; case {self.index} of master seed {self.master_seed}) failed: {verdict.kind}",
                 f"  {verdict.message}",
                 "  inputs: " + ", ".join(f"{n} {list(s)}" for n, s in self.shapes.items())]
        stored, note = self._session.store_failure(self, verdict, output)
        lines.append(f"  store: {note}")
        lines.append("  replay:")
        if ref.op.config_path is not None:
            config = shlex.quote(relative(ref.op.config_path))
            if ref.op.op_script:
                lines.append(f"    gpuemu --config {config} reproduce {self.seed} --op {self.op}"
                             "   # regenerates the case, re-runs the op's op_script")
            if stored:
                lines.append(f"    gpuemu --config {config} show {self.seed}   # the stored case and its inputs")
        lines.append(f"    pytest {shlex.quote(self._nodeid)} --gpuemu-seed {self.master_seed}")
        if self._session.minimize:
            lines.extend(self._minimize(verdict, call))
        raise GpuemuCaseFailure("\n".join(lines))

    def _minimize(self, verdict: Verdict, call: Callable | None) -> list[str]:
        if call is None:
            return ["  minimized: not tried: --gpuemu-minimize re-runs the kernel, so call "
                    "gpuemu_case.run(kernel) instead of check(output)"]

        def fails(candidate: dict) -> bool:
            run = run_guarded(call, {k: _copy(v) for k, v in candidate.items()})
            if run.kind != "none":
                return run.kind == verdict.kind
            got, _ = self._verdict(candidate, run.output)
            return got.kind == verdict.kind

        inputs, steps = shrink(self._ref.op.spec, dict(self._pristine()), fails, "all",
                               self._session.minimize_max_iters)
        run = run_guarded(call, {k: _copy(v) for k, v in inputs.items()})
        got, _ = self._verdict(inputs, run.output) if run.kind == "none" else (Verdict(run.kind, run.message), None)
        lines = [f"  minimized ({steps} steps): " + ", ".join(f"{n} {list(a.shape)}" for n, a in inputs.items())
                 + f": {got.kind}: {got.message}"]
        small = {n: a for n, a in inputs.items() if a.size <= 16}
        for name, arr in small.items():
            lines.append(f"    {name} = {np.asarray(arr, dtype=np.float64).tolist()}")
        stored = self._session.store_minimized(self, inputs, run, got)
        if stored:
            lines.append(f"    {stored}")
        return lines


_converters: dict[tuple[str, str], Any] = {}


def _converter(framework: str, device: str):
    """One gpuemu.frameworks.Converter per (framework, device) and process: it imports the framework
    and picks the device once (a missing framework is one clear error)."""
    key = (framework, device)
    if key not in _converters:
        _converters[key] = Converter(AdapterSettings(framework=framework, device=device, numpy_bfloat16="ml_dtypes"))
    return _converters[key]


def _copy(arr: np.ndarray) -> np.ndarray:
    """A copy with the same strides (a strided or transposed case stays so), over a storage buffer of its own."""
    if arr.flags.c_contiguous or arr.size == 0 or min(arr.strides, default=0) < 0:
        return np.array(arr, copy=True)
    span = 1 + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) // arr.itemsize
    out = np.lib.stride_tricks.as_strided(np.zeros(span, arr.dtype), arr.shape, arr.strides)
    out[...] = arr
    return out
