# Tests for outputs written into gpuemu's own file (gpuemu._internal.wire.output_file, docs/worker-protocol.md
# "Outputs in gpuemu's file"): placing, reuse of the mapping, every refusal, and a real worker using it.
"""A memfd of this test process stands in for gpuemu's: the worker opens it as /proc/<pid>/fd/<n>."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpuemu._internal.wire import frames as _frames, output_file

PYTHON_DIR = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="needs memfd_create (Linux)")


@pytest.fixture
def memfd():
    fd = os.memfd_create("gpuemu-outputs-test", os.MFD_CLOEXEC)
    os.ftruncate(fd, 4096)
    yield f"/proc/{os.getpid()}/fd/{fd}", fd
    os.close(fd)


def test_places_each_output_aligned_and_names_the_file(memfd):
    path, fd = memfd
    out = output_file.OutputFile()
    entries = [{"name": "a"}, {"name": "b"}]
    a, b = np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float64)
    assert out.place({"output_file": path, "output_file_bytes": 4096}, entries, [a, b])
    assert entries == [{"name": "a", "file": path, "offset": 0}, {"name": "b", "file": path, "offset": 64}]
    assert os.pread(fd, 12, 0) == a.tobytes() and os.pread(fd, 40, 64) == b.tobytes()
    out.close()


def test_keeps_its_mapping_while_the_same_file_is_offered(memfd):
    path, fd = memfd
    out = output_file.OutputFile()
    header = {"output_file": path, "output_file_bytes": 4096}
    assert out.place(header, [{}], [np.ones(4, np.float32)])
    first = out._maps[path][1]
    assert out.place(header, [{}], [np.zeros(4, np.float32)])
    assert out._maps[path][1] is first
    assert os.pread(fd, 16, 0) == np.zeros(4, np.float32).tobytes()
    out.close()


def test_keeps_two_files_offered_in_turn_mapped_and_lets_a_third_replace_the_older():
    # gpuemu offers a worker two files in turn (a case's outputs are judged while the next call
    # runs): both stay mapped; a third file replaces the one used longest ago.
    fds = [os.memfd_create(f"gpuemu-outputs-test-{k}", os.MFD_CLOEXEC) for k in range(3)]
    try:
        for fd in fds:
            os.ftruncate(fd, 4096)
        paths = [f"/proc/{os.getpid()}/fd/{fd}" for fd in fds]
        out = output_file.OutputFile()

        def place(k: int, value: float) -> None:
            assert out.place({"output_file": paths[k], "output_file_bytes": 4096}, [{}],
                             [np.full(4, value, np.float32)])
            assert os.pread(fds[k], 16, 0) == np.full(4, value, np.float32).tobytes()

        place(0, 1)
        place(1, 2)
        kept = {path: out._maps[path][1] for path in paths[:2]}
        for turn in range(4):
            place(turn % 2, 3 + turn)
        assert {path: out._maps[path][1] for path in paths[:2]} == kept
        assert all(out._maps[path][1] is kept[path] for path in paths[:2])
        place(2, 9)  # file 1 was used last, so file 0 goes
        assert sorted(out._maps) == sorted(paths[1:])
        assert out._maps[paths[1]][1] is kept[paths[1]]
        out.close()
        assert out._maps == {}
    finally:
        for fd in fds:
            os.close(fd)


@pytest.mark.parametrize("header", [
    {},
    {"output_file": "/dev/shm/gpuemu-1-2", "output_file_bytes": 4096},
    {"output_file": "/proc/999999999/fd/3", "output_file_bytes": 4096},
])
def test_no_usable_file_leaves_everything_untouched(header):
    entries = [{"name": "a", "offset": 0}]
    assert not output_file.OutputFile().place(header, entries, [np.ones(4, np.float32)])
    assert entries == [{"name": "a", "offset": 0}]


def test_outputs_that_do_not_fit_are_not_placed(memfd):
    path, _ = memfd
    entries = [{"name": "a"}]
    assert not output_file.OutputFile().place({"output_file": path, "output_file_bytes": 4096}, entries,
                                              [np.ones(2048, np.float32)])
    assert entries == [{"name": "a"}]
    # A size larger than the file is refused too (it would map past the end).
    assert not output_file.OutputFile().place({"output_file": path, "output_file_bytes": 8192}, entries,
                                              [np.ones(4, np.float32)])


def test_a_worker_writes_its_outputs_into_the_offered_file(tmp_path, memfd):
    path, fd = memfd
    (tmp_path / "mod.py").write_text(textwrap.dedent("""
        import numpy as np
        def grow(inputs):
            return {"a": np.arange(3, dtype=np.float32), "b": np.arange(4, dtype=np.int64)}
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "gpuemu.worker", "--path", str(tmp_path), "--callable", "mod:grow"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env=env)
    try:
        ready, _ = _frames.read_frame(proc.stdout)
        assert ready["mapped_outputs"] is True
        for offered, in_file in ((4096, True), (64, False)):
            call = {"type": "call", "op": "grow", "dtype": "float32", "kwargs": {}, "tensors": [],
                    "output_file": path, "output_file_bytes": offered}
            for piece in _frames.encode_frame(call, []):
                proc.stdin.write(piece)
            proc.stdin.flush()
            header, payload = _frames.read_frame(proc.stdout)
            assert header["type"] == "result", header
            entries = {e["name"]: e for e in header["tensors"]}
            if in_file:
                assert entries["a"]["file"] == path and not payload
                assert os.pread(fd, 12, entries["a"]["offset"]) == np.arange(3, dtype=np.float32).tobytes()
                assert os.pread(fd, 32, entries["b"]["offset"]) == np.arange(4, dtype=np.int64).tobytes()
            else:  # too small: the outputs travel in the frame as before
                assert "file" not in entries["a"] and len(payload) == 12 + 32
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
