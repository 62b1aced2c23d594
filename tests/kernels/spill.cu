// Register pressure under a tight launch bound: 48 live accumulators per thread while
// __launch_bounds__(1024, 2) caps registers at 32, so ptxas spills to local memory.
extern "C" __global__ void __launch_bounds__(1024, 2) spill(const float* x, float* y, int n) {
  float acc[48];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < 48; ++k) acc[k] = x[i * 48 + k];
  for (int step = 0; step < n; ++step) {
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + 7) % 48] + acc[(k + 13) % 48];
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < 48; ++k) sum += acc[k];
  y[i] = sum;
}
