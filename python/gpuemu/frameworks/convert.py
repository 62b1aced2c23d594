# The one conversion point (docs/frameworks.md): every path that calls a user's op or reference (warm
# worker, cold script, the client) turns gpuemu storage into framework tensors and back here.
"""Converter: inputs to the callable's framework, the call with its framework's idioms, outputs back."""

from __future__ import annotations

import contextvars
import dataclasses
import sys
from typing import Any, Callable, Mapping

import numpy as np

from gpuemu._internal.core.dtypes import DTYPE_NAMES, canonical_dtype, from_bf16_bits
from gpuemu.errors import AdapterError
from gpuemu.frameworks import _cuda_refusal as cuda_refusal
from gpuemu.frameworks._foreign import to_numpy_any
from gpuemu.frameworks._registry import adapter
from gpuemu.frameworks._settings import ROLES, AdapterSettings, check_choice

__all__ = ["CaseRun", "Converter", "case_dtype", "case_run", "case_seed", "output_dtype", "seed_of"]

_CASE_DTYPE: contextvars.ContextVar[str | None] = contextvars.ContextVar("gpuemu_case_dtype", default=None)


@dataclasses.dataclass(eq=False)
class CaseRun:
    """One call of an op or reference by gpuemu: the case's seed (None when the caller sent none) and
    a scratch dict that lives exactly as long as the call, for per-case state such as the Triton
    sanitizer's launch counter (a fresh object per call, so a replay starts from the same state)."""

    seed: int | None
    state: dict = dataclasses.field(default_factory=dict)


_CASE_RUN: contextvars.ContextVar[CaseRun | None] = contextvars.ContextVar("gpuemu_case_run", default=None)
# What a framework reference's floating-point inputs are widened from (docs/frameworks.md): every
# value of these is exactly a float64, so the reference computes in high precision on the same numbers.
_WIDENED_FOR_REFERENCES = ("float16", "bfloat16", "float32")


def case_dtype() -> str | None:
    """The dtype of the case being run ("float16", "bfloat16", ...) while gpuemu calls an op or a
    reference, else None. It is the dtype the op is expected to return."""
    return _CASE_DTYPE.get()


def case_seed() -> int | None:
    """The seed of the case being run while gpuemu calls an op or a reference (None outside a call,
    or when the caller sent no seed): what `gpuemu reproduce SEED` replays."""
    run = _CASE_RUN.get()
    return run.seed if run is not None else None


def case_run() -> CaseRun | None:
    """The CaseRun of the call in progress, else None."""
    return _CASE_RUN.get()


def seed_of(frame: Mapping[str, Any]) -> int | None:
    """The case seed a call frame or cold request carries ("seed": a decimal string, as a uint64 may
    not fit a JSON number), else None (an older engine sends none)."""
    value = frame.get("seed")
    try:
        return int(str(value), 10) if value is not None else None
    except ValueError:
        return None


def output_dtype(arr: np.ndarray, case_dtype: str | None, role: str = "op") -> str | None:
    """The wire dtype for one output array, or None for the array's own dtype.

    An op that computes a bfloat16 case gets float32 arrays (numpy has no bfloat16) and casts
    back "to the input dtype" with arr.astype(x.dtype), i.e. to float32; so an op's float32
    output of a bfloat16 case is rounded to bfloat16 on the wire, as the GPU kernel would store
    it. Every other output, and every reference output, keeps its own dtype: the reference's
    float64 must reach the comparison unrounded.
    """
    check_choice(role, ROLES, "role")
    if role == "op" and case_dtype == "bfloat16" and np.asarray(arr).dtype == np.float32:
        return "bfloat16"
    return None


def _subject(op: str, kind: str, name: str) -> str:
    return f"op '{op}': {kind} '{name}'" if op else f"{kind} '{name}'"


