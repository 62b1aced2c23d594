// Tiled matmul C = A * B (square, n a multiple of TILE) with TILE = 16: two shared-memory tiles
// and two barriers per step. matmul_tile16.cu and matmul_tile32.cu differ only in this constant.
// The kernel keeps its C++ (mangled) name so lint has to match "matmul" to _Z6matmul....
constexpr int TILE = 16;

__device__ __noinline__ float dot_tile(const float (*a)[TILE], const float (*b)[TILE], int r, int c) {
  float s = 0.0f;
  for (int k = 0; k < TILE; ++k) s += a[r][k] * b[k][c];
  return s;
}

__global__ void __launch_bounds__(TILE * TILE) matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float a[TILE][TILE];
  __shared__ float b[TILE][TILE];
  int r = threadIdx.y, c = threadIdx.x;
  int row = blockIdx.y * TILE + r, col = blockIdx.x * TILE + c;
  float acc = 0.0f;
  for (int t = 0; t < n; t += TILE) {
    a[r][c] = A[row * n + t + c];
    b[r][c] = B[(t + r) * n + col];
    __syncthreads();
    acc += dot_tile(a, b, r, c);
    __syncthreads();
  }
  C[row * n + col] = acc;
}
