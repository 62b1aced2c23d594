# Test script: never finishes (and never reads stdin).
import time
time.sleep(1000)
