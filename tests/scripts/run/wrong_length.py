# Test script: claims shape [4] float32 but sends 8 bytes.
import base64, json, sys
sys.stdin.read()
print(json.dumps({"shape": [4], "dtype": "float32", "data": base64.b64encode(b"\0" * 8).decode()}))
