# Test module for warm workers: says something on stderr while it is imported (a deprecation
# warning, a banner), which belongs to the first case's stderr even when the worker started early.
import sys

import numpy as np

print("chatty_import: imported", file=sys.stderr)


def double(inputs):
    return inputs["x"].astype(np.float64) * 2
