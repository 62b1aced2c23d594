# Test script: prints something that is not a JSON reply.
import sys
sys.stdin.read()
print("Loading weights... done")
print("result = 42")
