# Test script: doubles x through gpuemu.script.serve, so it runs cold (as a program) or warm
# (persistent = true) with the same code.
import numpy as np

from gpuemu.script import serve


def double(inputs, scale=1):
    return inputs["x"] * np.float32(2 * scale)


serve(double)
