"""End-to-end, without any framework installed: the `sanitize` key reaches the op's own worker (warm
and cold) as GPUEMU_SANITIZE=1 only when its Triton kernels run under the interpreter and the key is
on, never the reference's worker and never from the shell; and every call carries its case seed, which
the op reads as gpuemu.frameworks.convert.case_seed() (what the Triton sanitizer draws its program
order and poison from).
"""
from __future__ import annotations

import json
import textwrap

import pytest

OPS = textwrap.dedent('''
    import os
    from gpuemu.frameworks.convert import case_seed

    def flag(inputs):
        # Right (x) only when this worker was told to sanitize.
        return inputs["x"] * (1.0 if os.environ.get("GPUEMU_SANITIZE") == "1" else 2.0)

    def seed_offset(inputs):
        return inputs["x"] + float(case_seed() % 1000)
    ''')

REFS = textwrap.dedent('''
    import os

    def identity(inputs):
        return inputs["x"].astype("float64")

    def identity_unless_sanitized(inputs):
        return inputs["x"].astype("float64") * (2.0 if os.environ.get("GPUEMU_SANITIZE") == "1" else 1.0)
    ''')

COLD = textwrap.dedent('''
    import os
    from gpuemu.frameworks.convert import case_seed
    from gpuemu.script import serve

    def op(inputs):
        sanitized = os.environ.get("GPUEMU_SANITIZE") == "1" and case_seed() is not None
        return inputs["x"] * (1.0 if sanitized else 2.0)

    serve(op)
    ''')


def op_table(name, module, extra="", reference="refs_san:identity"):
    return (f'[[ops]]\nname = "{name}"\n{module}\nreference = "{reference}"\n{extra}\n'
            '[ops.schema]\ndims = { M = [1, 4], N = [1, 16] }\ninputs = { x = ["M", "N"] }\n')


def test_sanitize_reaches_only_an_interpreted_ops_own_worker(project):
    project.write("")
    (project.root / "ops_san.py").write_text(OPS)
    (project.root / "refs_san.py").write_text(REFS)
    (project.root / "cold_san.py").write_text(COLD)
    (project.root / "gpuemu.toml").write_text(
        '[project]\nname = "sanitize"\n\n[validation]\ndtypes = ["float32"]\nseed = 3\ntest_cases = 2\n'
        'triton_interpret = "always"\n\n' + "\n".join([
            op_table("on", 'module = "ops_san:flag"', reference="refs_san:identity"),
            op_table("reference_never", 'module = "ops_san:flag"', reference="refs_san:identity_unless_sanitized"),
            op_table("cold_on", 'op_script = "cold_san.py"'),
            op_table("off", 'module = "ops_san:flag"', "sanitize = false"),
            op_table("on_the_gpu", 'module = "ops_san:flag"', 'triton_interpret = "never"'),
            op_table("seeded", 'module = "ops_san:seed_offset"'),
        ]))
    proc = project.run("--format", "json", "test", env={"GPUEMU_SANITIZE": "1"})  # the shell never decides
    ops = {op["op"]: op for op in json.loads(proc.stdout)["ops"]}
    assert proc.returncode == 1, proc.stderr
    for name in ("on", "cold_on", "reference_never"):
        assert ops[name]["passed"] == ops[name]["total"] > 0, (name, ops[name]["failures"][:1])
    for name in ("off", "on_the_gpu"):
        # Unsanitized, the op's flag shows: it fails (a corner case may lack the lanes that show it).
        assert ops[name]["failed"] >= 1, (name, ops[name])
    # Each case's seed reached the op: it added seed % 1000 to every element.
    failures = ops["seeded"]["failures"]
    assert failures and all(f["max_abs"] == pytest.approx(int(f["seed"]) % 1000, abs=1e-3) for f in failures)
