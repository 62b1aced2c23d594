# SeededFuzzer of docs/python-api.md: reproducible cases from one seed, the user's op run on each
# under the client-side guard and compared with a reference (or checked for NaN/Inf) in this process.
"""SeededFuzzer(seed, config).run(op_fn, ref_fn)."""

from __future__ import annotations

import time
from typing import Callable, Iterator, Sequence

import numpy as np

from gpuemu._internal.client.guard import run_guarded
from gpuemu._internal.client.repro import input_snapshot
from gpuemu._internal.core.compare import compare_output
from gpuemu._internal.core.dtypes import is_floating
from gpuemu._internal.core.fuzz.generators import draw_shape, dtype_pool, layout_pool
from gpuemu._internal.core.layouts import with_layout
from gpuemu._internal.core.rng import SeededRng, derive_seed
from gpuemu._internal.core.tolerance import ToleranceConfig
from gpuemu._internal.core.values import generate_tensor
from gpuemu.results import Failure, FuzzConfig, FuzzResults, ReproductionInfo, TestCase, ValidationResult

__all__ = ["SeededFuzzer"]


class SeededFuzzer:
    """Reproducible cases from one seed: case i has seed derive_seed(seed, "case/i") and depends on nothing else."""

    def __init__(self, seed: int, config: FuzzConfig | None = None, input_names: Sequence[str] = ("x",),
                 domain: tuple[float, float] = (-1.0, 1.0)):
        self.seed = int(seed)
        self.config = config or FuzzConfig(seed=self.seed)
        if not input_names:
            raise ValueError("SeededFuzzer needs at least one input name")
        self.input_names = list(input_names)
        self.domain = domain
        self.index = 0
        layout_pool(self.config.layouts)
        self._dtypes = dtype_pool(self.config.dtypes, None)

    def case(self, index: int) -> TestCase:
        """Case number index (random access: the same as the index-th next_test_case())."""
        case_seed = derive_seed(self.seed, f"case/{index}")
        rng = SeededRng(derive_seed(case_seed, "params"))
        dtype = rng.choice(self._dtypes)
        layout = rng.choice(self.config.layouts)
        c = self.config
        shape = draw_shape(SeededRng(derive_seed(case_seed, "dims")), c.min_dims, c.max_dims, c.min_size, c.max_size)
        inputs = {
            name: with_layout(generate_tensor(derive_seed(case_seed, f"input/{name}"), dtype, shape, self.domain,
                                              "regular"), layout)
            for name in self.input_names
        }
        return TestCase(seed=case_seed, shape=shape, dtype=dtype, layout=layout, inputs=inputs)

    def next_test_case(self) -> TestCase:
        case = self.case(self.index)
        self.index += 1
        return case

    def __iter__(self) -> Iterator[TestCase]:
        for _ in range(self.config.iterations):
            yield self.next_test_case()

    def run(self, op_fn: Callable, ref_fn: Callable | None = None, tolerance: ToleranceConfig | None = None,
            fail_fast: bool = False, op_name: str = "") -> FuzzResults:
        """Run op_fn(inputs_dict) on config.iterations cases; compare with ref_fn(inputs_dict) when given.

        Without a reference a case fails when op_fn raises, mutates or aliases an input, or returns
        NaN/Inf for finite inputs. Tolerance defaults to ToleranceConfig.for_dtype(case dtype).
        """
        start = time.perf_counter()
        results = FuzzResults(seed=self.seed, op_name=op_name or getattr(op_fn, "__name__", "op"))
        for case in self:
            result = self._check(case, op_fn, ref_fn, tolerance, results.op_name)
            results.add(result)
            if fail_fast and not result.passed:
                break
        results.duration_ms = int((time.perf_counter() - start) * 1000)
        return results

    def _check(self, case: TestCase, op_fn, ref_fn, tolerance, op_name: str) -> ValidationResult:
        run = run_guarded(op_fn, case.inputs)
        result = ValidationResult(passed=False, seed=case.seed, op_name=op_name, dtype=case.dtype,
                                  duration_ms=run.duration_ms, repro_info=self._repro(case))
        if run.kind != "none":
            result.kind = run.kind
            result.failures = [Failure(run.message, run.kind)]
            return result
        tol = tolerance or ToleranceConfig.for_dtype(case.dtype)
        if ref_fn is not None:
            verdict = compare_output(run.output, ref_fn({k: np.array(v) for k, v in case.inputs.items()}), tol)
        else:
            out = np.asarray(run.output, dtype=np.float64) if is_floating(case.dtype) else None
            bad = out is not None and not np.isfinite(out).all()
            verdict = compare_output(run.output, run.output, tol)
            if bad:
                verdict.kind, verdict.message = "unexpected_nonfinite", "output has NaN/Inf for finite inputs"
        result.passed = verdict.passed
        result.kind = verdict.kind
        result.max_diff, result.max_rel_diff = verdict.max_abs, verdict.max_rel
        result.mismatches, result.tolerance_used = verdict.mismatches, verdict.tolerance_used
        result.failures = [] if verdict.passed else [Failure(verdict.message, verdict.kind)]
        return result

    def _repro(self, case: TestCase) -> ReproductionInfo:
        first = case.inputs[self.input_names[0]]
        strides = tuple(s // first.itemsize for s in first.strides)
        return ReproductionInfo(seed=case.seed, shape=case.shape, strides=strides, dtype=case.dtype,
                                layout=case.layout, fuzz_config=self.config, input_snapshot=input_snapshot(case.inputs))
