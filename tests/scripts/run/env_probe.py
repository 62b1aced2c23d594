# Test script: replies with a scalar 1.0 when cwd and PYTHONPATH are what the runner promised.
import base64, json, os, sys
import numpy as np
sys.stdin.read()
want_cwd = os.environ["EXPECT_CWD"]
ok = os.path.realpath(os.getcwd()) == os.path.realpath(want_cwd) and os.environ["EXPECT_PATH"] in sys.path
print(json.dumps({"shape": [], "dtype": "float64", "data": base64.b64encode(np.float64(ok).tobytes()).decode()}))
