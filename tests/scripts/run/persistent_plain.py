# Test script: a plain cold-protocol script that does not opt in to warm mode.
import base64, json, sys

if __name__ == "__main__":
    req = json.load(sys.stdin)
    print(json.dumps(req["inputs"]["x"]))
