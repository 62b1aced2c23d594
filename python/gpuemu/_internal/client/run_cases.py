# Client-side fuzzing (docs/python-api.md "Execution modes and inline validation"): cases come from
# the daemon (or the same generator inline), the user's run_op runs them here under guard.
"""fuzz(), inline_batch() and cases_from_reply() behind Client.fuzz_op_client_side / get_test_batch."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from gpuemu._config_keys import DEFAULTS
from gpuemu._internal.client.guard import run_guarded
from gpuemu._internal.client.repro import fuzz_config_for, repro_for_case
from gpuemu._internal.core.fuzz.cases import DimSpec, OpSpec, generate_case, run_case_seed
from gpuemu.errors import ClientError
from gpuemu.frameworks import AdapterSettings, Converter
from gpuemu._internal.client.arrays import arrays_of, case_storage
from gpuemu.results import Failure, FuzzResults, ValidationResult
from gpuemu._internal.wire.records import seed_from_wire

__all__ = ["fuzz", "inline_batch", "cases_from_reply", "schema_op", "op_timeout"]

DEFAULT_TIMEOUT = float(DEFAULTS["validation", "timeout"])  # seconds, as the CLI's


def schema_op(base: OpSpec, op_schema: dict) -> OpSpec:
    """The op with its schema replaced by an op_schema dict (docs/python-api.md, get_test_batch):
    {"name", "dims": [{"name", "candidates"}], "inputs": [{"name", "dims"}], "output": {...}}."""
    try:
        dims = [DimSpec(str(d["name"]), min(d["candidates"]), max(d["candidates"]), [int(c) for c in d["candidates"]])
                for d in op_schema["dims"]]
        inputs = {str(i["name"]): list(i["dims"]) for i in op_schema["inputs"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise ClientError(f"op_schema must look like {{'dims': [{{'name': 'M', 'candidates': [1, 64]}}], 'inputs': "
                          f"[{{'name': 'a', 'dims': ['M', 'K']}}], 'output': {{'name': 'out', 'dims': [...]}}}}: {exc}") from None
    return dataclasses.replace(base, dims=dims, schema_inputs=inputs, input_names=list(inputs), has_schema=True)


def _case_dict(case, op_name: str) -> dict[str, Any]:
    return {"seed": case.seed, "op": op_name, "inputs": case.inputs, "shape": case.shape, "dtype": case.dtype,
            "layout": case.layout, "distribution": case.distribution,
            "shapes": {name: tuple(arr.shape) for name, arr in case.inputs.items()}}


def inline_batch(project, op_name: str, count: int, seed: int, op_schema: dict | None, dtypes: list[str] | None,
                 start: int = 0, values: str | None = None) -> list[dict[str, Any]]:
    """Cases start..start+count-1 of the "fuzz" stream under master seed, generated here (no daemon);
    values picks one value distribution (regular, boundary, adversarial; mixed or None: all)."""
    op = project.op(op_name)
    if op_schema is not None:
        op = schema_op(op, op_schema)
    if dtypes:
        op = dataclasses.replace(op, dtypes=list(dtypes))
    return [_case_dict(generate_case(op, run_case_seed(op, seed, "fuzz", i, distribution=values)), op_name)
            for i in range(start, start + count)]


def cases_from_reply(reply: dict, tensors: dict[str, np.ndarray], op_name: str) -> list[dict[str, Any]]:
    """The case dicts of a get_test_batch reply; tensors are named "case/I/input/NAME" (I from 0)."""
    cases = []
    for i, meta in enumerate(reply.get("cases", [])):
        prefix = f"case/{i}/input/"
        found = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
        order = [name for name in meta.get("input_order", []) if name in found]
        inputs = {name: found[name] for name in order + [n for n in found if n not in order]}
        first = next(iter(inputs.values()), None)
        cases.append({"seed": seed_from_wire(meta["seed"]), "op": op_name, "inputs": inputs,
                      "shape": tuple(first.shape) if first is not None else (), "dtype": meta.get("dtype", "float32"),
                      "layout": meta.get("layout", "contiguous"), "distribution": meta.get("distribution", ""),
                      "shapes": {k: tuple(v.shape) for k, v in inputs.items()}, "dims": meta.get("dims", {}),
                      "index": int(meta.get("index", i))})
    return cases


def _guard_failure(case: dict, op_name: str, kind: str, message: str, took: int) -> ValidationResult:
    return ValidationResult(
        passed=False, seed=case["seed"], op_name=op_name, failures=[Failure(message, kind)], duration_ms=took,
        kind=kind, dtype=case["dtype"])


def op_timeout(client, op_name: str) -> float:
    """The op's `timeout` from gpuemu.toml, else [validation] timeout, else that key's default."""
    try:
        project = client._project()
    except ClientError:  # no local gpuemu.toml: a daemon-only setup
        return DEFAULT_TIMEOUT
    table = project._tables.get(op_name, {})
    value = table.get("timeout", project.data.get("validation", {}).get("timeout", DEFAULT_TIMEOUT))
    return float(value)


def _local_op(client, op_name: str, inline: bool):
    """The op's spec when a local gpuemu.toml has it (for the fuzz configuration), else None."""
    try:
        return client._project().op(op_name)
    except ClientError:
        if inline:
            raise
        return None


