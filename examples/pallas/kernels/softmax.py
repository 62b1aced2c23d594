"""Row softmax as a Pallas kernel: the grid walks the rows in BLOCK_M-row blocks, each program
normalizes its block in float32. The grid is cdiv(M, BLOCK_M), so a partial last block is still
visited. gpuemu decides interpret= per op (pallas_interpret in gpuemu.toml): the interpreter on
a CPU, the compiled kernel on a GPU, with no change to this file."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from gpuemu.frameworks.jax import interpret as pallas_interpret

BLOCK_M = 8


def softmax_kernel(x_ref, y_ref):
    x = x_ref[...].astype(jnp.float32)
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    y_ref[...] = (e / jnp.sum(e, axis=-1, keepdims=True)).astype(y_ref.dtype)


@functools.partial(jax.jit, static_argnames=("interpret",))
def _softmax(x, interpret):
    m, n = x.shape
    return pl.pallas_call(
        softmax_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(m, BLOCK_M),),
        in_specs=[pl.BlockSpec((BLOCK_M, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((BLOCK_M, n), lambda i: (i, 0)),
        interpret=interpret,
    )(x)


def softmax(inputs):
    return _softmax(inputs["x"], interpret=pallas_interpret())
