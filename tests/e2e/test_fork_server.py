"""End-to-end: warm workers forked from the fork server (docs/worker-protocol.md, "The fork server")
give the same verdicts as workers started as processes of gpuemu's own (GPUEMU_FORK_SERVER=0):
a correct op passes under several seeds and a broken one fails with the same cases, both ways.
"""
from __future__ import annotations

import json
import textwrap

import pytest

OPS = textwrap.dedent('''
    import os
    import numpy as np

    def silu(inputs):
        x = inputs["x"].astype(np.float32)
        return (x / (1 + np.exp(-x))).astype(inputs["x"].dtype)

    def silu_sign_slip(inputs):
        x = inputs["x"].astype(np.float32)
        return (x / (1 + np.exp(x))).astype(inputs["x"].dtype)

    def parent(inputs):
        # Which process started this worker: the fork server, or gpuemu itself.
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as cmdline:
            parent_command = cmdline.read().replace(b"\\0", b" ").decode()
        with open(os.environ["GPUEMU_TEST_PARENT_FILE"], "a") as f:
            f.write(parent_command + "\\n")
        return inputs["x"].copy()
    ''')
REFS = textwrap.dedent('''
    import numpy as np

    def silu(inputs):
        x = inputs["x"].astype(np.float64)
        return x / (1 + np.exp(-x))

    def identity(inputs):
        return inputs["x"].astype(np.float64)
    ''')
SCHEMA = '[ops.schema]\ndims = { M = [1, 4], N = [1, 300] }\ninputs = { x = ["M", "N"] }\n'


def write(project):
    project.write('[project]\nname = "fork"\n\n[validation]\ndtypes = ["float32", "float16"]\nseed = 3\n\n'
                  f'[[ops]]\nname = "silu"\nmodule = "ops_fork:silu"\nreference = "refs_fork:silu"\n{SCHEMA}\n'
                  f'[[ops]]\nname = "silu_bug"\nmodule = "ops_fork:silu_sign_slip"\nreference = "refs_fork:silu"\n'
                  f'{SCHEMA}\n'
                  f'[[ops]]\nname = "parent"\nmodule = "ops_fork:parent"\nreference = "refs_fork:identity"\n'
                  f'{SCHEMA}')
    (project.root / "ops_fork.py").write_text(OPS)
    (project.root / "refs_fork.py").write_text(REFS)


def fuzz(project, op, seed, fork_server):
    proc = project.run("fuzz", "--op", op, "--iterations", "6", "--seed", str(seed), "--format", "json",
                       env={"GPUEMU_FORK_SERVER": fork_server})
    return proc, json.loads(proc.stdout)


@pytest.mark.parametrize("seed", [1, 99])
def test_verdicts_are_the_same_with_and_without_the_fork_server(project, seed):
    write(project)
    for op, code in (("silu", 0), ("silu_bug", 1)):
        docs = {}
        for fork_server in ("1", "0"):
            proc, doc = fuzz(project, op, seed, fork_server)
            assert proc.returncode == code, (op, fork_server, proc.stdout[-2000:], proc.stderr[-2000:])
            docs[fork_server] = doc["ops"][0]
        on, off = docs["1"], docs["0"]
        assert (on["total"], on["passed"], on["failed"], on["errors"]) == \
            (off["total"], off["passed"], off["failed"], off["errors"]), (on, off)
        assert [f["seed"] for f in on["failures"]] == [f["seed"] for f in off["failures"]]
        if code:
            assert on["failed"] > 0 and on["errors"] == 0, on  # the bug is a mismatch, not a crash


def test_workers_come_from_the_fork_server_unless_it_is_turned_off(project, tmp_path, gpuemu_bin):
    write(project)
    for fork_server in ("1", "0"):
        parents = tmp_path / f"parents-{fork_server}"
        proc = project.run("fuzz", "--op", "parent", "--iterations", "2", "--format", "json",
                           env={"GPUEMU_FORK_SERVER": fork_server, "GPUEMU_TEST_PARENT_FILE": str(parents)})
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        commands = set(parents.read_text().splitlines())
        assert len(commands) == 1, commands  # every case ran in a worker of the same parent
        (command,) = commands
        if fork_server == "1":
            assert "-m gpuemu.fork_server" in command, command
        else:
            assert command.split()[0] == str(gpuemu_bin) and "fuzz" in command, command


PARENT_PROBE = textwrap.dedent('''
    import os

    def record(role):
        # Whether the process that started this worker has torch loaded: a server that imported it once.
        with open(f"/proc/{os.getppid()}/maps") as maps:
            loaded = "libtorch" in maps.read()
        with open(os.environ["GPUEMU_TEST_PRELOAD_FILE"], "a") as f:
            f.write(f"{role} {loaded}\\n")
    ''')
TORCH_OP = textwrap.dedent('''
    from parent_probe import record

    def scale(inputs):
        record("op")
        return inputs["x"] * 2
    ''')
NUMPY_REF = textwrap.dedent('''
    from parent_probe import record

    def scale(inputs):
        record("reference")
        return inputs["x"].astype("float64") * 2
    ''')


@pytest.mark.parametrize("preload, op_has_torch", [(None, True), ("none", False)])
def test_a_pytorch_ops_workers_fork_from_a_server_that_imported_torch(project, tmp_path, preload, op_has_torch):
    """The op's workers start with torch imported (a server of their own did it once); the numpy
    reference's workers never carry it; GPUEMU_FORK_SERVER_PRELOAD=none turns it off. Same verdict."""
    pytest.importorskip("torch")
    project.write('[project]\nname = "preload"\n\n[validation]\ndtypes = ["float32"]\nseed = 5\n\n'
                  '[[ops]]\nname = "scale"\nframework = "pytorch"\nmodule = "ops_torch:scale"\n'
                  f'reference = "refs_numpy:scale"\n{SCHEMA}')
    (project.root / "ops_torch.py").write_text(TORCH_OP)
    (project.root / "refs_numpy.py").write_text(NUMPY_REF)
    (project.root / "parent_probe.py").write_text(PARENT_PROBE)
    seen = tmp_path / "preloaded"
    env = {"GPUEMU_TEST_PRELOAD_FILE": str(seen)}
    if preload is not None:
        env["GPUEMU_FORK_SERVER_PRELOAD"] = preload
    proc = project.run("test", "--cases", "3", env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = set(seen.read_text().splitlines())
    assert lines == {f"op {op_has_torch}", "reference False"}, lines