def op_converter(client, op_name: str, framework: str | None):
    """The frameworks.Converter for run_op: framework given, else the op's (or the written
    [project]) framework in gpuemu.toml; None when neither names one (run_op gets numpy as before)."""
    form = "ml_dtypes"
    try:
        project = client._project()
    except ClientError:  # a daemon without a gpuemu.toml here: only framework= can name one
        project = None
    if project is not None:
        framework = framework or project.op_framework(op_name)
        form = project.numpy_bfloat16
    if framework is None:
        return None
    return Converter(AdapterSettings(framework=framework, numpy_bfloat16=form, role="op"))


def converted(run_op: Callable, converter, op_name: str, dtype: str) -> Callable:
    """run_op behind the converter: storages in, framework tensors to run_op, numpy arrays out."""
    def call(storages: dict) -> Any:
        inputs = converter.inputs({name: (arr, kind) for name, (arr, kind) in storages.items()}, op_name)
        out = converter.call(run_op, inputs, {}, dtype)
        items = converter.outputs(out, op_name)
        return dict(items) if isinstance(out, Mapping) else items[0][1]

    return call


def _run(run_op: Callable, converter, case: dict, op_name: str, timeout: float | None = None):
    """run_guarded on the case: with a converter, on the inputs' storages (the framework tensors
    share their memory, so writes into them and outputs that alias them are still caught)."""
    if converter is None:
        run = run_guarded(run_op, case["inputs"], timeout)
        if run.kind == "none":
            try:
                run.output = arrays_of(run.output, "run_op output")
            except (TypeError, ValueError) as exc:
                run.kind, run.message, run.output = "op_error", f"run_op returned {exc}", None
        return run
    storages = {name: case_storage(np.asarray(arr), case["dtype"], f"input {name!r}")
                for name, arr in case["inputs"].items()}
    views = {name: view for name, (view, _) in storages.items()}
    kinds = {name: kind for name, (_, kind) in storages.items()}
    call = converted(run_op, converter, op_name, case["dtype"])
    return run_guarded(lambda given: call({name: (given[name], kinds[name]) for name in kinds}), views, timeout)


def fuzz(client, op_name: str, run_op: Callable, iterations: int, seed: int, fail_fast: bool,
         op_schema: dict | None, dtypes: list[str] | None, batch_size: int, framework: str | None = None,
         values: str | None = None, timeout: float | None = None) -> FuzzResults:
    start_time = time.perf_counter()
    converter = op_converter(client, op_name, framework)
    results = FuzzResults(seed=seed, op_name=op_name)
    inline = client._use_inline()
    if values is not None and values not in ("regular", "boundary", "adversarial", "mixed"):
        raise ClientError(f"value_distribution {values!r} is not regular, boundary, adversarial or mixed")
    timeout = op_timeout(client, op_name) if timeout is None else float(timeout)
    local = _local_op(client, op_name, inline)
    if local is not None and op_schema is not None:
        local = schema_op(local, op_schema)
    layouts = list(local.layouts) if local is not None else None

    def batch_at(start: int, count: int) -> list[dict[str, Any]]:
        if inline:
            return inline_batch(client._project(), op_name, count, seed, op_schema, dtypes, start=start, values=values)
        return client._test_batch_from(op_name, count, seed, start, op_schema, dtypes, values)

    done = 0
    while done < iterations:
        count = min(batch_size, iterations - done)
        batch = batch_at(done, count)
        for offset, case in enumerate(batch):
            run = _run(run_op, converter, case, op_name, timeout)
            if run.kind == "input_mutated" or run.timed_out:
                # Report the case with the inputs it was given, not the ones the op scribbled over
                # (or, timed out, may still be writing).
                case = batch_at(done + offset, 1)[0]
            if inline:
                if run.kind != "none":
                    result = _guard_failure(case, op_name, run.kind, run.message, run.duration_ms)
                else:
                    result = client._project().validate(op_name, case["inputs"], run.output, case["dtype"],
                                                        case["seed"])
            else:
                extra = {"client_failure": {"kind": run.kind, "message": run.message}} if run.kind != "none" else {}
                result = client._validate_request("submit_output", op_name, case["inputs"], run.output,
                                                  case["dtype"], case["seed"], {}, extra)
            if not result.passed:
                config = fuzz_config_for(local, seed, iterations, dtypes, layouts, case.get("shapes"))
                result.repro_info = repro_for_case(case, config, result.repro_info.command if result.repro_info else "")
            results.add(result)
            # A timed-out call may still hold the GPU or the inputs: the run stops there, as after
            # fail_fast, and the timeout is the last result.
            if (fail_fast and not result.passed) or run.timed_out:
                results.duration_ms = int((time.perf_counter() - start_time) * 1000)
                return results
        done += count
    results.duration_ms = int((time.perf_counter() - start_time) * 1000)
    return results
