"""Constants and TOML builders the end-to-end tests import by name.

Kept out of conftest.py: pytest loads every suite's conftest as a module named "conftest", so a
test importing from it gets whichever suite's conftest was loaded first when suites run together.
"""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def one_op_toml(op_script: str, reference: str = "ref_identity.py", extra: str = "", validation: str = "") -> str:
    """A project with one op 'op' over input x[M, N] and the given scripts."""
    return f"""
[project]
name = "e2e"

[validation]
dtypes = ["float32"]
seed = 7
timeout = 5
{validation}

[[ops]]
name = "op"
op_script = "{op_script}"
reference = "{reference}"
{extra}

[ops.schema]
dims = {{ M = [1, 8], N = [1, 70] }}
inputs = {{ x = ["M", "N"] }}
"""
