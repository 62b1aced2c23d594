"""End-to-end (issue #18): a framework that is not installed is one clear error naming the pip extra
(`pip install 'gpuemu[torch]'`), through the real binary; never a pass, never an error per case.

The import is blocked, not uninstalled: a sitecustomize.py on PYTHONPATH puts a meta path finder in
every Python gpuemu starts (load check, workers) that fails the imports listed in BLOCK_MODULES.
"""
from __future__ import annotations

import os
import textwrap

import pytest

SITECUSTOMIZE = textwrap.dedent('''
    import os
    import sys

    class _Blocked:
        """Fails the import of every module named in BLOCK_MODULES, as if it were not installed."""
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in os.environ.get("BLOCK_MODULES", "").split(","):
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
            return None

    sys.meta_path.insert(0, _Blocked())
    ''')

TOML = '''[project]
name = "missing-framework"

[validation]
dtypes = ["float32"]
seed = 3
test_cases = 2

[[ops]]
name = "numpy_op"
module = "ops_plain:ident"
reference = "refs_missing:identity"

[ops.schema]
dims = {{ M = [1, 4], N = [1, 16] }}
inputs = {{ x = ["M", "N"] }}

[[ops]]
name = "framework_op"
module = "{module}:ident"
reference = "refs_missing:identity"
framework = "{framework}"

[ops.schema]
dims = {{ M = [1, 4], N = [1, 16] }}
inputs = {{ x = ["M", "N"] }}
'''


def setup(project, framework: str, module: str, blocked: str) -> dict:
    project.write(TOML.format(framework=framework, module=module))
    (project.root / "ops_plain.py").write_text('def ident(inputs):\n    return inputs["x"] + 0\n')
    (project.root / "ops_imports.py").write_text(f'import {blocked}\n\n\ndef ident(inputs):\n    return inputs["x"] + 0\n')
    (project.root / "refs_missing.py").write_text(
        'import numpy as np\n\n\ndef identity(inputs):\n    return np.asarray(inputs["x"], dtype=np.float64)\n')
    site = project.root / "block"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join(p for p in [str(site), os.environ.get("PYTHONPATH", "")] if p)
    return {"PYTHONPATH": path, "BLOCK_MODULES": blocked}


@pytest.mark.parametrize("framework, blocked, extra", [("pytorch", "torch", "torch"), ("jax", "jax", "jax"),
                                                       ("tensorflow", "tensorflow", "tensorflow")])
def test_an_ops_framework_that_is_not_installed_is_one_environment_error(project, framework, blocked, extra):
    # The op's code imports nothing; gpuemu's own conversion needs the framework and says which extra.
    env = setup(project, framework, "ops_plain", blocked)
    proc = project.run("test", env=env, timeout=300)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # an environment error: the run stops
    output = proc.stdout + proc.stderr
    assert (f"the op runs with framework '{framework}', but Python module '{blocked}' cannot be imported"
            in output), output
    assert output.count(f"install it with: pip install 'gpuemu[{extra}]'") == 1, output


@pytest.mark.parametrize("blocked, extra", [("torch", "torch"), ("triton", "triton"), ("jax", "jax"),
                                            ("tensorflow", "tensorflow")])
def test_op_code_that_imports_a_missing_framework_names_the_extra(project, blocked, extra):
    # The op's own module imports the framework: gpuemu's load check stops the run before any case.
    framework = {"triton": "pytorch", "torch": "pytorch"}.get(blocked, blocked)
    env = setup(project, "numpy" if blocked == "triton" else framework, "ops_imports", blocked)
    proc = project.run("test", env=env, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr  # the load check: a config error, no case ran
    output = proc.stdout + proc.stderr
    assert f"No module named '{blocked}' (blocked by the test); install it with: pip install 'gpuemu[{extra}]'" \
        in output, output
