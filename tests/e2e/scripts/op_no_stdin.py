"""Op under test that never reads stdin and exits 0 without output (big inputs must not deadlock)."""
import time

time.sleep(0.2)
