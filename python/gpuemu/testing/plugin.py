# The pytest plugin (registered by `pip install gpuemu` through the pytest11 entry point): the
# `gpuemu` marker turns an op spec into one test item per seeded case; docs/pytest.md is its manual.
"""pytest hooks and the `gpuemu_case` fixture."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from gpuemu._internal.core.rng import derive_seed, generate_seed
from gpuemu.errors import ClientError
from gpuemu.frameworks import triton_hook
from gpuemu.testing.case import CaseRef, GpuemuCase, plan_cases
from gpuemu.testing._spec import Op, find_config_from, resolve_inline_op, resolve_project_op
from gpuemu.testing._store import STORE_MODES, StoreAccess

MARKER = ("gpuemu(op, *, config=None, iterations=None, seed=None, dtype=None): run the test once per seeded "
          "case of op (an [[ops]] name of gpuemu.toml, or a gpuemu.testing.Op); the test takes the gpuemu_case "
          "fixture and calls gpuemu_case.run(kernel) or gpuemu_case.check(output). See docs/pytest.md.")
GUARD_KINDS = ("op_error", "input_mutated", "output_aliased")


def _seed(text: str) -> int:
    value = int(text, 10)
    if not 0 <= value < 2**64:
        raise ValueError
    return value


def pytest_addoption(parser):
    group = parser.getgroup("gpuemu", "gpuemu seeded kernel cases (docs/pytest.md)")
    group.addoption("--gpuemu-seed", type=_seed, default=None, metavar="SEED",
                    help="master seed of every gpuemu op (decimal, 0..2^64-1); default: the marker's seed, "
                         "else [validation] seed, else a random seed per session (shown in the header)")
    group.addoption("--gpuemu-iterations", type=int, default=None, metavar="N",
                    help="cases per op; default: the marker's iterations, else [validation] fuzz_iterations (100)")
    group.addoption("--gpuemu-config", default=None, metavar="FILE",
                    help="the gpuemu.toml of ops named by markers; default: the nearest gpuemu.toml above each "
                         "test file (a marker's config= wins)")
    group.addoption("--gpuemu-minimize", action="store_true", default=False,
                    help="shrink each failing case (dims, then values) and show and store the smallest")
    group.addoption("--gpuemu-store", choices=STORE_MODES, default="auto",
                    help="where failures go: auto (the daemon of $GPUEMU_HOME, started when a gpuemu binary is "
                         "found), daemon (the same, and failing to store is an error), off")
    group.addoption("--gpuemu-bin", default=None, metavar="PATH",
                    help="the gpuemu binary that starts the daemon (default: $GPUEMU_BIN, else gpuemu on PATH)")


class Session:
    """Per-process state: the session seed, the store, and the options the cases read."""

    def __init__(self, config):
        self.config = config
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None:  # an xdist worker: the controller's values, so collection agrees
            self.session_seed = int(workerinput["gpuemu_session_seed"])
            marker = Path(workerinput["gpuemu_started_marker"])
        else:
            self.session_seed = generate_seed()
            marker = Path(tempfile.mkdtemp(prefix="gpuemu-pytest-")) / "daemon-started"
        self.is_controller = workerinput is None
        self.minimize = bool(config.getoption("gpuemu_minimize"))
        self.minimize_max_iters = 200
        self.store = StoreAccess(config.getoption("gpuemu_store"), config.getoption("gpuemu_bin"), marker)

    def master_seed(self, marker_seed, op_seed: int) -> int:
        option = self.config.getoption("gpuemu_seed")
        if option is not None:
            return option
        if marker_seed is not None:
            return int(marker_seed)
        if op_seed:
            return op_seed
        return self.session_seed

    # ── the store ─────────────────────────────────────────────────────────────────────────
    def _client(self, case: GpuemuCase):
        op = case._ref.op
        if op.config_path is None:
            return None, ("not stored: the op is declared in Python (gpuemu.testing.Op), and the CLI can only "
                          "replay ops of a gpuemu.toml; declare it there to store its failures")
        try:
            client = self.store.client(op.config_path)
        except ClientError as exc:
            raise pytest.UsageError(str(exc)) from None
        if client is None:
            return None, f"not stored: {self.store.unavailable}"
        return client, ""

    def store_failure(self, case: GpuemuCase, verdict, output) -> tuple[bool, str]:
        """(stored, what happened) for a failing case: sent to the daemon with its inputs (submit_output)."""
        client, why = self._client(case)
        if client is None:
            return False, why
        extra = {"layout": case.layout, "distribution": case.distribution}
        if verdict.kind in GUARD_KINDS:
            extra["client_failure"] = {"kind": verdict.kind, "message": verdict.message}
            output = None
        try:
            result = client._validate_request("submit_output", case.op, case._pristine(), output, case.dtype,
                                              case.seed, {}, extra)
        except ClientError as exc:
            return False, f"not stored: the daemon refused the case: {exc}"
        if result.passed:
            return False, ("not stored: the daemon's check passed this case while this plugin's failed it (a "
                           "disagreement on the pass rule is a gpuemu bug: please report it)")
        return True, f"stored as failure {case.seed} of op {case.op} ({result.kind}) in {_store_path()}"

    def store_minimized(self, case: GpuemuCase, inputs: dict, run, got) -> str:
        client, why = self._client(case)
        if client is None:
            return why.replace("not stored", "minimized case not stored")
        seed = derive_seed(case.seed, "pytest-minimized")
        extra = {"minimized_from": str(case.seed)}
        output = run.output
        if run.kind != "none":
            extra["client_failure"] = {"kind": run.kind, "message": run.message}
            output = None
        try:
            result = client._validate_request("submit_output", case.op, inputs, output, case.dtype, seed, {}, extra)
        except ClientError as exc:
            return f"minimized case not stored: {exc}"
        if result.passed:
            return "minimized case not stored: the daemon's check passed it"
        return f"stored as failure {seed} (minimized from {case.seed}): gpuemu show {seed}"


def _store_path() -> str:
    home = os.environ.get("GPUEMU_HOME") or str(Path.home() / ".gpuemu")
    return str(Path(home) / "db" / "gpuemu.db")


_KEY = pytest.StashKey[Session]()


def _session(config) -> Session:
    return config.stash[_KEY]


def pytest_configure(config):
    config.addinivalue_line("markers", MARKER)
    triton_hook.arm()  # ops run in this process: Triton under TRITON_INTERPRET=1 gets the worker's layers
    config.stash[_KEY] = Session(config)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(config), "gpuemu-xdist")


class _XdistHooks:
    """Hands the controller's session seed and daemon marker to every worker (deterministic collection)."""

    def __init__(self, config):
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        session = _session(self.config)
        node.workerinput["gpuemu_session_seed"] = str(session.session_seed)
        node.workerinput["gpuemu_started_marker"] = str(session.store.started_marker)


