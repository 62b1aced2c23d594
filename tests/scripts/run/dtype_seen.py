# Test script (cold, through gpuemu.script): replies with the name of the dtype its function
# received, as uint8 character codes, so a test sees the request's "numpy_bfloat16" at work.
from warm_mod import dtype_seen

from gpuemu.script import serve

serve(dtype_seen)
