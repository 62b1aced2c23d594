"""End-to-end: a run keeps the warm workers of the op it is running, not of every op it ran. Each op's
call counts the live processes beside it (the other children of the fork server that forked its worker):
with ten ops that count stays small; when every finished op kept its two workers it grew by two an op
(an examples/triton run held ~70 torch-and-Triton workers, gigabytes, at once)."""
import json

OPS = '''
import os


def _siblings():
    parent = str(os.getppid())
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[1] == parent:
                        count += 1
            except OSError:
                pass
    return count


def op(inputs):
    with open("siblings.log", "a") as log:
        log.write(f"{_siblings()}\\n")
    return inputs["x"] * 2


def ref(inputs):
    return inputs["x"].astype("float64") * 2
'''


def test_an_op_s_workers_stop_when_the_run_moves_to_the_next_op(project):
    tables = "".join(f'[[ops]]\nname = "op{i}"\nmodule = "lifetime_ops:op"\nreference = "lifetime_ops:ref"\n\n'
                     f'[ops.schema]\ndims = {{ N = [1, 16] }}\ninputs = {{ x = ["N"] }}\n\n' for i in range(10))
    project.write('[project]\nname = "lifetime"\n\n[validation]\ndtypes = ["float32"]\nseed = 3\ntest_cases = 2\n\n'
                  + tables)
    (project.root / "lifetime_ops.py").write_text(OPS)
    proc = project.run("--format", "json", "test", "--jobs", "1", env={"GPUEMU_FORK_SERVER": "1"}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert all(op["passed"] == op["total"] == 2 for op in json.loads(proc.stdout)["ops"])
    counts = [int(line) for line in (project.root / "siblings.log").read_text().split()]
    assert len(counts) == 20, counts
    # This op's two workers, the previous op's two while they exit, and the load check's leftovers at most.
    assert max(counts) <= 6, counts
