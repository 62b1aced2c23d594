// configuration.txt's kernels/matmul.cu: a naive matmul kernel for the artifact checks, which need
// nvcc; without it `gpuemu ci run` skips them with a warning (tests/e2e/test_seed_documents_cli.py).
extern "C" __global__ void matmul_kernel(const float* a, const float* b, float* c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
