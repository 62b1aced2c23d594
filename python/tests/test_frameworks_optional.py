"""Frameworks are optional (issue #18): gpuemu, gpuemu.frameworks and every adapter module import in a
Python where torch, triton, jax and tensorflow cannot be imported, and only using one names its extra.

Runs a subprocess whose meta path finder fails (and records) every import of those frameworks; no
framework needs to be installed, so this never skips.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from gpuemu.frameworks import FRAMEWORKS, adapter
from gpuemu.frameworks._foreign import _ALSO_OWNED

PYTHON_DIR = Path(__file__).resolve().parents[1]
ADAPTED = [name for name in FRAMEWORKS if name != "numpy"]  # the frameworks gpuemu does not depend on

CODE = textwrap.dedent('''
    import json
    import sys

    BLOCKED = set(json.loads(sys.argv[1]))
    asked = []

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                asked.append(name)
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
            return None

    sys.meta_path.insert(0, Blocked())
    import numpy as np

    import gpuemu
    import gpuemu.frameworks
    from gpuemu import Client, case_dtype, script
    from gpuemu._internal import loading, runtime
    for name in gpuemu.frameworks.FRAMEWORKS:
        gpuemu.frameworks.adapter(name)  # every adapter module
    on_import = list(asked)
    # numpy needs nothing: conversion works without any framework.
    arr = gpuemu.frameworks.to_numpy(gpuemu.frameworks.to_framework(np.ones((2, 3), np.float32), "numpy"))
    errors = {}
    for framework in [name for name in gpuemu.frameworks.FRAMEWORKS if name != "numpy"]:
        try:
            gpuemu.frameworks.to_framework(np.ones((2, 3), np.float32), framework)
        except gpuemu.frameworks.FrameworkNotInstalledError as exc:
            errors[framework] = str(exc)
    print(json.dumps({"on_import": on_import, "numpy_ok": arr.shape == (2, 3), "errors": errors}))
    ''')


def test_adapters_import_without_their_framework_and_name_the_extra_on_use():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")]))
    # Every framework module an adapter imports, triton, and the modules whose types are a framework's.
    blocked = sorted({adapter(name).MODULE for name in ADAPTED} | {"triton"} | set(_ALSO_OWNED))
    proc = subprocess.run([sys.executable, "-c", CODE, json.dumps(blocked)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["on_import"] == [], f"importing gpuemu tried to import {out['on_import']}"
    assert out["numpy_ok"]
    extras = {name: (adapter(name).MODULE, adapter(name).EXTRA) for name in ADAPTED}
    assert sorted(out["errors"]) == sorted(extras), out["errors"]
    for framework, (module, extra) in extras.items():
        message = out["errors"][framework]
        assert message.startswith(f"the op runs with framework '{framework}', but Python module '{module}' "
                                  "cannot be imported"), message
        assert message.endswith(f"install it with: pip install 'gpuemu[{extra}]'"), message
