# Python's startup hook for cold scripts of bfloat16 cases (docs/script-protocol.md, "bfloat16 in cold
# scripts"): gpuemu puts this folder first on PYTHONPATH so numpy knows the dtype name "bfloat16".
"""Imported by Python at start-up (the site module), only in the processes gpuemu starts for a
bfloat16 case. Importing ml_dtypes registers its bfloat16 with numpy, so a script written to the
plain protocol (``np.dtype(t["dtype"])``, ``str(arr.dtype)``, as the seed documents' templates)
decodes and encodes bfloat16 tensors like any other dtype. Then the sitecustomize this one hides
(a later one on sys.path, e.g. a distribution's) runs as it would have."""

import importlib.machinery
import importlib.util
import os
import sys

try:
    import ml_dtypes  # noqa: F401  (the import is the registration)
except ImportError:  # the script's interpreter lacks it: the script then fails as it would have, naming the dtype
    pass

_HERE = os.path.dirname(os.path.abspath(__file__))


def _run_the_hidden_one() -> None:
    """The next sitecustomize on sys.path after this folder, run under its own name."""
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_run_the_hidden_one()
