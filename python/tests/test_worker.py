"""Tests for the warm worker (gpuemu.worker) and its frame layer (gpuemu._internal.wire.frames): frames in
memory, and a real `python -m gpuemu.worker` subprocess spoken to over pipes.
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpuemu import worker
from gpuemu._internal.wire import frames as _frames, tensors

PYTHON_DIR = Path(__file__).resolve().parents[1]


# ---- frames in memory -------------------------------------------------------------------------


def frame_bytes(header: dict, buffers=()) -> bytes:
    return b"".join(bytes(piece) for piece in _frames.encode_frame(header, buffers))


def test_frame_prefix_layout():
    raw = frame_bytes({"type": "ready"}, [b"abc", b"de"])
    magic, version, hlen, plen = struct.unpack_from("<4sIIQ", raw)
    assert (magic, version, plen) == (b"GEMU", 1, 5)
    assert raw[20 : 20 + hlen] == b'{"type":"ready"}'
    assert raw[20 + hlen :] == b"abcde"


def test_frames_round_trip_back_to_back():
    stream = io.BytesIO(frame_bytes({"type": "a"}, [b"\x01\x02"]) + frame_bytes({"type": "b"}))
    header, payload = _frames.read_frame(stream)
    assert header == {"type": "a"} and payload == bytearray(b"\x01\x02")
    assert isinstance(payload, bytearray)
    header, payload = _frames.read_frame(stream)
    assert header == {"type": "b"} and payload == bytearray()
    assert _frames.read_frame(stream) is None


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"XXXX" + bytes(16), "expected a frame starting with b'GEMU'"),
        (struct.pack("<4sIIQ", b"GEMU", 2, 2, 0) + b"{}", "frame version 2 is not supported"),
        (struct.pack("<4sIIQ", b"GEMU", 1, 10, 0) + b"{}", "the stream ended inside a frame"),
        (struct.pack("<4sIIQ", b"GEMU", 1, 2, 0) + b"[]", "frame header must be a JSON object"),
        (struct.pack("<4sIIQ", b"GEMU", 1, 3, 0) + b"{x}", "frame header is not UTF-8 JSON"),
        (struct.pack("<4sIIQ", b"GEMU", 1, 2, 8) + b"{}abc", "the stream ended inside a frame (3 of 8 bytes)"),
        (b"GEM", "the stream ended inside a frame (3 of 20 bytes)"),
    ],
)
def test_bad_frames_raise_frame_error(raw, message):
    with pytest.raises(_frames.FrameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _frames.read_frame(io.BytesIO(raw))


def test_write_frame_to_a_pipe_larger_than_its_buffer():
    r, w = os.pipe()
    big = np.arange(1 << 20, dtype=np.float32)  # 4 MiB, far over a pipe buffer
    import threading

    got = {}

    def reader():
        with os.fdopen(r, "rb", buffering=0) as f:
            got["frame"] = _frames.read_frame(f)

    t = threading.Thread(target=reader)
    t.start()
    _frames.write_frame(w, {"type": "result"}, [big])
    os.close(w)
    t.join()
    header, payload = got["frame"]
    assert np.array_equal(np.frombuffer(payload, dtype=np.float32), big)


# ---- tensors in frames ------------------------------------------------------------------------


def call_header(arrays: dict, dtype="float32", kwargs=None) -> tuple[dict, bytearray]:
    entries, buffers, offset = [], [], 0
    for name, (arr, strides) in arrays.items():
        raw = arr.tobytes()
        entries.append(
            {"name": name, "dtype": str(arr.dtype), "shape": list(arr.shape) if strides is None else strides[0],
             "strides": tensors.contiguous_strides(arr.shape) if strides is None else strides[1],
             "offset": offset, "nbytes": len(raw)}
        )
        buffers.append(raw)
        offset += len(raw)
    return {"type": "call", "dtype": dtype, "kwargs": kwargs or {}, "tensors": entries}, bytearray(b"".join(buffers))


def test_decode_inputs_gives_writable_strided_views():
    storage = np.arange(12, dtype=np.float32)  # a 3x3 view with row stride 4 (one pad element)
    header, payload = call_header({"x": (storage, ([3, 3], [4, 1]))})
    x = worker.decode_inputs(header, payload)["x"]
    assert x.shape == (3, 3) and x.strides == (16, 4)
    assert np.array_equal(x[1], [4, 5, 6])
    x[0, 0] = 42  # writable, like the cold helpers' arrays
    assert x[0, 0] == 42


def test_decode_inputs_reads_every_tensor_of_a_call_from_the_payload():
    # Regression: the second tensor was read from the first one's view instead of the payload
    # ("tensor 'b' lies outside the frame payload" for every op with two inputs).
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(12, dtype=np.float64).reshape(3, 4)
    header, payload = call_header({"a": (a, None), "b": (b, None)})
    inputs = worker.decode_inputs(header, payload)
    assert np.array_equal(inputs["a"], a) and np.array_equal(inputs["b"], b)


def test_decode_inputs_rejects_out_of_range_tensor():
    header, payload = call_header({"x": (np.zeros(4, np.float32), None)})
    header["tensors"][0]["nbytes"] = 64
    with pytest.raises(_frames.FrameError, match="outside the frame payload"):
        worker.decode_inputs(header, payload)


def test_encode_outputs_matches_cold_rules():
    out = np.array([1.00390625, 2.0], dtype=np.float32)
    entries, buffers = worker.encode_outputs(out, "bfloat16", "op")
    assert entries == [{"shape": [2], "strides": [1], "dtype": "bfloat16", "name": "out", "offset": 0, "nbytes": 4}]
    # The reference keeps float32 at a bfloat16 case (cold mode's gpuemu.script does the same).
    entries, _ = worker.encode_outputs(out, "bfloat16", "reference")
    assert entries[0]["dtype"] == "float32"
    entries, buffers = worker.encode_outputs({"a": np.ones((2, 2)), "b": np.array([True])}, "float32", "op")
    assert [(e["name"], e["dtype"], e["offset"], e["nbytes"]) for e in entries] == [
        ("a", "float64", 0, 32), ("b", "bool", 32, 1)]
    with pytest.raises(ValueError, match="empty dict"):
        worker.encode_outputs({}, "float32", "op")


def test_load_callable_errors_name_the_fix():
    with pytest.raises(ValueError, match="must be written module:function"):
        worker.load_callable("no_colon")
    with pytest.raises(AttributeError, match="module 'os' has no attribute 'nothing_here'"):
        worker.load_callable("os:nothing_here")
    assert worker.load_callable("os.path:join") is os.path.join


def test_load_script_finds_serve_or_run(tmp_path):
    served = tmp_path / "served.py"
    served.write_text("from gpuemu.script import serve\ndef f(inputs): return 1\nserve(f, role='reference')\n")
    fn, role = worker.load_script(str(served))
    assert fn.__name__ == "f" and role == "reference"
    plain = tmp_path / "plain.py"
    plain.write_text("def run(inputs, k=0): return k\n")
    fn, role = worker.load_script(str(plain))
    assert fn({}, k=3) == 3 and role is None
    guarded = tmp_path / "guarded.py"
    guarded.write_text("if __name__ == '__main__':\n    raise SystemExit('must not run')\n")
    with pytest.raises(LookupError, match="does not opt in to warm mode"):
        worker.load_script(str(guarded))


# ---- a real worker process --------------------------------------------------------------------


class Worker:
    """A `python -m gpuemu.worker` subprocess with frame helpers."""

    def __init__(self, *args: str, cwd: Path):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpuemu.worker", "--path", str(cwd), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
        )

    def read(self):
        return _frames.read_frame(self.proc.stdout)

    def call(self, arrays: dict, dtype="float32", kwargs=None):
        header, payload = call_header({k: (v, None) for k, v in arrays.items()}, dtype, kwargs)
        for piece in _frames.encode_frame(header, [payload]):
            self.proc.stdin.write(piece)
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> tuple[int, bytes]:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, err


@pytest.fixture
def project(tmp_path):
    (tmp_path / "mymod.py").write_text(textwrap.dedent("""
        import numpy as np
        calls = 0
        def scale(inputs, factor=2):
            global calls
            calls += 1
            print("hello from scale")  # must not corrupt the frame stream
            return inputs["x"] * factor
        def count(inputs):
            global calls
            calls += 1
            return np.array([calls])
        def fails(inputs):
            raise KeyError("missing thing")
    """))
    return tmp_path


@pytest.mark.parametrize("flag, how", [("1", "interpreter"), ("0", "gpu")])
def test_ready_says_whether_triton_kernels_run_interpreted(project, monkeypatch, flag, how):
    # A stand-in `triton` module in the project: the worker reports the interpreter only for code that imported it.
    (project / "triton.py").write_text("")
    (project / "uses_triton.py").write_text("import triton\n\ndef f(inputs):\n    return inputs['x']\n")
    monkeypatch.setenv("TRITON_INTERPRET", flag)
    w = Worker("--callable", "uses_triton:f", cwd=project)
    ready, _ = w.read()
    assert ready["type"] == "ready" and ready["triton"] == how and "pallas" not in ready
    assert w.close()[0] == 0
    plain = Worker("--callable", "mymod:scale", cwd=project)
    ready, _ = plain.read()
    assert "triton" not in ready, "a numpy op never claims to have run a Triton kernel"
    assert plain.close()[0] == 0


def test_result_carries_the_runtime_when_triton_is_imported_inside_the_call(project, monkeypatch):
    (project / "triton.py").write_text("")  # a stand-in, imported only by the call
    (project / "lazy_triton.py").write_text("def f(inputs):\n    import triton\n    return inputs['x']\n")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    w = Worker("--callable", "lazy_triton:f", cwd=project)
    ready, _ = w.read()
    assert ready["type"] == "ready" and "triton" not in ready
    first, _ = w.call({"x": np.arange(3, dtype=np.float32)})
    assert first["type"] == "result" and first["runtime"]["triton"] == "interpreter", first
    assert first["runtime"]["framework"] == "numpy", "the whole label, which replaces the ready frame's"
    second, _ = w.call({"x": np.arange(3, dtype=np.float32)})
    assert "runtime" not in second, "sent once, when it changed"
    assert w.close()[0] == 0


def test_worker_serves_many_calls_then_exits_on_eof(project):
    w = Worker("--callable", "mymod:scale", cwd=project)
    header, _ = w.read()
    assert header["type"] == "ready" and header["protocol"] == 1
    for i in range(5):
        header, payload = w.call({"x": np.arange(4, dtype=np.float32) + i}, kwargs={"factor": 3})
        assert header["type"] == "result", header
        (entry,) = header["tensors"]
        out = tensors.decode_raw(entry["dtype"], entry["shape"], entry["strides"], payload)
        assert np.array_equal(out, (np.arange(4) + i) * 3)
    code, err = w.close()
    assert code == 0
    assert err.count(b"hello from scale") == 5


def test_worker_keeps_state_between_calls(project):
    w = Worker("--callable", "mymod:count", cwd=project)
    w.read()
    counts = []
    for _ in range(3):
        header, payload = w.call({"x": np.zeros(1, np.float32)})
        counts.append(int(np.frombuffer(payload, dtype=np.int64)[0]))
    assert counts == [1, 2, 3]  # one import, many calls
    assert w.close()[0] == 0


def test_exception_is_an_error_frame_and_the_worker_lives(project):
    w = Worker("--callable", "mymod:fails", cwd=project)
    w.read()
    for _ in range(2):
        header, _ = w.call({"x": np.zeros(1, np.float32)})
        assert header["type"] == "error"
        assert header["error"] == "KeyError: 'missing thing'"
        assert "Traceback (most recent call last)" in header["traceback"]
    assert w.close()[0] == 0


def test_load_failure_is_a_fatal_frame(project):
    w = Worker("--callable", "nosuchmodule:fn", cwd=project)
    header, _ = w.read()
    assert header["type"] == "fatal" and header["kind"] == "load"
    assert header["error"] == "ModuleNotFoundError: No module named 'nosuchmodule'"
    assert w.close()[0] == 2


def test_garbage_on_the_frame_stream_is_fatal(project):
    w = Worker("--callable", "mymod:scale", cwd=project)
    w.read()
    w.proc.stdin.write(b"this is not a frame at all")
    w.proc.stdin.flush()
    header, _ = w.read()
    assert header["type"] == "fatal" and header["kind"] == "protocol"
    assert w.close()[0] == 3


# ---- the load check (--check) -----------------------------------------------------------------


def test_check_loads_every_target_and_reports_each_one(project):
    (project / "decorated.py").write_text(textwrap.dedent("""
        import functools

        def traced(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)
            return wrapper

        class JITFunction:  # the shape of triton.runtime.jit.JITFunction: the function is .fn
            def __init__(self, fn):
                self.fn = fn
            def __call__(self, *args):
                return self.fn(*args)

        @traced
        def wrapped(inputs):
            return inputs["x"]

        def jitted(inputs):
            return inputs["x"]
        jitted = JITFunction(jitted)

        CONSTANT = 3
    """))
    script = project / "served.py"
    script.write_text("from gpuemu.script import serve\n\n\ndef run_me(inputs):\n    return inputs['x']\n\n\nserve(run_me)\n")
    w = Worker("--check", "--callable", "mymod:scale", "--callable", "decorated:wrapped", "--callable",
               "decorated:jitted", "--callable", "decorated:CONSTANT", "--callable", "nosuchmodule:fn",
               "--script", str(script), cwd=project)
    header, _ = w.read()
    assert w.close()[0] == 0
    assert header["type"] == "checked"
    entries = header["entries"]
    assert [e["target"] for e in entries] == ["mymod:scale", "decorated:wrapped", "decorated:jitted",
                                              "decorated:CONSTANT", "nosuchmodule:fn", str(script)]
    assert entries[0] == {"kind": "callable", "target": "mymod:scale", "ok": True,
                          "file": str(project / "mymod.py"), "line": 4}
    assert (entries[1]["file"], entries[1]["line"]) == (str(project / "decorated.py"), 16)  # the def, not the wrapper
    assert (entries[2]["file"], entries[2]["line"]) == (str(project / "decorated.py"), 20)
    assert entries[3]["ok"] is False and entries[3]["error"] == "TypeError: decorated:CONSTANT is a int, not a function"
    assert entries[4]["ok"] is False
    assert entries[4]["error"] == "ModuleNotFoundError: No module named 'nosuchmodule'"
    assert "Traceback" in entries[4]["traceback"]
    assert entries[5] == {"kind": "script", "target": str(script), "ok": True, "file": str(script), "line": 4}


def test_without_check_exactly_one_target_is_allowed(project):
    proc = subprocess.run([sys.executable, "-m", "gpuemu.worker", "--callable", "a:b", "--callable", "c:d"],
                          capture_output=True, text=True, cwd=project,
                          env=dict(os.environ, PYTHONPATH=str(PYTHON_DIR)))
    assert proc.returncode == 2
    assert "give exactly one of --callable or --script" in proc.stderr
