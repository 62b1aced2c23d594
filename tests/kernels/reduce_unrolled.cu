// reduce_loop.cu unrolled by 8: the same result with many more loads and adds per iteration.
extern "C" __global__ void reduce_rows(const float* x, float* out, int cols) {
  const float* row = x + blockIdx.x * cols;
  float sum = 0.0f;
#pragma unroll 8
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += row[c];
  atomicAdd(out + blockIdx.x, sum);
}
