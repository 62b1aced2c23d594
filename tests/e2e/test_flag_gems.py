"""End-to-end: FlagGems (pinned in scripts/install-deps.sh), the largest open-source Triton operator library,
gated on this CPU through the real binary with its own code paths unmodified: its launch cache (LibEntry),
its autotuner (LibTuner), duck-typed tensors and `torch.cuda.device(x.device)` around launches (issue 40).

Every op is one short [[ops]] entry through gpuemu.torch_library (docs/frameworks.md, "A torch op library:
one entry per op"):
the op is a call expression, its reference the torch op of the same name in float64, so this file has no
per-op Python. The correct ops pass at float32, float16 and bfloat16; bugs seeded into copies of FlagGems
source files are caught; an op whose Python asserts CUDA tensors is interpreter_unsupported with its line;
a generated pointwise wrapper fails as it fails on a GPU with this Triton (3.9 removed tl.make_block_ptr).
Never skipped: a missing library is a failed install.
"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import sys

import pytest

pytestmark = pytest.mark.xdist_group("flag-gems")

# name: (call, base): the op extends the base op whose inputs it takes (BASES below: softmax, layer_norm,
# mm, addmm, index_select, attention, themselves ops of the test).
OPS = {
    # reductions
    "sum": ("sum(x)", "softmax"),
    "mean_dim": ("mean_dim(x, [1])", "softmax"),
    "amax": ("amax(x, [1])", "softmax"),
    "max_dim": ("max_dim(x, 1)[0]", "softmax"),
    "argmax": ("argmax(x, 1)", "softmax"),
    "prod_dim": ("prod_dim(x, 1)", "softmax"),
    "var_mean": ("var_mean(x, [1])", "softmax"),
    "vector_norm": ("vector_norm(x)", "softmax"),
    "all_dim": ("all_dim(x > 0, 1)", "softmax"),
    # softmax, norms
    "log_softmax": ("log_softmax(x, -1)", "softmax"),
    "rms_norm": ("rms_norm(x, x.shape[-1:], w)", "layer_norm"),
    # matmul
    "mv": ("mv(a, b[:, 0])", "mm"),
    # index
    "gather": ("gather(x, 0, i[:, None].expand(-1, x.shape[1]))", "index_select"),
    "embedding": ("embedding(x, i)", "index_select"),
    "index_add": ("index_add(x, 0, i, x[: i.shape[0]])", "index_select"),
    # cumulative
    "cumsum": ("cumsum(x, 1)", "softmax"),
    "cummax": ("cummax(x, 1)[0]", "softmax"),
    "cummin": ("cummin(x, 1)[0]", "softmax"),
    # shape and pointwise ops with hand-written kernels
    "tril": ("tril(x)", "softmax"),
    "triu": ("triu(x)", "softmax"),
    "cat": ("cat([x, x], 1)", "softmax"),
    "pad": ("constant_pad_nd(x, [1, 2], 0.5)", "softmax"),
    "repeat": ("repeat(x, (2, 1))", "softmax"),
    "hardsigmoid": ("hardsigmoid(x)", "softmax"),
    "selu": ("selu(x)", "softmax"),
    "round": ("round(x)", "softmax"),
    "hypot": ("hypot(x, x.flip(1))", "softmax"),
    "softshrink": ("softshrink(x, 0.5)", "softmax"),
    # `(offs < W) & (pid < B)`: a scalar comparison splatted into a mask (int1 in the interpreter too); width >= 4
    "reflection_pad1d": ("reflection_pad1d(torch.cat([x, x, x, x], 1), [2, 3])", "softmax"),
}
REFERENCES = {  # ops whose FlagGems name torch does not have, or whose call differs
    "mean_dim": "torch.mean(x, [1])", "max_dim": "torch.max(x, 1)[0]", "prod_dim": "torch.prod(x, 1)",
    "all_dim": "torch.all(x > 0, 1)",
    "rms_norm": "torch.nn.functional.rms_norm(x, x.shape[-1:], w, 1e-5)", "embedding": "x[i]",
    "pad": "torch.nn.functional.pad(x, [1, 2], value=0.5)",
    "repeat": "x.repeat(2, 1)", "mv": "torch.mv(a, b[:, 0])",
    "reflection_pad1d": "torch.nn.functional.pad(torch.cat([x, x, x, x], 1), [2, 3], mode='reflect')",
}
BASES = '''
[[ops]]
name = "softmax"
module = "gpuemu.torch_library:op"
reference = "gpuemu.torch_library:reference"
reference_framework = "pytorch"
interpreter_cuda_shim = true
kwargs = { call = "flag_gems.ops.softmax(x, -1)" }
[ops.schema]
dims = { M = [1, 4], N = [1, 70] }
inputs = { x = ["M", "N"] }
[ops.inputs.x]
domain = [-2.0, 2.0]

[[ops]]
name = "layer_norm"
extends = "softmax"
[ops.kwargs]
call = "flag_gems.ops.layer_norm(x, x.shape[-1:], w, b)[0]"
reference = "torch.nn.functional.layer_norm(x, x.shape[-1:], w, b)"
[ops.schema]
dims = { M = [1, 4], N = [1, 70] }
inputs = { x = ["M", "N"], w = ["N"], b = ["N"] }

[[ops]]
name = "mm"
extends = "softmax"
kwargs = { call = "flag_gems.ops.mm(a, b)" }
[ops.schema]
dims = { M = [1, 9], K = [1, 20], N = [1, 9] }
inputs = { a = ["M", "K"], b = ["K", "N"] }

[[ops]]
name = "addmm"
extends = "mm"
kwargs = { call = "flag_gems.ops.addmm(c, a, b)" }
[ops.schema]
dims = { M = [1, 9], K = [1, 20], N = [1, 9] }
inputs = { c = ["N"], a = ["M", "K"], b = ["K", "N"] }

[[ops]]
name = "index_select"
extends = "softmax"
kwargs = { call = "flag_gems.ops.index_select(x, 0, i)" }
[ops.schema]
dims = { M = [5, 8], N = [1, 40], K = [1, 5] }
inputs = { x = ["M", "N"], i = ["K"] }
[ops.inputs.i]
dtype = "int64"
domain = [0, 4]

# its autotuner's configs with BLOCK_N > HEAD_DIM fail a tl.static_assert: skipped, as on a GPU
[[ops]]
name = "attention"
extends = "softmax"
kwargs = { call = "flag_gems.ops.scaled_dot_product_attention(q, k, v)" }
[ops.schema]
dims = { L = [1, 20] }
inputs = { q = [1, 2, "L", 16], k = [1, 2, "L", 16], v = [1, 2, "L", 16] }
[ops.inputs.q]
domain = [-1.0, 1.0]
[ops.inputs.k]
domain = [-1.0, 1.0]
'''
BASE_NAMES = ("softmax", "layer_norm", "mm", "addmm", "index_select", "attention")


def entry(name: str, call: str, base: str, module: str = "flag_gems.ops", reference: str | None = None) -> str:
    """One op: three lines, four with a reference of its own."""
    kwargs = f'call = "{module}.{call}"' + (f', reference = "{reference}"' if reference else "")
    return f'[[ops]]\nname = "{name}"\nextends = "{base}"\nkwargs = {{ {kwargs} }}\n'


def seeded_copy(path: str, pattern: str, replacement: str) -> str:
    """The library's own source file `path` (under flag_gems/) with one bug seeded (every match of `pattern`);
    found without importing flag_gems, whose import needs GEMS_VENDOR on a machine without a GPU."""
    source = pathlib.Path(importlib.util.find_spec("flag_gems").origin).parent / path
    text, count = re.subn(pattern, replacement, open(source, encoding="utf-8").read())
    assert count, f"{pattern!r} not found in {source}: the pinned FlagGems changed"
    return text


def test_flag_gems_ops_pass_unmodified_and_seeded_bugs_are_caught(project):
    missing = [m for m in ("torch", "triton", "flag_gems", "sqlalchemy") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed for {sys.executable}: run scripts/install-deps.sh")
    project.write("")
    # softmax's masked-off lanes load 0 instead of -inf: they add exp(-max) to every row's sum
    (project.root / "gems_softmax_bug.py").write_text(
        seeded_copy("ops/softmax.py", r'other=-float\("inf"\)', "other=0.0"))
    # rms_norm's mean square without the division by the row length
    (project.root / "gems_rms_norm_bug.py").write_text(
        seeded_copy("ops/rms_norm.py", r"var = tl\.sum\(x \* x(, axis=\d)?\) / N", r"var = tl.sum(x * x\1)"))
    # log_softmax's row mask dropped: rows past M are read and written (the sanitizer refuses the store)
    (project.root / "gems_log_softmax_bug.py").write_text(
        seeded_copy("ops/log_softmax.py", r"mask = m_offset\[:, None\] < M and n_offset\[None, :\] < N",
                    "mask = n_offset[None, :] < N"))
    ops = [entry(name, call, base, reference=REFERENCES.get(name)) for name, (call, base) in OPS.items()]
    ops += [
        entry("softmax_other_bug", "softmax(x, -1)", "softmax", module="gems_softmax_bug"),
        entry("rms_norm_mean_bug", "rms_norm(x, x.shape[-1:], w)", "layer_norm", module="gems_rms_norm_bug",
              reference=REFERENCES["rms_norm"]),
        entry("log_softmax_mask_bug", "log_softmax(x, -1)", "softmax", module="gems_log_softmax_bug"),
        entry("special_i0e", "special_i0e(x)", "softmax", reference="torch.special.i0e(x)"),
        entry("abs_generated", "abs(x)", "softmax", reference="torch.abs(x)"),
        # FlagGems' own bug as Triton documents tl.load: its bmm loads the K tail without other= and sums the
        # undefined lanes into the dot (a compiled load may well give 0 there); the sanitizer's poison makes it
        # a mismatch
        entry("bmm_dead_lanes", "bmm(a[None], b[None])", "mm", reference="torch.bmm(a[None], b[None])"),
    ]
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "flag-gems"\nframework = "pytorch"\n\n[validation]\n'
        'dtypes = ["float32", "float16", "bfloat16"]\nseed = 5\ntest_cases = 2\ntimeout = 300\n'
        'triton_interpret = "always"\n\n'
        # The whole run under ASan on a busy 2-core CI machine takes minutes: the default 300 s budget of
        # a test run ([ci] thorough_timeout) would cut it.
        '[ci]\nthorough_timeout = 3600\n' + BASES + "\n" + "\n".join(ops))
    # GEMS_VENDOR: FlagGems' own variable, its vendor detection runs nvidia-smi and friends at import
    # (docs/frameworks.md). Torch is imported once in the fork server (a pytorch op's workers' default).
    proc = project.run("--format", "json", "test", "--jobs", "2", timeout=1200, env={"GEMS_VENDOR": "nvidia"})
    assert proc.returncode == 1, proc.stderr[-3000:]
    results = {o["op"]: o for o in json.loads(proc.stdout)["ops"]}
    for name in (*BASE_NAMES, *OPS):
        op = results[name]
        assert op["total"] == 6 and op["passed"] == 6, (name, op["failures"][:1])
        assert op["runtime"].get("triton") == "interpreter", op["runtime"]
    assert len(BASE_NAMES) + len(OPS) >= 30
    for name in ("softmax_other_bug", "rms_norm_mean_bug"):
        bug = results[name]
        assert bug["failed"] > 0 and {f["kind"] for f in bug["failures"]} <= {"mismatch", "unexpected_nonfinite"}, \
            (name, bug["failures"][:2])
    dead = results["bmm_dead_lanes"]
    assert dead["failed"] > 0 and {f["kind"] for f in dead["failures"]} <= {"mismatch", "unexpected_nonfinite"}, \
        dead["failures"][:2]
    # ... and each failure's report names the loads and the fix (the sanitizer's dead-lanes note)
    assert all(re.search(r"tl\.load without other= at \S*flag_gems/ops/bmm\.py:\d+ \(bmm_kernel\)", f["stderr"])
               and "Pass other= to tl.load" in f["stderr"] for f in dead["failures"]), dead["failures"][:1]
    mask_bug = results["log_softmax_mask_bug"]
    oob = [f for f in mask_bug["failures"] if f["kind"] == "out_of_bounds"]
    assert oob and "gems_log_softmax_bug.py:" in oob[0]["message"], mask_bug["failures"][:2]
    refused = results["special_i0e"]
    assert refused["failed"] == 6 and {f["kind"] for f in refused["failures"]} == {"interpreter_unsupported"}
    assert re.search(r"flag_gems/ops/special_i0e\.py:\d+ \(assert x\.is_cuda", refused["failures"][0]["message"]), \
        refused["failures"][0]
    generated = results["abs_generated"]
    assert generated["errors"] == 6 and {f["kind"] for f in generated["failures"]} == {"op_error"}
    assert "Block pointers have been removed" in generated["failures"][0]["message"], generated["failures"][0]
