# Test script: starts a grandchild that sleeps, writes its pid to the file named in argv/env, then hangs.
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
with open(os.environ["GRANDCHILD_PID_FILE"], "w") as f:
    f.write(str(child.pid))
time.sleep(1000)