class Converter:
    """Converts one callable's inputs and outputs; made once per worker (or client op), used per case.

    Making it imports the framework (FrameworkNotInstalledError naming the pip extra) and picks the
    device, so a missing framework or GPU is one error before any case runs.
    """

    def __init__(self, settings: AdapterSettings | None = None):
        settings = settings or AdapterSettings()
        self.requested = settings  # as asked (device may be "auto"); self.settings has the chosen device
        self.adapter = adapter(settings.framework)
        self.adapter.load()
        self.settings = dataclasses.replace(settings, device=self.adapter.select_device(settings.device))
        self.adapter.prepare(self.settings)
        self.last_run: CaseRun | None = None  # the CaseRun of the latest call (its launches, for the reply)

    def launches(self) -> dict[str, int] | None:
        """The op's @triton.jit launches per kernel in the latest call, as gpuemu's launch layer counted them
        (loaded once Triton is imported under the interpreter); None without it, and for a reference."""
        layer = sys.modules.get("gpuemu.frameworks._triton_launches")
        if layer is None or self.settings.role != "op":
            return None
        return layer.launches(self.last_run)

    def describe(self) -> dict[str, str]:
        """{"framework", "framework_version", "device"}: what the callable ran on."""
        return {"framework": self.settings.framework, "framework_version": self.adapter.version(),
                "device": self.settings.device}

    def input(self, storage: np.ndarray, dtype: str, name: str, op: str = "") -> Any:
        """One input: a gpuemu storage view (bfloat16 as uint16 bits) -> the framework's tensor. A
        framework reference (role "reference", not numpy) gets float16, bfloat16 and float32 inputs as
        float64 tensors of the same values; a numpy reference widens them itself, as scripts always did."""
        dtype = canonical_dtype(dtype)
        if self.settings.role == "reference" and self.adapter.NAME != "numpy" and dtype in _WIDENED_FOR_REFERENCES:
            wide = from_bf16_bits(storage) if dtype == "bfloat16" else storage
            with np.errstate(invalid="ignore"):  # a signalling NaN widens to a NaN, as it should
                storage, dtype = np.asarray(wide, dtype=np.float64), "float64"
        try:
            return self.adapter.to_framework(storage, dtype, self.settings)
        except AdapterError as exc:
            raise AdapterError(f"{_subject(op, 'input', name)} ({dtype}): {exc}") from None

    def inputs(self, storages: Mapping[str, tuple[np.ndarray, str]], op: str = "") -> dict[str, Any]:
        """{name: (storage view, dtype)} -> {name: framework tensor}, in the same order."""
        return {name: self.input(view, dtype, name, op) for name, (view, dtype) in storages.items()}

    def call(self, fn: Callable[..., Any], inputs: dict, kwargs: Mapping[str, Any], dtype: str | None,
             seed: int | None = None) -> Any:
        """fn(inputs, **kwargs) with case_dtype() and case_seed() set and the framework's idioms around
        it (torch: no_grad, then a device synchronize)."""
        token = _CASE_DTYPE.set(canonical_dtype(dtype) if dtype else None)
        run = self.last_run = CaseRun(seed)
        run_token = _CASE_RUN.set(run)
        try:
            with self.adapter.calling(self.settings):
                out = fn(inputs, **kwargs)
            # The launch layer is loaded only once Triton is imported under the interpreter (triton_hook).
            launches = sys.modules.get("gpuemu.frameworks._triton_launches")
            if launches is not None:
                launches.judge(run, fn, self.settings.role)  # kernel_not_launched when a launch is required
            sanitizer = sys.modules.get("gpuemu.frameworks._triton_sanitizer")  # loaded with Triton, like launches
            if sanitizer is not None:
                sanitizer.note_dead_lanes(run)  # poisoned load lanes: the note a failing case's report shows
            return out
        except Exception as exc:
            refused = cuda_refusal.refusal(exc)  # a library's CUDA-only check under the Triton interpreter
            if refused is None:
                raise
            raise refused from exc
        finally:
            _CASE_RUN.reset(run_token)
            _CASE_DTYPE.reset(token)

    def output(self, value: Any, name: str, op: str = "") -> np.ndarray:
        """One returned value -> a numpy array of a gpuemu dtype (bfloat16 as ml_dtypes.bfloat16)."""
        what = _subject(op, "output", name)
        if self.adapter.NAME != "numpy" and self.adapter.is_tensor(value):
            row_major = getattr(self.adapter, "row_major", None)  # outputs are stored row-major anyway
            arr = self.adapter.to_numpy(row_major(value) if row_major else value, self.settings, what)
        else:
            arr = to_numpy_any(value, what, lenient=self.adapter.NAME == "numpy")
        if arr.dtype.name not in DTYPE_NAMES:
            raise AdapterError(f"{what} has dtype {arr.dtype}, which gpuemu cannot store without a cast; return "
                               f"one of {', '.join(DTYPE_NAMES)}")
        return arr

    def outputs(self, out: Any, op: str = "") -> list[tuple[str, np.ndarray]]:
        """[(name, array)] of a return value: one tensor (named "out") or a non-empty dict of them."""
        if isinstance(out, Mapping):
            if not out:
                raise AdapterError(f"{'op ' + repr(op) + ': ' if op else ''}the function returned an empty dict "
                                   "of outputs")
            return [(str(name), self.output(value, str(name), op)) for name, value in out.items()]
        return [("out", self.output(out, "out", op))]

    def wire_dtype(self, arr: np.ndarray, dtype: str | None) -> str | None:
        """The dtype an output is stored as, None for its own. Only numpy's older float32 form of
        bfloat16 rounds: an op that got float32 for a bfloat16 case returns float32, which gpuemu
        stores as bfloat16 like the kernel would. Everything else is stored as returned (a wrong
        dtype is the check's dtype_mismatch, never a silent cast)."""
        if self.settings.framework == "numpy" and self.settings.numpy_bfloat16 == "float32":
            return output_dtype(arr, dtype, self.settings.role)
        return None
