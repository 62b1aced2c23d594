# Turns the daemon's JSON result objects (the failure/result records of docs/result-json.md and
# docs/protocol.md) into the client's data classes. Seeds arrive as decimal strings, non-finite
# statistics as "NaN"/"Infinity"/"-Infinity".
"""validation_result(), fuzz_results(), repro_info() from daemon replies."""

from __future__ import annotations

import math
from typing import Any

from gpuemu.results import Failure, FuzzConfig, FuzzResults, ReproductionInfo, ValidationResult

__all__ = ["seed_to_wire", "seed_from_wire", "float_from_wire", "float_to_wire", "validation_result",
           "summary_result", "fuzz_results", "repro_info", "shape_of"]

_MAX_U64 = (1 << 64) - 1
_NONFINITE = {"NaN": math.nan, "nan": math.nan, "Infinity": math.inf, "inf": math.inf, "-Infinity": -math.inf,
              "-inf": -math.inf}


def seed_to_wire(seed: int) -> str:
    """A u64 seed as the decimal string the protocol carries (exact above 2^53)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        try:
            seed = int(seed)
        except (TypeError, ValueError):
            raise TypeError(f"seed must be an int in [0, 2^64), got {seed!r}") from None
    if not 0 <= seed <= _MAX_U64:
        raise ValueError(f"seed must be in [0, 2^64), got {seed}; seeds are unsigned 64-bit")
    return str(seed)


def seed_from_wire(value: Any) -> int:
    if isinstance(value, str):
        return int(value, 10)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(f"a seed on the wire must be a decimal string, got {value!r}")


def float_from_wire(value: Any, default: float = 0.0) -> float:
    if value is None:
        return default
    if isinstance(value, str):
        if value in _NONFINITE:
            return _NONFINITE[value]
        return float(value)
    return float(value)


def float_to_wire(value: float) -> Any:
    """Finite floats stay numbers; NaN and infinities become the protocol's strings."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def shape_of(record: dict) -> tuple[int, ...]:
    """The first input's shape of a failure record ("shapes": {name: [...]}, or "shape": [...])."""
    if isinstance(record.get("shape"), list):
        return tuple(int(d) for d in record["shape"])
    shapes = record.get("shapes") or {}
    if isinstance(shapes, dict) and shapes:
        return tuple(int(d) for d in next(iter(shapes.values())))
    return ()


def repro_info(record: dict, snapshot: dict | None = None) -> ReproductionInfo:
    return ReproductionInfo(
        seed=seed_from_wire(record.get("seed", "0")),
        shape=shape_of(record),
        strides=tuple(int(s) for s in record.get("strides", ()) or ()),
        dtype=str(record.get("dtype", "float32")),
        layout=str(record.get("layout", "contiguous")),
        fuzz_config=FuzzConfig.from_dict(record.get("fuzz_config")),
        input_snapshot=snapshot if snapshot is not None else dict(record.get("input_snapshot") or {}),
        command=str(record.get("replay", "")),
    )


def validation_result(record: dict, op_name: str = "") -> ValidationResult:
    """A ValidationResult from one result or failure object of the daemon."""
    kind = str(record.get("kind", "none") or "none")
    passed = bool(record["passed"]) if "passed" in record else kind == "none"
    failures = []
    for f in record.get("failures") or []:
        failures.append(Failure(f["message"], f.get("kind", kind)) if isinstance(f, dict) else Failure(str(f), kind))
    if not failures and not passed and record.get("message"):
        failures.append(Failure(str(record["message"]), kind, worst=record.get("worst", []),
                                stderr=record.get("stderr", "")))
    return ValidationResult(
        passed=passed,
        seed=seed_from_wire(record.get("seed", "0")),
        op_name=str(record.get("op", record.get("op_name", op_name)) or op_name),
        max_diff=float_from_wire(record.get("max_abs", record.get("max_diff"))),
        max_rel_diff=float_from_wire(record.get("max_rel", record.get("max_rel_diff"))),
        failures=failures,
        timestamp=str(record.get("timestamp", record.get("created", "")) or ""),
        duration_ms=int(record.get("duration_ms", 0) or 0),
        repro_info=None if passed else repro_info(record),
        kind=kind,
        dtype=str(record.get("dtype", "float32")),
        mismatches=int(record.get("mismatches", 0) or 0),
        tolerance_used=float_from_wire(record.get("tolerance_used")),
        warnings=[str(w) for w in record.get("warnings", []) or []],
    )


def summary_result(record: dict) -> ValidationResult:
    """A list_results row (one run, op and dtype) as a ValidationResult; seed is the run's master seed."""
    passed = bool(record.get("passed", False))
    failed = int(record.get("failed", 0) or 0) + int(record.get("errors", 0) or 0)
    failures = [] if passed else [Failure(f"{failed} of {record.get('total', 0)} cases failed in run "
                                          f"{record.get('run_id', '')} ({record.get('command', '')})", "failed")]
    return ValidationResult(
        passed=passed, seed=seed_from_wire(record.get("seed", "0")), op_name=str(record.get("op", "")),
        max_diff=float_from_wire(record.get("max_abs")), max_rel_diff=float_from_wire(record.get("max_rel")),
        failures=failures, timestamp=str(record.get("timestamp", "") or ""), kind="none" if passed else "failed",
        dtype=str(record.get("dtype", "float32")), tolerance_used=float_from_wire(record.get("tolerance_used")),
    )


def fuzz_results(reply: dict, op_name: str = "") -> FuzzResults:
    """A fuzz reply; failed counts op_error/reference_error cases too, so total = passed + failed."""
    failures = [validation_result(f, op_name) for f in reply.get("failures", [])]
    total = int(reply.get("total", 0))
    passed = int(reply.get("passed", total - len(failures)))
    return FuzzResults(seed=seed_from_wire(reply.get("seed", "0")), total=total, passed=passed,
                       failed=total - passed, failures=failures, op_name=str(reply.get("op", op_name)),
                       duration_ms=int(reply.get("duration_ms", 0) or 0), run_id=str(reply.get("run_id", "") or ""))
