# The data classes the Python API returns (docs/python-api.md "Data classes"): validation, fuzz, reproduce and
# minimize results, reproduction metadata, fuzz configuration and generated test cases.
"""ValidationResult, FuzzResults, ReproduceResult, MinimizeResult, ReproductionInfo, FuzzConfig, TestCase,
LintMetrics."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Failure",
    "ValidationResult",
    "FuzzResults",
    "ReproduceResult",
    "MinimizeResult",
    "ReproductionInfo",
    "FuzzConfig",
    "TestCase",
    "LintMetrics",
    "utc_timestamp",
]


def utc_timestamp() -> str:
    """Now as ISO 8601 UTC with a Z, the form the daemon writes."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Failure(str):
    """One failure description: a str (the message) that also answers failure["message"] and ["kind"].

    docs/python-api.md uses both spellings (`failures: list[str]` and `failures[0]['message']`).
    """

    kind: str
    message: str

    def __new__(cls, message: str, kind: str = "mismatch", **details: Any):
        obj = super().__new__(cls, message)
        obj.message = str(message)
        obj.kind = kind
        obj.details = dict(details)
        return obj

    def __getitem__(self, key):
        if isinstance(key, str):
            if key == "message":
                return self.message
            if key == "kind":
                return self.kind
            if key in self.details:
                return self.details[key]
            raise KeyError(key)
        return str.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, **self.details}

    def __reduce__(self):
        return (Failure, (self.message, self.kind), {"details": self.details})

    def __setstate__(self, state):
        self.details = state["details"]


class LintMetrics(dict):
    """A lint_kernel result's "metrics": the names of docs/lint.md ("registers", "spills", ...), and
    python-api.txt's "register_count" and "spill_count" for the same entries.

    "register_count" is "registers" (after register allocation: ptxas or the cubin), else the PTX
    upper bound "virtual_registers_32bit"; "spill_count" is "spills", which only ptxas knows. The
    aliases are looked up, not stored: iterating shows each metric once, under its docs/lint.md name.
    """

    ALIASES = {"register_count": ("registers", "virtual_registers_32bit"), "spill_count": ("spills",)}

    def _target(self, key: Any) -> Any:
        return next((name for name in self.ALIASES.get(key, ()) if dict.__contains__(self, name)), None)

    def __missing__(self, key: Any) -> Any:
        target = self._target(key)
        if target is not None:
            return dict.__getitem__(self, target)
        if key in self.ALIASES:
            raise KeyError(f"{key} ({' or '.join(self.ALIASES[key])}) is not known for this kernel: spills and "
                           "allocated registers exist only after ptxas ran (docs/lint.md); known: "
                           f"{', '.join(self) or 'none'}")
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or self._target(key) is not None

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default


@dataclass
class FuzzConfig:
    """How cases are generated: iteration count, seed, shape bounds, dtypes and layouts."""

    iterations: int = 100
    seed: int | None = None
    min_dims: int = 1
    max_dims: int = 4
    min_size: int = 1
    max_size: int = 1024
    dtypes: list[str] = field(default_factory=lambda: ["float32"])
    layouts: list[str] = field(default_factory=lambda: ["contiguous"])

    def __post_init__(self):
        if self.iterations < 0:
            raise ValueError(f"FuzzConfig.iterations must be >= 0, got {self.iterations}")
        if not 0 <= self.min_dims <= self.max_dims:
            raise ValueError(f"FuzzConfig needs 0 <= min_dims <= max_dims, got {self.min_dims}, {self.max_dims}")
        if not 1 <= self.min_size <= self.max_size:
            raise ValueError(f"FuzzConfig needs 1 <= min_size <= max_size, got {self.min_size}, {self.max_size}")
        if not self.dtypes or not self.layouts:
            raise ValueError("FuzzConfig.dtypes and FuzzConfig.layouts must not be empty")

    def to_dict(self) -> dict:
        return {
            "iterations": self.iterations, "seed": None if self.seed is None else str(self.seed),
            "min_dims": self.min_dims, "max_dims": self.max_dims, "min_size": self.min_size,
            "max_size": self.max_size, "dtypes": list(self.dtypes), "layouts": list(self.layouts),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict | None) -> "FuzzConfig":
        d = d or {}
        known = {k: d[k] for k in ("iterations", "min_dims", "max_dims", "min_size", "max_size") if k in d}
        seed = d.get("seed")
        return cls(seed=None if seed in (None, "") else int(seed), dtypes=list(d.get("dtypes") or ["float32"]),
                   layouts=list(d.get("layouts") or ["contiguous"]), **{k: int(v) for k, v in known.items()})


@dataclass
class ReproductionInfo:
    """What replays a case exactly: its seed, the input's shape/strides/dtype/layout, the config, a snapshot."""

    seed: int
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    dtype: str = "float32"
    layout: str = "contiguous"
    fuzz_config: FuzzConfig = field(default_factory=FuzzConfig)
    input_snapshot: dict = field(default_factory=dict)
    command: str = ""  # the CLI line that replays it, e.g. "gpuemu reproduce 123"


@dataclass
class ValidationResult:
    """Result of one validation (one case of one op)."""

    passed: bool
    seed: int
    op_name: str
    max_diff: float = 0.0
    max_rel_diff: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    timestamp: str = field(default_factory=utc_timestamp)
    duration_ms: int = 0
    repro_info: ReproductionInfo | None = None
    kind: str = "none"  # failure kind (check::FailureKind name); "none" when passed
    dtype: str = "float32"
    mismatches: int = 0
    tolerance_used: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.passed


@dataclass
class FuzzResults:
    """Aggregated results of a fuzz session."""

    seed: int
    total: int = 0
    passed: int = 0
    failed: int = 0
    failures: list[ValidationResult] = field(default_factory=list)
    op_name: str = ""
    duration_ms: int = 0
    run_id: str = ""

    @property
    def all_passed(self) -> bool:
        return self.failed == 0

    def add(self, result: ValidationResult) -> None:
        """Count one case's result (and keep it when it failed)."""
        self.total += 1
        if result.passed:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(result)


@dataclass
class ReproduceResult:
    """A failure replayed: the new validation result and the inputs that triggered it."""

    result: ValidationResult
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    reproduced: bool = True  # the same failure kind came back
    original: ValidationResult | None = None
    needs_client: bool = False  # the op runs only on the client: pass run_op to reproduce()
    from_snapshot: bool = False  # replayed from the stored inputs rather than regenerated from the seed


@dataclass
class MinimizeResult:
    """A failing case shrunk: the smallest input found that still fails the same way."""

    original_seed: int
    minimized_seed: int
    minimized_shape: tuple[int, ...]
    result: ValidationResult
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    original_shape: tuple[int, ...] = ()
    steps: int = 0
    # True when max_iters ran out before the search finished: the result is the smallest case
    # found so far, and stopped_in ("dims" or "values") says where the search stopped.
    out_of_budget: bool = False
    stopped_in: str | None = None


@dataclass
class TestCase:
    """One generated case: its seed, the main input's shape, dtype and layout, and every input."""

    __test__ = False  # not a pytest test class

    seed: int
    shape: tuple[int, ...]
    dtype: str
    layout: str
    inputs: dict[str, np.ndarray]
    distribution: str = "regular"
    op_name: str = ""

    def __getitem__(self, key: str) -> Any:
        """Dict-style access (test_case["inputs"]) as the daemon-orchestrated examples use it."""
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return self.__dataclass_fields__.keys()
