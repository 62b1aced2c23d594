# Test module for warm workers: callables that succeed, fail, die, hang and print, by name.
import os
import subprocess
import sys
import time

import numpy as np


def double(inputs, scale=1):
    return inputs["x"].astype(np.float64) * 2 * scale


def pair(inputs):
    x = inputs["x"]
    return {"sum": np.array([x.sum()], dtype=np.float64), "shape": np.array(x.shape, dtype=np.int64)}


def pid(inputs):
    return np.array([os.getpid()], dtype=np.int64)


def strides(inputs):
    x = inputs["x"]
    return np.array([s // x.itemsize for s in x.strides], dtype=np.int64)


def boom(inputs, n=3):
    raise ValueError(f"boom {n}")


def die(inputs):
    os._exit(7)


def segfault(inputs):
    os.kill(os.getpid(), 11)


def hang(inputs):
    time.sleep(1000)


def hang_with_grandchild(inputs):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
    with open(os.environ["GRANDCHILD_PID_FILE"], "w") as f:
        f.write(str(child.pid))
    time.sleep(1000)


def chatty(inputs):
    print("chatty says hello on stdout")
    print("chatty says hello on stderr", file=sys.stderr)
    return inputs["x"]


def flood_stderr(inputs):
    line = "z" * 1023 + "\n"
    for _ in range(8 * 1024):
        sys.stderr.write(line)
    sys.stderr.write("END-OF-STDERR\n")
    return np.zeros(1, dtype=np.float32)


def total(inputs):
    return np.array([inputs["x"].astype(np.float64).sum()])


def mutate(inputs):
    x = inputs["x"]
    x += 1  # inputs are writable views, as in cold mode
    return x


def read_stdin(inputs):
    data = sys.stdin.read()
    return np.array([len(data)], dtype=np.int64)


def not_array(inputs):
    return {"bad": object()}


not_callable = 3


def dtype_seen(inputs):
    """The name of the dtype the callable received, as uint8 character codes (bfloat16 cases arrive
    as the worker's --numpy-bfloat16 says)."""
    return np.frombuffer(inputs["x"].dtype.name.encode(), dtype=np.uint8).copy()


def parent_pid(inputs):
    return np.array([os.getppid()], dtype=np.int64)


def env_value(inputs, name="GPUEMU_TEST_VALUE"):
    return np.array([float(os.environ.get(name, "-1"))], dtype=np.float64)


def random_draw(inputs):
    return np.array([np.random.random()], dtype=np.float64)


def scribble(inputs):
    """Writes into its input and returns what it read first: harmless for a reference (its private copy),
    input_mutated for an op (docs/worker-protocol.md, "Inputs the op writes into")."""
    x = inputs["x"]
    first = x.astype(np.float64) * 2
    x[...] = -99
    return first


def pool_threads(inputs):
    # The thread pool sizes this worker was given (-1: not set).
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    return np.array([int(os.environ.get(name, "-1")) for name in names], dtype=np.int64)
