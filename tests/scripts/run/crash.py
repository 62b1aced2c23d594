# Test script: fails with a traceback (exit 1) after a line on stderr.
import sys
print("about to fail", file=sys.stderr)
raise RuntimeError("deliberate failure in crash.py")
