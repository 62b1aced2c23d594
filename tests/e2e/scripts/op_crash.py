"""Op under test that raises: gpuemu must report op_error with this traceback's text."""
import sys

sys.stdin.read()
raise RuntimeError("kernel exploded on purpose")
