# Tests for inputs in gpuemu's own shared file (gpuemu._internal.wire.input_files, docs/worker-protocol.md
# "Inputs in gpuemu's file"): mapping, copy-on-write, refusals, and a real worker answering "input_file".
"""A file of this test process stands in for gpuemu's, as each platform path makes it (src/platform): a memfd
workers open as /proc/<pid>/fd/<n> (Linux), and a file in a private directory (macOS, GPUEMU_PORTABLE_PLATFORM)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpuemu._internal.wire import frames as _frames, input_files, tensors

PYTHON_DIR = Path(__file__).resolve().parents[1]



@pytest.fixture(params=["memfd", "private-directory"])
def shared_file(request, tmp_path):
    """(path, fd) of a shared file holding float32 [0, 1, ..., 15] at offset 64, as gpuemu would place it."""
    if request.param == "memfd":
        if not hasattr(os, "memfd_create"):
            pytest.skip("needs memfd_create (Linux)")
        fd = os.memfd_create("gpuemu-inputs-test", os.MFD_CLOEXEC)
        path = f"/proc/{os.getpid()}/fd/{fd}"
    else:
        directory = tmp_path / f"gpuemu-shared-{os.getpid()}-0123abcd"
        directory.mkdir(mode=0o700)
        path = str(directory / "0")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    os.ftruncate(fd, 4096)
    os.pwrite(fd, np.arange(16, dtype=np.float32).tobytes(), 64)
    yield path, fd
    os.close(fd)


def entry(path, offset=64, nbytes=64, name="x"):
    return {"name": name, "dtype": "float32", "shape": [nbytes // 4], "strides": [1], "file": path,
            "offset": offset, "nbytes": nbytes}


def test_maps_the_named_bytes_privately(shared_file):
    path, fd = shared_file
    views = input_files.map_input_files([entry(path), {"name": "y", "offset": 0, "nbytes": 4}])
    assert list(views) == [path]
    x = tensors.decode_storage("float32", [16], [1], views[path][64:128])
    assert np.array_equal(x, np.arange(16, dtype=np.float32))
    x[:] = -1  # writable, and copy-on-write: the file keeps its bytes
    assert np.array_equal(np.frombuffer(os.pread(fd, 64, 64), dtype=np.float32), np.arange(16, dtype=np.float32))


def test_one_mapping_per_file_up_to_the_furthest_byte(shared_file):
    path, _ = shared_file
    views = input_files.map_input_files([entry(path, 64, 32, "a"), entry(path, 96, 32, "b")])
    assert views[path].nbytes == 128


@pytest.mark.parametrize("bad", ["/dev/shm/gpuemu-1-2", "/proc/self/fd/3", "/proc/1/fd/3/../../environ",
                                 "/tmp/gpuemu-shared-1-0123abcd/../../etc/passwd", "/tmp/../gpuemu-shared-1-0123abcd/0",
                                 "/tmp/gpuemu-shared-1-0123abcd/x", "gpuemu-shared-1-0123abcd/0",
                                 "/tmp/gpuemu-shared-1-0123abcd/0/1"])
def test_refuses_other_names(bad):
    with pytest.raises(ValueError, match="is not one of gpuemu's shared files"):
        input_files.map_input_files([entry(bad)])


def test_refuses_ranges_past_the_end_and_negative_ones(shared_file):
    path, _ = shared_file
    with pytest.raises(ValueError, match="outside input file"):
        input_files.map_input_files([entry(path, 4096, 64)])
    with pytest.raises(ValueError, match="negative offset"):
        input_files.map_input_files([entry(path, -64, 64)])


def test_a_file_it_cannot_open_is_unavailable_not_a_crash():
    with pytest.raises(input_files.InputFileUnavailable, match="cannot open gpuemu's input file"):
        input_files.map_input_files([entry("/proc/999999999/fd/3")])


# ---- a real worker process --------------------------------------------------------------------


@pytest.fixture
def worker_proc(tmp_path):
    (tmp_path / "mod.py").write_text(textwrap.dedent("""
        import numpy as np
        def twice(inputs):
            x = inputs["x"]
            out = x * 2
            x[...] = 0  # a reference may write its private copy; gpuemu's file must not change
            return out
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))
    # As the reference: an op's worker would (rightly) fail this call as input_mutated (test_worker.py).
    proc = subprocess.Popen([sys.executable, "-m", "gpuemu.worker", "--path", str(tmp_path), "--callable", "mod:twice",
                             "--role", "reference"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env=env)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()
    proc.stderr.close()


def call(proc, entries):
    header = {"type": "call", "op": "twice", "dtype": "float32", "kwargs": {}, "tensors": entries}
    for piece in _frames.encode_frame(header, []):
        proc.stdin.write(piece)
    proc.stdin.flush()
    return _frames.read_frame(proc.stdout)


def test_worker_says_it_maps_inputs_and_maps_them(worker_proc, shared_file):
    path, fd = shared_file
    ready, _ = _frames.read_frame(worker_proc.stdout)
    assert ready["type"] == "ready" and ready["mapped_inputs"] is True
    for _ in range(2):
        header, payload = call(worker_proc, [entry(path)])
        assert header["type"] == "result", header
        (out,) = header["tensors"]
        got = tensors.decode_raw(out["dtype"], out["shape"], out["strides"], payload)
        assert np.array_equal(got, np.arange(16) * 2)
    assert np.array_equal(np.frombuffer(os.pread(fd, 64, 64), dtype=np.float32), np.arange(16, dtype=np.float32))


def test_worker_answers_input_file_when_it_cannot_open_the_file(worker_proc):
    _frames.read_frame(worker_proc.stdout)
    header, _ = call(worker_proc, [entry("/proc/999999999/fd/3")])
    assert header["type"] == "error" and header["kind"] == "input_file", header
    assert "cannot open gpuemu's input file" in header["error"]
    # The worker lives on and serves the next call (gpuemu sends the bytes then).
    header, _ = call(worker_proc, [entry("/proc/999999999/fd/3")])
    assert header["kind"] == "input_file"
