"""End-to-end: unmodified kernels of a widely used open-source Triton library (Liger-Kernel, pinned in
scripts/install-deps.sh) gated on this CPU through the real binary: their correct versions pass at
float32, float16 and bfloat16, and bugs seeded into copies of their source are caught (issue 30).

The library's kernels take float arguments (`gate_multiplier.to(tl.float32)`, `eps.to(tl.float32)`),
call libdevice (`rsqrt`, `tanh`) and do bfloat16 arithmetic: Triton's bare interpreter crashes or
computes garbage on them, gpuemu's compatibility layer runs them with no shim in the user's code.
Never skipped: a missing library is a failed install (scripts/install-deps.sh).
"""
from __future__ import annotations

import importlib.util
import json
import re
import sys
import textwrap

import pytest

OPS = '''
from liger_kernel.ops.geglu import geglu_forward
from liger_kernel.ops.rms_norm import rms_norm_forward
from liger_kernel.ops.swiglu import swiglu_forward

import liger_rms_norm_bug
import liger_swiglu_bug


def rms_norm(inputs):
    return rms_norm_forward(inputs["x"], inputs["w"], 1e-6, 0.0, "llama", None)[0]


def rms_norm_mean_bug(inputs):
    return liger_rms_norm_bug.rms_norm_forward(inputs["x"], inputs["w"], 1e-6, 0.0, "llama", None)[0]


def swiglu(inputs):
    return swiglu_forward(inputs["a"], inputs["b"])[-1]


def swiglu_tail_bug(inputs):
    return liger_swiglu_bug.swiglu_forward(inputs["a"], inputs["b"])[-1]


def geglu(inputs):
    return geglu_forward(inputs["a"], inputs["b"])[-1]
'''

REFS = '''
import math

import numpy as np


def rms_norm(inputs, **kwargs):
    x, w = (np.asarray(inputs[k], dtype=np.float64) for k in ("x", "w"))
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def silu_times(inputs, **kwargs):
    a, b = (np.asarray(inputs[k], dtype=np.float64) for k in ("a", "b"))
    return a / (1.0 + np.exp(-a)) * b


def gelu_tanh_times(inputs, **kwargs):
    a, b = (np.asarray(inputs[k], dtype=np.float64) for k in ("a", "b"))
    return 0.5 * a * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (a + 0.044715 * a ** 3))) * b
'''


def op(name: str, reference: str, dims: str, inputs: str, names) -> str:
    domains = "".join(f"\n[ops.inputs.{n}]\ndomain = [-4.0, 4.0]\n" for n in names)
    return (f'[[ops]]\nname = "{name}"\nmodule = "liger_ops:{name}"\nreference = "refs:{reference}"\n\n'
            f"[ops.schema]\ndims = {{ {dims} }}\ninputs = {{ {inputs} }}\n{domains}")


def seeded_copy(module: str, pattern: str, replacement: str) -> str:
    """The library's own source of `module` with one bug seeded (every match of `pattern`)."""
    source = importlib.util.find_spec(module).origin
    text, count = re.subn(pattern, replacement, open(source, encoding="utf-8").read())
    assert count, f"{pattern!r} not found in {source}: the pinned Liger-Kernel changed"
    return text


def test_liger_kernels_pass_unmodified_and_seeded_bugs_are_caught(project):
    missing = [m for m in ("torch", "triton", "liger_kernel") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")
    project.write("")
    (project.root / "liger_ops.py").write_text(textwrap.dedent(OPS))
    (project.root / "refs.py").write_text(textwrap.dedent(REFS))
    # No division by the row length: the sum of squares is used as the mean square.
    (project.root / "liger_rms_norm_bug.py").write_text(
        seeded_copy("liger_kernel.ops.rms_norm", r"(tl\.sum\(X_row \* X_row, axis=\d\)) / n_cols", r"\1"))
    # The gate's load loses its mask: the tail block reads past `b` (out_of_bounds under the sanitizer;
    # the masked store hides it on the bare interpreter).
    (project.root / "liger_swiglu_bug.py").write_text(
        seeded_copy("liger_kernel.ops.swiglu", r"b_row = tl\.load\(b_ptr \+ col_offsets, mask=mask, other=0\)",
                    "b_row = tl.load(b_ptr + col_offsets)"))
    rows = 'M = [1, 5], N = [1, 300]'
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "liger"\nframework = "pytorch"\n\n[validation]\n'
        'dtypes = ["float32", "float16", "bfloat16"]\nseed = 11\ntest_cases = 3\ntimeout = 300\n'
        'triton_interpret = "always"\n\n' + "\n".join([
            op("rms_norm", "rms_norm", rows, 'x = ["M", "N"], w = ["N"]', ("x", "w")),
            op("rms_norm_mean_bug", "rms_norm", rows, 'x = ["M", "N"], w = ["N"]', ("x", "w")),
            op("swiglu", "silu_times", rows, 'a = ["M", "N"], b = ["M", "N"]', ("a", "b")),
            op("swiglu_tail_bug", "silu_times", rows, 'a = ["M", "N"], b = ["M", "N"]', ("a", "b")),
            op("geglu", "gelu_tanh_times", rows, 'a = ["M", "N"], b = ["M", "N"]', ("a", "b")),
        ]))
    proc = project.run("--format", "json", "test", "--jobs", "2", timeout=1200)
    assert proc.returncode == 1, proc.stderr[-3000:]
    ops = {o["op"]: o for o in json.loads(proc.stdout)["ops"]}
    for name in ("rms_norm", "swiglu", "geglu"):
        assert ops[name]["total"] == 9 and ops[name]["passed"] == 9, (name, ops[name]["failures"][:1])
        assert ops[name]["runtime"].get("triton") == "interpreter", ops[name]["runtime"]
    mean_bug = ops["rms_norm_mean_bug"]
    assert mean_bug["failed"] > 0 and {f["kind"] for f in mean_bug["failures"]} <= {"mismatch"}, mean_bug["failures"]
    tail_bug = ops["swiglu_tail_bug"]
    assert tail_bug["failed"] > 0, tail_bug
    oob = [f for f in tail_bug["failures"] if f["kind"] == "out_of_bounds"]
    assert oob and "liger_swiglu_bug.py:" in oob[0]["message"] and "'b_ptr'" in oob[0]["message"], tail_bug["failures"]
