# Python case generation (gpuemu._internal.core.fuzz.cases, used by the client's inline mode) against the C++ one:
# `gpuemu fuzz` hands every case's inputs to an op that records them and always fails, so the
# run's failures list every case seed; Python must derive the same seeds and the same inputs.
import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

from gpuemu._internal.core.fuzz.cases import generate_case, run_case_seed
from gpuemu._internal.client.inline import InlineProject

TOML = """
[project]
name = "xcase"
numpy_bfloat16 = "float32"  # the dump compares bfloat16 cases as the float32 values Python generates

[validation]
dtypes = ["float32", "float16", "bfloat16", "int32"]

[[ops]]
name = "mm"
op_script = "dump.py"
reference = "ref.py"
persistent = true
layouts = ["contiguous", "transposed", "strided"]

[ops.schema]
dims = { M = [1, 70], K = { candidates = [1, 3, 127] }, N = [1, 300] }
inputs = { a = ["M", "K"], b = ["K", "N"] }
output = ["M", "N"]

[ops.inputs.b]
domain = "any"

[[ops]]
name = "plain"
op_script = "dump.py"
reference = "ref.py"
persistent = true
dtypes = ["float64"]

[ops.inputs.x]
domain = [-5, 1e300]

[ops.inputs.y]
shape = [3]
dtype = "uint8"

[[ops]]
name = "nchw"
op_script = "dump.py"
reference = "ref.py"
persistent = true
dtypes = ["float32", "float16"]
layouts = ["contiguous", "channels_last"]

[ops.inputs.x]
shape = [2, 3, 4, 5]
"""

DUMP = """
import json, os
import numpy as np
from gpuemu.script import serve

def out_shape(inputs):
    # mm declares output = ["M", "N"], which gpuemu checks: a wrong shape would be an error, not a failure.
    return (inputs["a"].shape[0], inputs["b"].shape[1]) if "a" in inputs else (1,)

def dump(inputs, **kwargs):
    with open(os.environ["DUMP"], "a") as f:
        for name, arr in inputs.items():
            f.write(json.dumps({"name": name, "shape": list(arr.shape), "dtype": str(arr.dtype),
                                "strides": [s // arr.itemsize for s in arr.strides],
                                "hex": np.ascontiguousarray(arr).tobytes().hex()}) + "\\n")
    return np.zeros(out_shape(inputs), np.float64)  # never the reference's answer: every case fails

serve(dump)
"""

REF = """
import numpy as np
from gpuemu.script import serve

def ref(inputs, **kwargs):
    return np.ones((inputs["a"].shape[0], inputs["b"].shape[1]) if "a" in inputs else (1,), np.float64)

serve(ref, role="reference")
"""

MASTER_SEEDS = [18446744073709551557, 2**53 + 1]
CASES = 12


@pytest.fixture(scope="module")
def xproject(tmp_path_factory):
    root = tmp_path_factory.mktemp("xcase")
    (root / "gpuemu.toml").write_text(TOML)
    (root / "dump.py").write_text(textwrap.dedent(DUMP))
    (root / "ref.py").write_text(textwrap.dedent(REF))
    return root


def record(name, arr, with_strides=True):
    out = {"name": name, "shape": list(arr.shape), "dtype": str(arr.dtype), "hex": np.ascontiguousarray(arr).tobytes().hex()}
    if with_strides:
        out["strides"] = [s // arr.itemsize for s in arr.strides]
    return json.dumps(out, sort_keys=True)


@pytest.mark.parametrize("op", ["mm", "plain", "nchw"])
@pytest.mark.parametrize("master", MASTER_SEEDS)
def test_python_cases_are_the_cpp_cases(gpuemu_bin, xproject, op, master):
    dump = xproject / f"dump-{op}-{master}.jsonl"
    env = {**os.environ, "DUMP": str(dump), "GPUEMU_HOME": str(xproject / "home"), "HOME": str(xproject)}
    proc = subprocess.run([str(gpuemu_bin), "--no-store", "--format", "json", "fuzz", "--op", op, "-n", str(CASES),
                           "--seed", str(master)], cwd=xproject, env=env, capture_output=True, text=True, timeout=120)
    report = json.loads(proc.stdout)["ops"][0]
    assert report["failed"] == CASES, proc.stderr
    spec = InlineProject(xproject / "gpuemu.toml").op(op)
    seeds = [run_case_seed(spec, master, "fuzz", i) for i in range(CASES)]  # corners first (mm has 4)
    assert sorted(int(f["seed"]) for f in report["failures"]) == sorted(seeds)

    cpp = []
    for line in dump.read_text().splitlines():
        r = json.loads(line)
        if r["dtype"] == "float32" and "bfloat16" in spec.dtypes:
            r.pop("strides")  # bfloat16 reaches scripts as a fresh float32 array: strides unseen
        cpp.append(json.dumps(r, sort_keys=True))
    py = []
    for seed in seeds:
        case = generate_case(spec, seed)
        strides_seen = "bfloat16" not in spec.dtypes or case.dtype not in ("bfloat16", "float32")
        py += [record(name, arr, strides_seen) for name, arr in case.inputs.items()]
    assert sorted(py) == sorted(cpp)
    if op == "nchw":  # both sides materialise NHWC memory: torch's channels_last strides, in elements
        assert '"strides": [60, 1, 15, 3]' in "".join(cpp)
