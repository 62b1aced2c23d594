// The texts `gpuemu init` writes. Each template's op stub is a correct kernel in numpy that
// computes in float32 like a GPU kernel upcasting half inputs; tests/e2e/test_init.py runs
// `gpuemu ci run` on every template, so these tolerances are tested, not hoped for.
#include "cli/init_templates.hpp"

#include <array>

#include <fmt/format.h>

namespace gpuemu::cli {
namespace {

struct Body {
  std::string_view op_toml;    // the [[ops]] table and its sub-tables
  std::string_view kernel;     // kernels/<op>.py
  std::string_view reference;  // refs/<op>_ref.py
};

constexpr std::string_view kElementwiseOp = R"(# One op spec: its shapes, values and tolerances are written once, and every implementation in
# `implementations` runs the same cases. Add a second kernel as another entry, e.g.
#   implementations = ["kernels.silu:silu", "kernels.silu_fast:silu_fast"]
# and each one gets its own result, silu/silu and silu/silu_fast.
[[ops]]
name = "silu"
reference = "refs.silu_ref:silu_ref"   # module:function; runs in a warm Python worker
implementations = ["kernels.silu:silu"]
invariants = ["shape_preserved"]
layouts = ["contiguous", "strided"]     # strided cases hand the kernel a real strided view

[ops.schema]
# Sizes are drawn boundary-aware from these ranges: 1, primes, powers of two and neighbours.
dims = { M = [1, 64], N = [1, 300] }
inputs = { x = ["M", "N"] }
output = ["M", "N"]

[ops.inputs.x]
domain = [-10.0, 10.0]                  # the values the kernel must support
)";

constexpr std::string_view kElementwiseKernel = R"("""SiLU, x * sigmoid(x), as the op under test: float32 math whatever the input dtype, the
result stored in the input's dtype (bfloat16 cases arrive as ml_dtypes.bfloat16 arrays).
"""

import numpy as np


def silu(inputs, **kwargs):
    x = inputs["x"]
    x32 = x.astype(np.float32)
    y = x32 / (np.float32(1.0) + np.exp(-x32))
    return y.astype(x.dtype)
)";

constexpr std::string_view kElementwiseRef = R"("""float64 reference for silu: what the kernel should compute, without its rounding."""

import numpy as np


def silu_ref(inputs, **kwargs):
    x = np.asarray(inputs["x"], dtype=np.float64)
    return x / (1.0 + np.exp(-x))
)";

constexpr std::string_view kRowReductionOp = R"(# One op spec: its shapes, values and tolerances are written once, and every implementation in
# `implementations` runs the same cases. Add a second kernel as another entry, e.g.
#   implementations = ["kernels.rmsnorm:rmsnorm", "kernels.rmsnorm_fast:rmsnorm_fast"]
[[ops]]
name = "rmsnorm"
reference = "refs.rmsnorm_ref:rmsnorm_ref"   # module:function; runs in a warm Python worker
implementations = ["kernels.rmsnorm:rmsnorm"]
invariants = ["shape_preserved", "finite"]

[ops.kwargs]
eps = 1e-6                                    # passed to both the kernel and the reference

[ops.schema]
# N straddles the usual block sizes (32, 128, 1024) so tail tiles are exercised.
dims = { M = [1, 48], N = [1, 1100] }
inputs = { x = ["M", "N"], w = ["N"] }
output = ["M", "N"]

[ops.inputs.x]
domain = [-4.0, 4.0]

[ops.inputs.w]
domain = [-2.0, 2.0]
)";

constexpr std::string_view kRowReductionKernel = R"("""RMSNorm over the last dim as the op under test: y = x / sqrt(mean(x^2) + eps) * w, with the
sum of squares accumulated in float32 and the result stored in x's dtype.
"""

import numpy as np


def rmsnorm(inputs, eps=1e-6, **kwargs):
    x, w = inputs["x"], inputs["w"]
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    mean_square = np.mean(x32 * x32, axis=-1, keepdims=True, dtype=np.float32)
    y = x32 / np.sqrt(mean_square + np.float32(eps)) * w32
    return y.astype(x.dtype)
)";

constexpr std::string_view kRowReductionRef = R"("""float64 reference for rmsnorm."""

import numpy as np


def rmsnorm_ref(inputs, eps=1e-6, **kwargs):
    x = np.asarray(inputs["x"], dtype=np.float64)
    w = np.asarray(inputs["w"], dtype=np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w
)";

constexpr std::string_view kMatmulOp = R"(# One op spec: its shapes, values and tolerances are written once, and every implementation in
# `implementations` runs the same cases. Add a second kernel as another entry, e.g.
#   implementations = ["kernels.matmul:matmul", "kernels.matmul_tiled:matmul_tiled"]
[[ops]]
name = "matmul"
reference = "refs.matmul_ref:matmul_ref"   # module:function; runs in a warm Python worker
implementations = ["kernels.matmul:matmul"]
layouts = ["contiguous", "transposed", "strided"]

[ops.schema]
# K is the reduction length: the float32 accumulation error grows with it, hence atol below.
dims = { M = [1, 64], N = [1, 64], K = [1, 256] }
inputs = { a = ["M", "K"], b = ["K", "N"] }
output = ["M", "N"]

[ops.inputs.a]
domain = [-1.0, 1.0]

[ops.inputs.b]
domain = [-1.0, 1.0]

# Per-dtype |out - ref| <= atol + rtol * |ref|; `gpuemu calibrate --op matmul/matmul` fits them.
[ops.tolerances]
float32 = { atol = 1e-4, rtol = 1e-5 }
float16 = { atol = 1e-3, rtol = 2e-3 }
bfloat16 = { atol = 1e-2, rtol = 1e-2 }
)";

constexpr std::string_view kMatmulKernel = R"("""a @ b as the op under test: float32 accumulation whatever the input dtype (as tensor cores
accumulate half inputs), the result stored in a's dtype.
"""

import numpy as np


def matmul(inputs, **kwargs):
    a, b = inputs["a"], inputs["b"]
    return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
)";

constexpr std::string_view kMatmulRef = R"("""float64 reference for matmul."""

import numpy as np


def matmul_ref(inputs, **kwargs):
    return np.asarray(inputs["a"], dtype=np.float64) @ np.asarray(inputs["b"], dtype=np.float64)
)";

constexpr std::string_view kAttentionOp = R"(# One op spec: its shapes, values and tolerances are written once, and every implementation in
# `implementations` runs the same cases. Add a second kernel as another entry, e.g.
#   implementations = ["kernels.attention:attention", "kernels.flash:flash_attention"]
[[ops]]
name = "attention"
reference = "refs.attention_ref:attention_ref"   # module:function; runs in a warm Python worker
implementations = ["kernels.attention:attention"]
invariants = ["finite"]

[ops.schema]
# q is [heads, queries, head dim]; k and v share the key count N.
dims = { H = [1, 2], M = [1, 40], N = [1, 80], D = { candidates = [1, 16, 64] } }
inputs = { q = ["H", "M", "D"], k = ["H", "N", "D"], v = ["H", "N", "D"] }
output = ["H", "M", "D"]

[ops.inputs.q]
domain = [-1.0, 1.0]

[ops.inputs.k]
domain = [-1.0, 1.0]

[ops.inputs.v]
domain = [-1.0, 1.0]

[ops.tolerances]
float32 = { atol = 1e-5, rtol = 1e-4 }
float16 = { atol = 2e-3, rtol = 5e-3 }
bfloat16 = { atol = 1e-2, rtol = 1e-2 }
)";

constexpr std::string_view kAttentionKernel = R"("""softmax(q k^T / sqrt(D)) v as the op under test: float32 math, the row max subtracted before
exp, the result stored in q's dtype.
"""

import math

import numpy as np


def attention(inputs, **kwargs):
    q, k, v = (inputs[name].astype(np.float32) for name in ("q", "k", "v"))
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * np.float32(1.0 / math.sqrt(q.shape[-1]))
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return np.matmul(p, v).astype(inputs["q"].dtype)
)";

constexpr std::string_view kAttentionRef = R"("""float64 reference for attention."""

import math

import numpy as np


def attention_ref(inputs, **kwargs):
    q, k, v = (np.asarray(inputs[name], dtype=np.float64) for name in ("q", "k", "v"))
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v
)";

constexpr std::string_view kHeader = R"(# gpuemu.toml, written by `gpuemu init --template {template}` (reference: docs/configuration.md).
# The op under test is kernels/{op}.py; its float64 reference is refs/{op}_ref.py.
#   gpuemu test      a few cases per dtype
#   gpuemu fuzz      100 seeded random cases; a failure prints `gpuemu reproduce SEED --op ...`
#   gpuemu ci run    the CI gate that .github/workflows/gpuemu.yml runs

[project]
name = "{project}"
# numpy kernels receive bfloat16 cases as real ml_dtypes.bfloat16 arrays (and return bfloat16);
# "float32" would hand them exact float32 arrays instead (docs/configuration.md).
numpy_bfloat16 = "ml_dtypes"

[validation]
# Every op is tested at these dtypes unless it lists its own `dtypes`.
dtypes = ["float32", "float16", "bfloat16"]
# A fixed master seed makes every run the same; 0 draws a new one per run (printed for replay).
seed = 1

)";

constexpr std::string_view kFooter = R"(
[ci]
# `gpuemu ci run --quick` tests only these dtypes, with quick_iterations cases per op.
quick_dtypes = ["float32"]
quick_iterations = 20
fuzz_iterations = 100
)";

constexpr std::string_view kWorkflow = R"(# The gpuemu correctness gate, written by `gpuemu init`: on every pull request and every push to
# main, `gpuemu ci run` in the action's container, with result.json, JUnit, SARIF and a summary
# in gpuemu-out/. Pin the action by tag (@v1) or, for a fixed build, by commit SHA (docs/action.md).
name: gpuemu

on:
  pull_request:
  push:
    branches: [main]

permissions:
  contents: read

jobs:
  gpuemu:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4

      - name: gpuemu ci run
        uses: skelf/gpuemu-action@v1
        with:
          config: gpuemu.toml
          out: gpuemu-out

      - uses: actions/upload-artifact@v4
        if: ${{ !cancelled() }}
        with:
          name: gpuemu-results
          path: gpuemu-out/
          retention-days: 14
)";

// The op as pytest cases (docs/pytest.md): the path from `gpuemu init` to a failing, replayable
// test item in the tools kernel engineers already use. {op} is the op, {impl} its implementation.
constexpr std::string_view kPytest = R"(# The op of gpuemu.toml as pytest cases, written by `gpuemu init` (docs/pytest.md): each seeded
# case is one test item whose id names the dtype, the shapes and the case seed; a failure prints
# the worst element and the `gpuemu reproduce` command that replays it.
#   pytest tests -q                             # [validation] fuzz_iterations cases (100)
#   pytest tests -q --gpuemu-iterations 20      # fewer cases; --gpuemu-seed N for another seed
import pytest


@pytest.mark.gpuemu("{op}/{impl}")
def test_{impl}(gpuemu_case):
    gpuemu_case.run()  # kernels/{impl}.py against the op's reference, with its tolerances
)";

constexpr std::array kTemplates = {
    InitTemplate{"elementwise", "silu", "an elementwise op (SiLU) over a strided 2-D tensor"},
    InitTemplate{"row-reduction", "rmsnorm", "a reduction along each row (RMSNorm with a weight and eps)"},
    InitTemplate{"matmul", "matmul", "a matrix product with float32 accumulation, any memory layout"},
    InitTemplate{"attention", "attention", "multi-head attention softmax(q k^T / sqrt(D)) v"},
};

Body body_of(std::string_view name) {
  if (name == "row-reduction") return {kRowReductionOp, kRowReductionKernel, kRowReductionRef};
  if (name == "matmul") return {kMatmulOp, kMatmulKernel, kMatmulRef};
  if (name == "attention") return {kAttentionOp, kAttentionKernel, kAttentionRef};
  return {kElementwiseOp, kElementwiseKernel, kElementwiseRef};
}

}  // namespace

std::span<const InitTemplate> init_templates() { return kTemplates; }

std::vector<InitFile> init_files(const InitTemplate& tmpl, std::string_view project) {
  const Body body = body_of(tmpl.name);
  std::string toml = fmt::format(fmt::runtime(kHeader), fmt::arg("template", tmpl.name), fmt::arg("op", tmpl.op),
                                 fmt::arg("project", project));
  toml += body.op_toml;
  toml += kFooter;
  const std::string op(tmpl.op);
  return {
      {"gpuemu.toml", toml},
      {"kernels/" + op + ".py", std::string(body.kernel)},
      {"refs/" + op + "_ref.py", std::string(body.reference)},
      // Regular packages, so an installed package of the same name cannot shadow them.
      {"kernels/__init__.py", "# The kernels under test (see gpuemu.toml).\n"},
      {"refs/__init__.py", "# float64 references for the kernels (see gpuemu.toml).\n"},
      {".github/workflows/gpuemu.yml", std::string(kWorkflow)},
      {"tests/test_" + op + ".py", fmt::format(fmt::runtime(kPytest), fmt::arg("op", op), fmt::arg("impl", op))},
  };
}

}  // namespace gpuemu::cli
