// saxpy with a large per-thread array indexed by a runtime value: the array cannot live in
// registers, so it goes to local memory (.local in PTX, a stack frame and LDL/STL in SASS).
extern "C" __global__ void saxpy_local(int n, float a, const float* x, float* y, int pick) {
  float history[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int j = 0; j < 256; ++j) history[j] = a * x[(i + j) % n];
  y[i] = history[pick & 255] + y[i];
}
