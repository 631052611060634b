// @file common.h: host/device qualifiers, 16-byte vector types and small helpers shared by every header.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__CUDACC__)
#define TRACER_HD __host__ __device__ __forceinline__
#define TRACER_DEVICE __device__ __forceinline__
#else
#define TRACER_HD inline
#endif

#if defined(__CUDA_ARCH__)
#define TRACER_ON_DEVICE 1
// Before a loop over a small fixed range: unrolled on the device, so that arrays indexed by its counter stay in
// registers (an array indexed by a value the compiler cannot fold goes to local memory).
#define TRACER_UNROLL _Pragma("unroll")
#else
#define TRACER_ON_DEVICE 0
#define TRACER_UNROLL
#endif

namespace tracer {

// Plain 16-byte vectors. We do not use CUDA's float4 in headers so that host-only translation units
// (built without the CUDA toolkit) see the same layout; device code loads them through float4.
struct alignas(16) Float4 {
  float x, y, z, w;
};
struct alignas(16) Int4 {
  int32_t x, y, z, w;
};
static_assert(sizeof(Float4) == 16 && alignof(Float4) == 16, "Float4 must be one 16-byte load");
static_assert(sizeof(Int4) == 16 && alignof(Int4) == 16, "Int4 must be one 16-byte load");

constexpr float kPi = 3.14159265358979323846f;
constexpr float kInvPi = 0.31830988618379067154f;
constexpr float kInf = std::numeric_limits<float>::infinity();

TRACER_HD float FloatFromBits(uint32_t u) {
#if TRACER_ON_DEVICE
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
TRACER_HD uint32_t BitsFromFloat(float f) {
#if TRACER_ON_DEVICE
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

// One 16-byte load. On the device it is a single LDG.E.128 (through the read-only path when kLdg).
template <bool kLdg = false>
TRACER_HD Float4 Load4(const Float4* p) {
#if TRACER_ON_DEVICE
  float4 v;
  if (kLdg)
    v = __ldg(reinterpret_cast<const float4*>(p));
  else
    v = *reinterpret_cast<const float4*>(p);
  return Float4{v.x, v.y, v.z, v.w};
#else
  return *p;
#endif
}
template <bool kLdg = false>
TRACER_HD Int4 Load4(const Int4* p) {
#if TRACER_ON_DEVICE
  int4 v;
  if (kLdg)
    v = __ldg(reinterpret_cast<const int4*>(p));
  else
    v = *reinterpret_cast<const int4*>(p);
  return Int4{v.x, v.y, v.z, v.w};
#else
  return *p;
#endif
}
TRACER_HD void Store4(Float4* p, Float4 v) {
#if TRACER_ON_DEVICE
  *reinterpret_cast<float4*>(p) = make_float4(v.x, v.y, v.z, v.w);
#else
  *p = v;
#endif
}
TRACER_HD void Store4(Int4* p, Int4 v) {
#if TRACER_ON_DEVICE
  *reinterpret_cast<int4*>(p) = make_int4(v.x, v.y, v.z, v.w);
#else
  *p = v;
#endif
}

// One 128-bit load of wavefront state that the compiler may not split. A plain float4 dereference is
// often scalarised by the compiler when the four components are used at different places, which would
// turn the optimised layout's LDG.E.128 back into four LDG.E. The asm keeps it one instruction. It is not
// volatile, so the compiler may still schedule it early; every use of a loaded record precedes any store
// to the same slot through data dependences, which is all the in-place (no-compaction) mode needs.
TRACER_HD Float4 LoadVec4(const Float4* p) {
#if TRACER_ON_DEVICE
  Float4 v;
  asm("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
#else
  return *p;
#endif
}
TRACER_HD Int4 LoadVec4(const Int4* p) {
#if TRACER_ON_DEVICE
  Int4 v;
  asm("ld.global.v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
#else
  return *p;
#endif
}

// Scalar load through the read-only data cache on the device when kLdg.
template <bool kLdg, typename T>
TRACER_HD T LoadRO(const T* p) {
#if TRACER_ON_DEVICE
  if (kLdg) return __ldg(p);
#endif
  return *p;
}

// Atomic adds that return the old value, and an atomic minimum: CUDA atomics on the device, relaxed GCC
// atomics on the host (the CPU renderer runs the same stage code on a thread pool).
TRACER_HD uint32_t AtomicAddU32(uint32_t* p, uint32_t v) {
#if TRACER_ON_DEVICE
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
TRACER_HD unsigned long long AtomicAddU64(unsigned long long* p, unsigned long long v) {
#if TRACER_ON_DEVICE
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
TRACER_HD void AtomicMinU64(unsigned long long* p, unsigned long long v) {
#if TRACER_ON_DEVICE
  atomicMin(p, v);
#else
  unsigned long long cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}

}  // namespace tracer
