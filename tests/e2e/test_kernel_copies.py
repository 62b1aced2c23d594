# Every compiled copy of the comparison's and the generator's kernels gives the same result.json
# (without timing): GPUEMU_ISA=avx2 and =baseline against the CPU's best copy (issue 32).
import json

from test_ci_run import without_timing

OPS = """import numpy as np

def scaled(inputs):
    return inputs["x"] * 2

def exp32(inputs):
    return np.exp(inputs["x"].astype(np.float32)).astype(inputs["x"].dtype)

def off_here_and_there(inputs):
    y = (inputs["x"].astype(np.float32) * 2).astype(inputs["x"].dtype)
    y.reshape(-1)[::97] += np.asarray(0.5, dtype=y.dtype)
    return y

def one_nan(inputs):
    y = (inputs["x"].astype(np.float32) * 2).astype(inputs["x"].dtype)
    y.reshape(-1)[y.size // 2] = np.nan
    return y

def twice_ref(inputs):
    return inputs["x"].astype(np.float64) * 2

def exp_ref(inputs):
    return np.exp(inputs["x"].astype(np.float64))
"""


def op(name: str, function: str, reference: str) -> str:
    return (f'[[ops]]\nname = "{name}"\nop_script = "ops:{function}"\nreference = "ops:{reference}"\n'
            '[ops.schema]\ndims = { M = [1, 64], N = [1, 300] }\ninputs = { x = ["M", "N"] }\n')


TOML = ('[project]\nname = "copies"\n\n[validation]\ndtypes = ["float32", "float16", "bfloat16"]\n'
        'test_cases = 2\nseed = 11\n\n'
        + op("scaled", "scaled", "twice_ref") + op("exp", "exp32", "exp_ref")
        + op("off", "off_here_and_there", "twice_ref") + op("nan", "one_nan", "twice_ref"))


def test_every_kernel_copy_gives_the_same_result(project):
    (project.root / "ops.py").write_text(OPS)
    (project.root / "gpuemu.toml").write_text(TOML)
    documents = {}
    for isa in ("", "avx2", "baseline"):
        out = project.root / f"out-{isa or 'best'}"
        proc = project.run("ci", "run", "--iterations", "12", "--out", str(out), "--no-store",
                           env={"GPUEMU_ISA": isa})
        assert proc.returncode == 1, proc.stderr  # "off" and "nan" fail
        documents[isa] = json.dumps(without_timing(json.loads((out / "result.json").read_text())), sort_keys=True)
    failed = {op["op"]: op["failed"] for op in json.loads(documents[""])["ops"]}
    assert failed["scaled"] == 0 and failed["exp"] == 0 and failed["off"] > 0 and failed["nan"] > 0, failed
    assert documents["avx2"] == documents[""]
    assert documents["baseline"] == documents[""]
