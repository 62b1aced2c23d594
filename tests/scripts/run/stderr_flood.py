# Test script: writes 8 MiB to stderr, ending with a marker line, then a valid reply.
import base64, json, sys
sys.stdin.read()
line = "x" * 1023 + "\n"
for _ in range(8 * 1024):
    sys.stderr.write(line)
sys.stderr.write("END-OF-STDERR\n")
print(json.dumps({"shape": [1], "dtype": "float32", "data": base64.b64encode(b"\0\0\0\0").decode()}))
