// One m16n8k16 half-precision tile product on tensor cores through inline PTX mma.sync (the
// pip wheel has no CCCL headers for <mma.h>): mma in PTX, HMMA in SASS. Used for
// required_instructions tests.
extern "C" __global__ void mma_tile(const unsigned* a, const unsigned* b, float* c) {
  int lane = threadIdx.x & 31;
  unsigned a0 = a[lane * 4], a1 = a[lane * 4 + 1], a2 = a[lane * 4 + 2], a3 = a[lane * 4 + 3];
  unsigned b0 = b[lane * 2], b1 = b[lane * 2 + 1];
  float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  c[lane * 4] = d0;
  c[lane * 4 + 1] = d1;
  c[lane * 4 + 2] = d2;
  c[lane * 4 + 3] = d3;
}
