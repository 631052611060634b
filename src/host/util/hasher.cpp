// @file hasher.cpp: the word-at-a-time 64-bit hash behind checkpoints' checksums and scene digests.
#include "tracer/host/hasher.h"

#include <cstring>

namespace tracer {
namespace {

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// splitmix64's finaliser (Steele, Lea and Flood 2014): a bijection that spreads every bit over the word.
uint64_t Avalanche(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t GetU64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

void Hasher::Mix(uint64_t word) {
  // Multiplying by an odd constant, xor with the state, rotating and multiplying again are each
  // invertible, so two inputs that differ in one word always leave different states.
  h_ = Rotl(h_ ^ (word * 0x9fb21c651e98df25ull), 31) * 0xc2b2ae3d27d4eb4full;
}

void Hasher::Update(const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  total_ += n;
  // Top up a partial word left from the previous call (the "< 8" always holds; it tells GCC the index is in range).
  while (n && pendingBytes_ > 0 && pendingBytes_ < 8) {
    pending_[pendingBytes_++] = *p++;
    --n;
    if (pendingBytes_ == 8) {
      Mix(GetU64(pending_));
      pendingBytes_ = 0;
    }
  }
  // Here either n == 0 or the partial word was completed (pendingBytes_ == 0).
  for (; n >= 8; n -= 8, p += 8) Mix(GetU64(p));
  if (n > 0) {
    std::memcpy(pending_, p, n);
    pendingBytes_ = n;
  }
}

uint64_t Hasher::Digest() const {
  Hasher copy = *this;
  if (copy.pendingBytes_ > 0) {
    unsigned char word[8] = {};
    std::memcpy(word, copy.pending_, copy.pendingBytes_);
    copy.Mix(GetU64(word));
  }
  // The length tells "ab" from "ab\0": zero padding alone would not.
  copy.Mix(copy.total_);
  return Avalanche(copy.h_);
}

uint64_t HashBytes(const void* data, size_t n) {
  Hasher h;
  h.Update(data, n);
  return h.Digest();
}

}  // namespace tracer
