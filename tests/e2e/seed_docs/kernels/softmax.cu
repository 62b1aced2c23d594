// configuration.txt's kernels/softmax.cu: a one-thread-per-row softmax for the artifact checks, which
// need nvcc; without it `gpuemu ci run` skips them with a warning.
extern "C" __global__ void softmax_kernel(const float* x, float* y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float m = x[row * cols];
  for (int j = 1; j < cols; ++j) m = fmaxf(m, x[row * cols + j]);
  float s = 0.0f;
  for (int j = 0; j < cols; ++j) s += __expf(x[row * cols + j] - m);
  for (int j = 0; j < cols; ++j) y[row * cols + j] = __expf(x[row * cols + j] - m) / s;
}
