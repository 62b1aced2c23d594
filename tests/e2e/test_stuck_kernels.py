"""A case that runs out of time names the line it was stuck on (docs/worker-protocol.md, "Timeouts"):
gpuemu asks the worker (SIGUSR1) just before it kills it, so a Triton kernel that never ends, programs
that spin-wait on one another and a plain Python op in an endless loop each fail as op_error naming
their kernel or function and line, and the run goes on to its other ops and ends."""
import json
import textwrap

import pytest

pytest.importorskip("triton")

TOML = """
[project]
name = "stuck"
framework = "pytorch"

[validation]
dtypes = ["float32"]
triton_interpret = "always"
test_cases = 1
timeout = 5
python_path = ["."]
"""
SCHEMA = '[ops.schema]\ndims = { N = [40, 64] }\ninputs = { x = ["N"] }\n'

OPS = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def endless_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        i = 0
        while i >= 0:  # ENDLESS
            i += 1
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


    @triton.jit
    def waiting_kernel(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr):
        # Each program waits for the other's flag before it sets its own: a deadlock in any order.
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        while tl.load(flag_ptr + 1 - pid) == 0:  # WAITING
            pass
        tl.store(flag_ptr + pid, 1)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


    def endless(inputs):
        x = inputs["x"]
        out = torch.empty_like(x)
        endless_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
        return out


    def waiting(inputs):
        x = inputs["x"]
        out = torch.empty_like(x)
        waiting_kernel[(2,)](x, out, torch.zeros(2, dtype=torch.int32), x.numel(), BLOCK=32)
        return out


    def looping(inputs):
        total = 0
        while total >= 0:  # LOOPING
            total += 1
        return inputs["x"]


    def copy(inputs):
        return inputs["x"].clone()
    ''')
# The reference imports numpy only, as examples/triton's: its workers start in milliseconds.
REFS = "def reference(inputs):\n    return inputs['x'].astype('float64')\n"


def line_of(marker):
    return next(i for i, line in enumerate(OPS.splitlines(), 1) if marker in line)


def test_a_case_that_runs_out_of_time_names_the_line_it_was_stuck_on(project):
    # looping and copy launch no kernel: require_launch = false (docs/frameworks.md, "Launches").
    ops = "".join(f'\n[[ops]]\nname = "{name}"\nmodule = "stuck_ops:{name}"\nreference = "stuck_refs:reference"\n'
                  f'require_launch = {str(name in ("endless", "waiting")).lower()}\n{SCHEMA}'
                  for name in ("endless", "waiting", "looping", "copy"))
    project.write(TOML + ops)
    (project.root / "stuck_ops.py").write_text(OPS)
    (project.root / "stuck_refs.py").write_text(REFS)
    proc = project.run("test", "--jobs", "2", "--format", "json", timeout=240)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = {op["op"]: op for op in json.loads(proc.stdout)["ops"]}
    assert found["copy"]["passed"] == found["copy"]["total"] > 0, [f["message"] for f in found["copy"]["failures"]]  # the run went on
    for name, marker, function in (("endless", "ENDLESS", "endless_kernel"), ("waiting", "WAITING", "waiting_kernel"),
                                   ("looping", "LOOPING", "looping")):
        failures = found[name]["failures"]
        assert failures and all(f["kind"] == "op_error" for f in failures), (name, failures)
        message = failures[0]["message"]
        # Stopped on the loop's test or in its body: either line names the loop.
        lines = (line_of(marker), line_of(marker) + 1)
        assert "timed out after 5.0 s" in message, (name, message)
        assert any(f"stopped at stuck_ops.py:{line} in {function};" in message for line in lines), (name, message)