def pytest_unconfigure(config):
    session = config.stash.get(_KEY, None)
    if session is None:
        return
    session.store.close()
    if session.is_controller:
        message = session.store.stop_started_daemon()
        shutil.rmtree(session.store.started_marker.parent, ignore_errors=True)
        if message:
            reporter = config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(message)


def pytest_report_header(config):
    session = _session(config)
    option = config.getoption("gpuemu_seed")
    if option is not None:
        return f"gpuemu: master seed {option} (--gpuemu-seed)"
    # The plugin is loaded in every pytest session once gpuemu is installed: say nothing outside
    # gpuemu projects.
    if find_config_from(Path(config.rootpath)) is None and not config.getoption("gpuemu_config"):
        return None
    return (f"gpuemu: session seed {session.session_seed} (for ops without a marker seed or [validation] seed; "
            f"rerun them with --gpuemu-seed {session.session_seed})")


def _resolve(marker, metafunc):
    if not marker.args or len(marker.args) > 1:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.gpuemu takes one op: an [[ops]] name "
                                "of gpuemu.toml or a gpuemu.testing.Op")
    op = marker.args[0]
    if isinstance(op, Op):
        return resolve_inline_op(op)
    if not isinstance(op, str):
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.gpuemu({op!r}): the op must be a name "
                                "of gpuemu.toml or a gpuemu.testing.Op")
    test_file = Path(str(metafunc.definition.fspath))
    config_arg = marker.kwargs.get("config")
    if config_arg is not None:
        path = (test_file.parent / config_arg).resolve()
    elif metafunc.config.getoption("gpuemu_config"):
        path = (metafunc.config.invocation_params.dir / metafunc.config.getoption("gpuemu_config")).resolve()
    else:
        path = find_config_from(test_file)
        if path is None:
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: op '{op}' needs a gpuemu.toml: none in "
                                    f"{test_file.parent} or above it; pass --gpuemu-config or config= to the marker")
    try:
        return resolve_project_op(path, op)
    except (ClientError, ValueError) as exc:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: {exc}") from None


def pytest_generate_tests(metafunc):
    markers = list(metafunc.definition.iter_markers("gpuemu"))
    if not markers:
        return
    if "gpuemu_case" not in metafunc.fixturenames:
        raise pytest.UsageError(f"{metafunc.definition.nodeid} is marked gpuemu but takes no gpuemu_case argument; "
                                "add it: def test_x(gpuemu_case): gpuemu_case.run(kernel)")
    session = _session(metafunc.config)
    refs: list[CaseRef] = []
    for marker in markers:
        op = _resolve(marker, metafunc)
        master = session.master_seed(marker.kwargs.get("seed"), op.seed)
        iterations = metafunc.config.getoption("gpuemu_iterations") or marker.kwargs.get("iterations") or op.iterations
        if int(iterations) < 1:
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: iterations must be at least 1, got {iterations}")
        refs.extend(plan_cases(op, master, int(iterations), marker.kwargs.get("dtype")))
    metafunc.parametrize("gpuemu_case", refs, ids=[r.id for r in refs], indirect=True)


_CASE = pytest.StashKey[GpuemuCase]()


def _replay_id(request) -> str:
    """The item's node id with its file relative to where pytest was started (node ids are relative
    to the rootdir, which may be another folder), so the printed command works when pasted."""
    where = request.config.invocation_params.dir
    _, _, rest = request.node.nodeid.partition("::")
    try:
        path = os.path.relpath(request.node.path, where)
    except ValueError:
        path = str(request.node.path)
    return f"{path}::{rest}"


@pytest.fixture
def gpuemu_case(request):
    """One seeded case of the op named by the test's @pytest.mark.gpuemu marker."""
    ref = getattr(request, "param", None)
    if not isinstance(ref, CaseRef):
        raise pytest.UsageError(f"{request.node.nodeid} uses gpuemu_case without @pytest.mark.gpuemu(OP)")
    case = GpuemuCase(ref, _session(request.config), _replay_id(request))
    request.node.stash[_CASE] = case
    return case


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that passes without ever checking its case checked nothing: it fails instead."""
    outcome = yield
    report = outcome.get_result()
    case = item.stash.get(_CASE, None)
    if report.when == "call" and report.passed and case is not None and not case.checked:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} never called gpuemu_case.run(kernel) or gpuemu_case.check(output): "
                           "the case checked nothing")
