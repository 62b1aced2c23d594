# The Python client of the gpuemu daemon (docs/python-api.md): every request of docs/protocol.md as a
# method, plus the inline fallback of client-side validation when no daemon is running.
"""Client(socket_path=None, timeout_ms=30000): validate, fuzz, reproduce, minimize, lint over NNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from gpuemu._internal.client import run_cases
from gpuemu._internal.client.guard import run_guarded
from gpuemu._internal.client.inline import InlineProject, find_config
from gpuemu._internal.client.minimize import minimize_client_side
from gpuemu._internal.core.rng import generate_seed
from gpuemu.errors import ClientError, DaemonError, ProtocolMismatchError
from gpuemu._internal.client.arrays import arrays_of
from gpuemu.results import Failure, FuzzResults, LintMetrics, MinimizeResult, ReproduceResult, ValidationResult
from gpuemu._internal.wire import protocol
from gpuemu._internal.wire.records import (
    float_from_wire,
    fuzz_results,
    seed_from_wire,
    seed_to_wire,
    shape_of,
    summary_result,
    validation_result,
)
from gpuemu._internal.wire.transport import NngTransport, default_socket_path

__all__ = ["Client", "MINIMIZE_STRATEGIES"]

# docs/python-api.md's strategy names -> the daemon's (and `gpuemu minimize --strategy`).
# The longest wait the transport can express: pynng takes timeouts as a C int of milliseconds
# (24.8 days). Longer requests are refused here rather than overflowing inside pynng.
MAX_TIMEOUT_MS = 2**31 - 1
# The daemon's limits for these fields (docs/protocol.md); checked here so a wrong value is a
# ValueError naming the argument before anything is sent.
MAX_FUZZ_ITERATIONS = 1_000_000
MAX_CALIBRATE_ITERATIONS = 100_000
MAX_MINIMIZE_ITERS = 100_000
MINIMIZE_STRATEGIES = {"binary-search-dims": "dims", "binary-search-values": "values", "dims": "dims",
                       "values": "values", "all": "all"}


class Client:
    """A connection to the gpuemu daemon; usable as a context manager (closes the socket).

    socket_path defaults to $GPUEMU_HOME/gpuemu.sock (GPUEMU_HOME defaults to ~/.gpuemu).
    config is the project's gpuemu.toml (default: the nearest one above the current directory);
    it is sent with requests that name an op and is what inline mode reads. inline=None (default)
    validates client-side requests in this process when no daemon is running; True always does,
    False never does (DaemonNotRunningError instead).
    """

    def __init__(self, socket_path: str | None = None, timeout_ms: int = 30000, *, config: str | None = None,
                 inline: bool | None = None):
        self.timeout_ms = _bounded_int("timeout_ms", timeout_ms, 1, MAX_TIMEOUT_MS)
        self.socket_path = str(socket_path or default_socket_path())
        self.inline = inline
        self._config_arg = config
        self._transport = NngTransport(self.socket_path, self.timeout_ms)
        self._inline_project = None
        # The run_op each op was last given (fuzz_op_client_side, reproduce) and the op of every failure
        # fuzz_op_client_side found, so minimize(seed) of such a failure re-runs the same callable
        # without the caller passing it again (the seed readme's headline flow).
        self._run_ops: dict[str, Callable] = {}
        self._failure_ops: dict[int, str] = {}

    # ── lifecycle ──────────────────────────────────────────────────────────────────────────
    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(socket_path={self.socket_path!r}, timeout_ms={self.timeout_ms})"

    # ── plumbing ───────────────────────────────────────────────────────────────────────────
    def _config_path(self) -> str | None:
        if self._config_arg:
            return str(Path(self._config_arg).resolve())
        found = find_config()
        # Resolved: the daemon does not follow a symlink named in a request (docs/protocol.md).
        return str(found.resolve()) if found else None

    def _request(self, kind: str, fields: dict | None = None, tensors: dict | None = None,
                 timeout_ms: int | None = None) -> tuple[dict, dict[str, np.ndarray]]:
        header = {"protocol_version": protocol.PROTOCOL_VERSION, "type": kind, **(fields or {})}
        config = self._config_path()
        if config and "config" not in header:
            header["config"] = config
        raw = self._transport.request(lambda segment: protocol.encode_message(header, tensors, segment),
                                      f"'{kind}'", timeout_ms)
        try:
            reply, out = protocol.decode_message(raw)
        except protocol.MessageError as exc:
            raise ProtocolMismatchError(f"the daemon at {self._transport.url} answered '{kind}' with a message this "
                                        f"client cannot read ({exc}); use a client and daemon of the same gpuemu "
                                        "release") from None
        if reply.get("ok") is False or reply.get("type") == "error":
            error = reply.get("error") or {}
            message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            err_kind = error.get("kind", "internal") if isinstance(error, dict) else "internal"
            if err_kind == "protocol_mismatch":
                raise ProtocolMismatchError(f"{message} (this client speaks protocol {protocol.PROTOCOL_VERSION}; use a "
                                            "client and daemon of the same gpuemu release)")
            raise DaemonError(message, err_kind, kind)
        version = reply.get("protocol_version")
        if version != protocol.PROTOCOL_VERSION:
            raise ProtocolMismatchError(f"the daemon speaks protocol {version}, this client {protocol.PROTOCOL_VERSION}; "
                                        "use a client and daemon of the same gpuemu release")
        return reply, out

    def _use_inline(self) -> bool:
        if self.inline is True:
            return True
        if self.inline is False:
            return False
        return not self._transport.available()

    def _project(self):
        if self._inline_project is None:
            self._inline_project = InlineProject.discover(self._config_arg)
        return self._inline_project

    # ── the API ────────────────────────────────────────────────────────────────────────────
    def ping(self) -> dict[str, Any]:
        """{'version', 'protocol_version', 'uptime_secs', 'pid', 'socket', 'in_flight', 'served', 'config'}."""
        reply, _ = self._request("ping")
        info = {k: v for k, v in reply.items() if k not in ("ok", "type", "tensors")}
        info["uptime_secs"] = float_from_wire(reply.get("uptime_secs"))
        return info

    def validate_op(self, op_name: str, inputs: dict[str, np.ndarray], output: Any, dtype: str | None = None,
                    seed: int | None = None, **kwargs) -> ValidationResult:
        """Validate an op's output against its reference (client-side mode); stored by the daemon."""
        seed = generate_seed() if seed is None else seed
        inputs, output = _numpy_tensors(inputs, output)
        if self._use_inline():
            return self._project().validate(op_name, inputs, output, dtype, seed, kwargs)
        return self._validate_request("validate", op_name, inputs, output, dtype, seed, kwargs)

    def _client_failure(self, op_name: str, inputs: dict, kind: str, message: str, dtype: str | None,
                        seed: int | None, kwargs: dict) -> ValidationResult:
        """A case the client judged itself (kind input_mutated, ...): stored by the daemon with the given
        (pristine) inputs, or an inline result naming the kind."""
        seed = generate_seed() if seed is None else seed
        if self._use_inline():
            return ValidationResult(passed=False, seed=seed, op_name=op_name, failures=[Failure(message, kind)],
                                    kind=kind, dtype=dtype or "float32")
        return self._validate_request("validate", op_name, inputs, None, dtype, seed, kwargs,
                                      {"client_failure": {"kind": kind, "message": message}})

    def _validate_request(self, kind: str, op_name: str, inputs: dict, output: Any, dtype: str | None, seed: int,
                          kwargs: dict, extra: dict | None = None) -> ValidationResult:
        # Tensors go in their own numpy dtypes, except that float32 arrays of a bfloat16 case go as
        # bfloat16 when that is exact (cases arrive as float32 holding bfloat16 values); `dtype`
        # tells the daemon the case dtype for the tolerance.
        tensors: dict[str, Any] = {f"input/{name}": _wire(arr, dtype) for name, arr in inputs.items()}
        outputs = output if isinstance(output, dict) else {"out": output}
        tensors.update({f"output/{name}": _wire(arr, dtype) for name, arr in outputs.items() if arr is not None})
        fields = {"op": op_name, "seed": seed_to_wire(seed), "kwargs": kwargs, **(extra or {})}
        if dtype is not None:
            fields["dtype"] = dtype
        reply, _ = self._request(kind, fields, tensors)
        return validation_result(reply.get("result", reply), op_name)

    def get_result(self, seed: int, op: str | None = None) -> ValidationResult | None:
        """The stored result of a case seed: its newest failure, else its newest passing validation."""
        reply, _ = self._request("get_result", _with_op({"seed": seed_to_wire(seed)}, op))
        record = reply.get("result")
        return None if record is None else validation_result(record)

    def list_results(self, limit: int = 100, op: str | None = None) -> list[ValidationResult]:
        """Per (run, op, dtype) summaries, newest first: seed is the run's master seed."""
        reply, _ = self._request("list_results", _with_op({"limit": int(limit)}, op))
        return [summary_result(r) for r in reply.get("results", [])]

    def store_baseline(self, tag: str) -> dict:
        reply, _ = self._request("store_baseline", {"tag": str(tag)})
        return {k: v for k, v in reply.items() if k not in ("type", "protocol_version", "ok")}

    def fuzz_op(self, op_name: str, seed: int | None = None, iterations: int = 100, fail_fast: bool = False,
                batch_sizes: list[int] | None = None, seq_lengths: list[int] | None = None,
                hidden_dims: list[int] | None = None, dtypes: list[str] | None = None,
                layouts: list[str] | None = None, *, values: str | None = None, op_script: str | None = None,
                jobs: int | None = None) -> FuzzResults:
        """Daemon-side fuzzing: the daemon runs the op (op_script or module, or `op_script` given
        here: a script path or module:function that replaces it for this request) and the reference.
        batch_sizes, seq_lengths and hidden_dims are accepted for compatibility; shapes come from
        the op's schema."""
        iterations = _bounded_int("iterations", iterations, 0, MAX_FUZZ_ITERATIONS)
        seed = generate_seed() if seed is None else seed
        lists = {"batch_sizes": batch_sizes, "seq_lengths": seq_lengths, "hidden_dims": hidden_dims,
                 "dtypes": dtypes, "layouts": layouts}
        fields = _given({"op": op_name, "seed": seed_to_wire(seed), "iterations": iterations,
                         "fail_fast": bool(fail_fast)}, values=values, op_script=op_script, jobs=jobs,
                        **{key: None if value is None else list(value) for key, value in lists.items()})
        reply, _ = self._request("fuzz", fields, timeout_ms=self._long_timeout(iterations))
        return fuzz_results(reply, op_name)

    def _long_timeout(self, iterations: int) -> int:
        # A fuzz request does many cases: allow timeout_ms per 10 cases, at least timeout_ms, and at
        # most what the transport can wait for (pynng takes a C int of milliseconds).
        return min(MAX_TIMEOUT_MS, self.timeout_ms * max(1, (iterations + 9) // 10))

    def reproduce(self, seed: int, op: str | None = None, run_op: Callable | None = None) -> ReproduceResult:
        """Re-run a stored failure. With run_op, run_op runs on the stored inputs here (under the op's
        timeout) and the daemon validates its output: always, also for an op that names a `module` or
        `op_script` the daemon could run itself. Without it, the daemon re-runs the op when it can;
        an op that runs only on the client comes back with needs_client set (run_op is never implied
        here: reproduce without it shows the stored case; minimize is what re-runs a remembered one)."""
        return self._reproduce(seed, op, run_op)

    def _reproduce(self, seed: int, op: str | None, run_op: Callable | None) -> ReproduceResult:
        """reproduce() with exactly this run_op (None: the daemon re-runs the op or hands back the case)."""
        fields = _with_op({"seed": seed_to_wire(seed)}, op)
        if run_op is not None:
            fields["client_runs_op"] = True  # the daemon only hands back the case
        reply, tensors = self._request("reproduce", fields)
        inputs = _named(tensors, "input/")
        original = validation_result(reply["original"]) if reply.get("original") else None
        out = ReproduceResult(result=validation_result(reply.get("result") or {"seed": seed_to_wire(seed)}),
                              inputs=inputs, reproduced=bool(reply.get("reproduced", False)), original=original,
                              needs_client=bool(reply.get("needs_client", False)),
                              from_snapshot=bool(reply.get("from_snapshot", False)))
        if run_op is not None:
            op_name = original.op_name if original else out.result.op_name
            self._run_ops[op_name] = run_op
            run = run_guarded(run_op, {k: np.array(v) for k, v in inputs.items()}, run_cases.op_timeout(self, op_name))
            extra = {"client_failure": {"kind": run.kind, "message": run.message}} if run.kind != "none" else {}
            dtype = original.dtype if original else None
            out.result = self._validate_request("submit_output", op_name, inputs, run.output, dtype, seed, {}, extra)
            out.reproduced = not out.result.passed and (original is None or out.result.kind == original.kind)
            out.needs_client = False
        return out

    def minimize(self, seed: int, strategy: str | None = "binary-search-dims", max_iters: int = 100,
                 op: str | None = None, run_op: Callable | None = None) -> MinimizeResult:
        """Shrink a stored failure. The daemon does it when it can run the op; for an op that runs
        only on the client pass run_op, and the client shrinks it (docs/python-api.md)."""
        name = MINIMIZE_STRATEGIES.get(strategy or "binary-search-dims")
        if name is None:
            raise ValueError(f"unknown strategy {strategy!r}; use one of {', '.join(MINIMIZE_STRATEGIES)}")
        max_iters = _bounded_int("max_iters", max_iters, 1, MAX_MINIMIZE_ITERS)
        run_op = run_op or self._remembered_run_op(seed, op)
        if run_op is not None:
            return minimize_client_side(self, seed, run_op, name, max_iters, op)
        try:
            reply, tensors = self._request("minimize", _with_op({"seed": seed_to_wire(seed), "strategy": name,
                                                                 "max_iters": max_iters}, op),
                                           timeout_ms=self._long_timeout(max_iters))
        except DaemonError as err:
            if "runs on the client" not in str(err):
                raise
            raise DaemonError(f"{err}. From Python: client.minimize({seed}, run_op=your_function) shrinks it here "
                              "(the function fuzz_op_client_side ran; this client remembers it after "
                              "fuzz_op_client_side, so calling minimize on the same client needs no run_op)",
                              err.kind, err.request) from None
        minimized = reply.get("minimized") or {}
        original = reply.get("original") or {}
        return MinimizeResult(
            original_seed=seed_from_wire(original.get("seed", seed_to_wire(seed))),
            minimized_seed=seed_from_wire(minimized.get("seed", "0")),
            minimized_shape=shape_of(minimized),
            result=validation_result(minimized),
            inputs=_named(tensors, "input/"),
            original_shape=shape_of(original),
            steps=int(reply.get("steps", 0) or 0),
            out_of_budget=bool(reply.get("out_of_budget", False)),
            stopped_in=reply.get("stopped_in"),
        )

    def _remembered_run_op(self, seed: int, op: str | None) -> Callable | None:
        """The run_op this client last gave the failure's op, for a failure its own client-side runs
        found (or any seed when `op` names a remembered op); None otherwise (the daemon decides)."""
        name = op or self._failure_ops.get(int(seed))
        return self._run_ops.get(name) if name else None

    def list_failures(self, limit: int = 20, op: str | None = None) -> list[ValidationResult]:
        reply, _ = self._request("list_failures", _with_op({"limit": int(limit)}, op))
        return [validation_result(r) for r in reply.get("failures", [])]

    def lint_kernel(self, ptx_content: str, kernel_name: str | None = None,
                    arch: str | None = None) -> list[dict[str, Any]]:
        """Lint PTX text: [{"kernel_name", "passed", "metrics", "violations", "timestamp", ...}] per kernel."""
        if not isinstance(ptx_content, str) or not ptx_content.strip():
            raise ValueError("lint_kernel needs the PTX text as a non-empty str")
        fields: dict[str, Any] = {"ptx": ptx_content}
        if kernel_name is not None:
            fields["kernel"] = kernel_name
        if arch is not None:
            fields["arch"] = arch
        reply, _ = self._request("lint", fields)
        out = []
        for k in reply.get("kernels", []):
            entry = dict(k)
            entry["metrics"] = LintMetrics(entry.get("metrics") or {})  # also register_count, spill_count
            entry.setdefault("kernel_name", entry.get("name", ""))
            entry.setdefault("timestamp", reply.get("timestamp", ""))
            out.append(entry)
        return out

    def calibrate(self, op_name: str, dtype: str | None = None, iterations: int = 50, seed: int | None = None,
                  against: str | None = None) -> list[dict[str, Any]]:
        """Fit tolerances from a trusted implementation (as `gpuemu calibrate`): one row per dtype."""
        iterations = _bounded_int("iterations", iterations, 2, MAX_CALIBRATE_ITERATIONS)
        fields = _given({"op": op_name, "iterations": iterations}, dtype=dtype, against=against,
                        seed=None if seed is None else seed_to_wire(seed))
        reply, _ = self._request("calibrate", fields, timeout_ms=self._long_timeout(iterations))
        return list(reply.get("rows", []))

    # ── daemon-orchestrated and client-side modes ────────────────────────────────────────────
    def get_test_case(self, op_name: str, seed: int | None = None) -> dict[str, Any]:
        """{'seed', 'inputs', 'shape', 'dtype', 'layout', ...} for the client to run."""
        return self.get_test_batch(op_name, count=1, seed=seed)[0]

    def get_test_batch(self, op_name: str, count: int = 10, seed: int | None = None,
                       op_schema: dict[str, Any] | None = None, dtypes: list[str] | None = None) -> list[dict[str, Any]]:
        if int(count) < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        seed = generate_seed() if seed is None else seed
        if self._use_inline():
            return run_cases.inline_batch(self._project(), op_name, int(count), seed, op_schema, dtypes)
        return self._test_batch_from(op_name, int(count), seed, 0, op_schema, dtypes)

    def _test_batch_from(self, op_name: str, count: int, seed: int, start: int, op_schema: dict | None,
                         dtypes: list[str] | None, values: str | None = None) -> list[dict[str, Any]]:
        """Cases start..start+count-1 of the daemon's case stream under a master seed."""
        fields = _given({"op": op_name, "count": count, "seed": seed_to_wire(seed), "start": start},
                        op_schema=op_schema, dtypes=None if dtypes is None else list(dtypes), values=values)
        reply, tensors = self._request("get_test_batch", fields)
        return run_cases.cases_from_reply(reply, tensors, op_name)

    def submit_output(self, op_name: str, inputs: dict[str, np.ndarray], output: Any, seed: int,
                      **kwargs) -> ValidationResult:
        """Validate the output of a case from get_test_case/get_test_batch; the daemon stores failures."""
        dtype = kwargs.pop("dtype", None)
        inputs, output = _numpy_tensors(inputs, output)
        if self._use_inline():
            return self._project().validate(op_name, inputs, output, dtype, seed, kwargs)
        return self._validate_request("submit_output", op_name, inputs, output, dtype, seed, kwargs)

    def fuzz_op_client_side(self, op_name: str, run_op: Callable | None = None, iterations: int = 100,
                            seed: int | None = None, fail_fast: bool = False, op_schema: dict[str, Any] | None = None,
                            dtypes: list[str] | None = None, *, op_fn: Callable | None = None,
                            batch_size: int = 16, framework: str | None = None,
                            value_distribution: str | None = "mixed", timeout: float | None = None) -> FuzzResults:
        """The daemon makes cases, run_op(inputs_dict) runs them here, the daemon validates and stores.

        Inputs are hashed before and after run_op: an op that writes into them fails with kind
        input_mutated, one whose output shares memory with an input with output_aliased.
        framework (a name of gpuemu.frameworks.FRAMEWORKS; default: the op's `framework` or the
        written `[project] framework` of gpuemu.toml) converts each case's inputs to that
        framework's tensors and run_op's result back, through gpuemu.frameworks; with none of
        them, run_op gets the cases' numpy arrays as they are (bfloat16 as float32).
        value_distribution: "regular", "boundary", "adversarial" (every case drawn that way) or
        "mixed" (the default; None too: the three in turn, as README.md and docs/python-api.md say).
        timeout: seconds per run_op call (default: the op's `timeout`, else [validation] timeout). A
        call still running then is an op_error case ("timed out"), the run stops there, and the call
        is abandoned in a daemon thread (Python cannot kill it; docs/python-api.md).
        """
        fn = run_op or op_fn
        if fn is None:
            raise ClientError("fuzz_op_client_side needs run_op: a function taking the inputs dict, returning the output")
        results = run_cases.fuzz(self, op_name, fn, int(iterations), generate_seed() if seed is None else seed,
                                 fail_fast, op_schema, dtypes, batch_size, framework, value_distribution, timeout)
        self._run_ops[op_name] = fn
        self._failure_ops.update({int(f.seed): op_name for f in results.failures})
        return results

    def shutdown_daemon(self) -> None:
        """Ask the daemon to finish in-flight requests and exit."""
        self._request("shutdown")


def _numpy_tensors(inputs: dict, output: Any) -> tuple[dict, Any]:
    """Inputs and output with every tensor (torch, jax, tensorflow, anything with __dlpack__) as a
    numpy array, bfloat16 as ml_dtypes.bfloat16 (gpuemu.frameworks): no cast, a copy only off the CPU."""
    return arrays_of(dict(inputs), "input"), arrays_of(output, "output")


def _wire(arr: Any, dtype: str | None) -> Any:
    """arr, or (arr, "bfloat16") when dtype is bfloat16 and arr is float32 holding only bfloat16 values."""
    if dtype not in ("bfloat16", "bf16"):
        return arr
    a = np.asarray(arr)
    if a.dtype != np.float32 or not a.size or np.any(np.ascontiguousarray(a).view(np.uint32) & np.uint32(0xFFFF)):
        return arr
    return (a, "bfloat16")


def _bounded_int(name: str, value: Any, low: int, high: int) -> int:
    """`value` as an int in [low, high], or a ValueError naming the argument and the range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= int(value) <= high:
        raise ValueError(f"{name} must be an integer from {low:_} to {high:_}, got {value!r}")
    return int(value)


def _given(fields: dict, **optional: Any) -> dict:
    """fields with every optional field that is not None added (the daemon's default is absence)."""
    fields.update({key: value for key, value in optional.items() if value is not None})
    return fields


def _with_op(fields: dict, op: str | None) -> dict:
    return _given(fields, op=op)


def _named(tensors: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}

