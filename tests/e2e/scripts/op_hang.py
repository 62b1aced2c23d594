"""Op under test that hangs and leaves a grandchild behind; gpuemu must kill the whole group."""
import os
import subprocess
import sys
import time

sys.stdin.read()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
with open(os.environ.get("HANG_PID_FILE", "hang.pids"), "a") as f:
    f.write(f"{os.getpid()} {child.pid}\n")
time.sleep(1000)
