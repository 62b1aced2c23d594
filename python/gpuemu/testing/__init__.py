# gpuemu's pytest integration: the plugin module (plugin.py, registered through the pytest11 entry
# point) plus what tests import from here: Op for specs declared in Python, GpuemuCase, the failure type.
"""from gpuemu.testing import Op  -  see docs/pytest.md."""

from gpuemu.testing.case import GpuemuCase, GpuemuCaseFailure
from gpuemu.testing._spec import Op

__all__ = ["Op", "GpuemuCase", "GpuemuCaseFailure"]
