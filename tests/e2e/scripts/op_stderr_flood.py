"""Op under test that writes 8 MiB to stderr before answering correctly (the tail must be bounded)."""
import sys

import _proto

inputs, _, _ = _proto.read()
chunk = "x" * 1023 + "\n"
for _ in range(8 * 1024):
    sys.stderr.write(chunk)
sys.stderr.write("LAST-LINE-OF-STDERR\n")
_proto.write(inputs["x"].copy())
