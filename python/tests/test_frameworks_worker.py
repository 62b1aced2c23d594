"""Frameworks through the real paths: a `python -m gpuemu.worker --framework ...` subprocess and a
cold `gpuemu.script` subprocess convert through the same adapter; bad outputs are error frames and
the worker serves the next case; a framework that is not installed is one error naming the extra."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from framework_cases import need
from gpuemu._internal.wire import frames as _frames, tensors

PYTHON_DIR = Path(__file__).resolve().parents[1]
BLOCK = "import sys; sys.modules[{name!r}] = None; "  # the import of `name` fails as if not installed


def env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))


class Worker:
    """A worker subprocess; `prelude` runs first in the same interpreter (e.g. to block a module)."""

    def __init__(self, cwd: Path, *args: str, prelude: str = ""):
        code = prelude + "import sys; from gpuemu import worker; sys.exit(worker.main(sys.argv[1:]))"
        self.proc = subprocess.Popen([sys.executable, "-c", code, "--path", str(cwd), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env())

    def read(self):
        return _frames.read_frame(self.proc.stdout)

    def call(self, entries: list, payload: bytes, dtype: str, kwargs=None, **fields):
        header = {"type": "call", "op": "myop", "dtype": dtype, "kwargs": kwargs or {}, "tensors": entries, **fields}
        for piece in _frames.encode_frame(header, [payload]):
            self.proc.stdin.write(piece)
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
        return code


# A 3x3 bfloat16 input stored with a row stride of 4 (one pad element per row): a strided case.
BITS = np.array([0x3F80, 0x4000, 0x4040, 0xFFFF, 0xBF80, 0x0000, 0x8000, 0xFFFF, 0x7F80, 0x3F81, 0x0001, 0xFFFF],
                np.uint16)
ENTRY = {"name": "x", "dtype": "bfloat16", "shape": [3, 3], "strides": [4, 1], "offset": 0, "nbytes": BITS.nbytes}
EXPECTED = BITS.reshape(3, 4)[:, :3]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "torch_ops.py").write_text(textwrap.dedent("""
        import torch
        import gpuemu

        def double(inputs):
            x = inputs["x"]
            assert x.dtype == torch.bfloat16 and x.stride() == (4, 1), (x.dtype, x.stride())
            assert not torch.is_grad_enabled() and gpuemu.case_dtype() == "bfloat16"
            return x * 2

        def bad(inputs, kind="good"):
            x = inputs["x"]
            return {"good": lambda: x.clone(),
                    "meta": lambda: torch.empty(3, 3, device="meta", dtype=x.dtype),
                    "complex": lambda: torch.zeros(3, dtype=torch.complex64),
                    "grad": lambda: torch.ones(3, requires_grad=True),
                    "float": lambda: 1.0}[kind]()
    """))
    (tmp_path / "np_ops.py").write_text(textwrap.dedent("""
        import gpuemu

        def double(inputs):
            x = inputs["x"]
            assert x.dtype.name == "bfloat16" and x.strides == (8, 2), (x.dtype, x.strides)
            return x * 2
    """))
    for name in ("torch", "np"):
        (tmp_path / f"{name}_script.py").write_text(textwrap.dedent(f"""
            from gpuemu.script import serve
            import {name}_ops
            serve({name}_ops.double)
        """))
    return tmp_path


def doubled_bits() -> np.ndarray:
    ml_dtypes = need("ml_dtypes")
    return (EXPECTED.view(ml_dtypes.bfloat16) * 2).view(np.uint16)


def test_torch_worker_gets_strided_bfloat16_tensors_and_returns_bits(project):
    need("torch")
    w = Worker(project, "--callable", "torch_ops:double", "--framework", "pytorch", "--device", "cpu")
    ready, _ = w.read()
    assert ready["type"] == "ready", ready
    assert (ready["framework"], ready["device"]) == ("pytorch", "cpu") and ready["framework_version"]
    header, payload = w.call([ENTRY], BITS.tobytes(), "bfloat16")
    assert header["type"] == "result", header
    (entry,) = header["tensors"]
    assert entry["dtype"] == "bfloat16" and entry["shape"] == [3, 3]
    assert np.array_equal(np.frombuffer(payload, np.uint16).reshape(3, 3), doubled_bits())
    assert header["elapsed_ns"] > 0 and header["convert_ns"] > 0 and ready["load_ns"] > 0
    assert w.close() == 0


def test_bad_outputs_are_error_frames_and_the_next_case_still_runs(project):
    need("torch")
    w = Worker(project, "--callable", "torch_ops:bad", "--framework", "pytorch")
    assert w.read()[0]["type"] == "ready"
    for kind, message in [("meta", "is on device 'meta', but the op runs on 'cpu'"),
                          ("complex", "has dtype torch.complex64, which gpuemu cannot store"),
                          ("grad", "requires grad"), ("float", "is a float, not a tensor")]:
        header, _ = w.call([ENTRY], BITS.tobytes(), "bfloat16", {"kind": kind})
        assert header["type"] == "error", (kind, header)
        assert header["error"].startswith("AdapterError: op 'myop': output 'out' ") and message in header["error"]
    header, payload = w.call([ENTRY], BITS.tobytes(), "bfloat16", {"kind": "good"})
    assert header["type"] == "result"
    assert np.array_equal(np.frombuffer(payload, np.uint16).reshape(3, 3), EXPECTED)
    assert w.close() == 0


def test_a_call_frame_can_name_the_framework(project):
    need("torch")
    w = Worker(project, "--callable", "torch_ops:double")  # the worker's own default is numpy
    assert w.read()[0]["framework"] == "numpy"
    header, payload = w.call([ENTRY], BITS.tobytes(), "bfloat16", framework="pytorch", device="cpu")
    assert header["type"] == "result", header
    assert np.array_equal(np.frombuffer(payload, np.uint16).reshape(3, 3), doubled_bits())
    header, _ = w.call([ENTRY], BITS.tobytes(), "bfloat16", framework="nosuch")
    assert header["type"] == "error" and "framework must be one of numpy, pytorch, jax, tensorflow" in header["error"]
    assert w.close() == 0


def test_numpy_worker_with_ml_dtypes_gets_real_bfloat16(project):
    w = Worker(project, "--callable", "np_ops:double", "--numpy-bfloat16", "ml_dtypes")
    assert w.read()[0]["framework"] == "numpy"
    header, payload = w.call([ENTRY], BITS.tobytes(), "bfloat16")
    assert header["type"] == "result", header
    assert header["tensors"][0]["dtype"] == "bfloat16"
    assert np.array_equal(np.frombuffer(payload, np.uint16).reshape(3, 3), doubled_bits())
    assert w.close() == 0


@pytest.mark.parametrize("framework, module, extra", [("pytorch", "torch", "torch"), ("jax", "jax", "jax"),
                                                      ("tensorflow", "tensorflow", "tensorflow")])
def test_framework_not_installed_is_one_environment_error_naming_the_extra(project, framework, module, extra):
    w = Worker(project, "--callable", "np_ops:double", "--framework", framework, prelude=BLOCK.format(name=module))
    header, _ = w.read()
    assert header["type"] == "fatal" and header["kind"] == "environment", header
    assert header["error"].startswith("FrameworkNotInstalledError: the op runs with framework")
    assert f"pip install 'gpuemu[{extra}]'" in header["error"]
    assert w.close() == 2


def test_user_module_that_cannot_import_its_framework_names_the_extra(project):
    w = Worker(project, "--callable", "torch_ops:double", prelude=BLOCK.format(name="torch"))
    header, _ = w.read()
    assert header["type"] == "fatal" and header["kind"] == "load"
    assert header["error"].endswith("; install it with: pip install 'gpuemu[torch]'"), header["error"]
    assert w.close() == 2


def cold(project: Path, request: dict, prelude: str = "", script: str = "torch_script.py") -> subprocess.CompletedProcess:
    code = prelude + f"import runpy; runpy.run_path({script!r}, run_name='__main__')"
    return subprocess.run([sys.executable, "-c", code], input=json.dumps(request), capture_output=True, text=True,
                          cwd=project, env=env(), timeout=120)


def cold_request(framework="pytorch") -> dict:
    data = base64.b64encode(BITS.tobytes()).decode()  # the storage buffer; the view is 3x3, strides [4, 1]
    x = {"shape": [3, 3], "strides": [4, 1], "dtype": "bfloat16", "data": data}
    return {"inputs": {"x": x}, "kwargs": {}, "dtype": "bfloat16", "op": "myop", "framework": framework,
            "device": "cpu", "numpy_bfloat16": "ml_dtypes"}


def test_cold_script_converts_through_the_same_adapter(project):
    need("torch")
    proc = cold(project, cold_request())
    assert proc.returncode == 0, proc.stderr
    reply = json.loads(proc.stdout)
    assert reply["dtype"] == "bfloat16" and reply["shape"] == [3, 3]
    assert np.array_equal(tensors.decode_tensor_storage(reply)[0], doubled_bits())


def test_cold_numpy_script_gets_ml_dtypes_bfloat16(project):
    proc = cold(project, cold_request("numpy"), script="np_script.py")
    assert proc.returncode == 0, proc.stderr
    reply = json.loads(proc.stdout)
    assert reply["dtype"] == "bfloat16" and np.array_equal(tensors.decode_tensor_storage(reply)[0], doubled_bits())


def test_cold_script_without_the_framework_names_the_extra(project):
    proc = cold(project, cold_request("jax"), prelude=BLOCK.format(name="jax"), script="np_script.py")
    assert proc.returncode != 0
    assert "pip install 'gpuemu[jax]'" in proc.stderr
