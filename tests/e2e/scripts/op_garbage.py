"""Op under test that prints something that is not the protocol's JSON."""
import sys

sys.stdin.read()
print("Loading kernel... done")
print("{not json")
