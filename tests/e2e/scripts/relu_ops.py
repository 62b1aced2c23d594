"""ReLU as module:function ops in each framework gpuemu adapts (numpy, torch, jax, tensorflow), for
the size-0 tests: each receives its framework's (possibly empty) tensor and returns one."""


def numpy_relu(inputs, **kwargs):
    import numpy as np  # lazy: each worker imports only its own framework
    return np.maximum(inputs["x"], 0)


def torch_relu(inputs, **kwargs):
    import torch  # lazy: each worker imports only its own framework
    return torch.relu(inputs["x"])


def jax_relu(inputs, **kwargs):
    import jax.numpy as jnp  # lazy: each worker imports only its own framework
    return jnp.maximum(inputs["x"], 0)


def tensorflow_relu(inputs, **kwargs):
    import tensorflow as tf  # lazy: each worker imports only its own framework
    return tf.nn.relu(inputs["x"])
