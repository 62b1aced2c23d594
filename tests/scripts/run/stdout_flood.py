# Test script: writes endless output to stdout.
import sys
chunk = "y" * 65536
while True:
    sys.stdout.write(chunk)
