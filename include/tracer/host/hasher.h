// @file hasher.h: a 64-bit hash of bytes, for checkpoints' checksums, scene digests and the ranks' comparison of
// their inputs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace tracer {

// A 64-bit hash of bytes, word at a time. Each step is a bijection of the state for a fixed input word and
// of the word for a fixed state, so changing any single 8-byte word always changes the result.
class Hasher {
 public:
  explicit Hasher(uint64_t seed = 0x9e3779b97f4a7c15ull) : h_(seed) {}
  void Update(const void* data, size_t n);
  uint64_t Digest() const;  // does not change the state; more Update calls may follow

 private:
  void Mix(uint64_t word);
  uint64_t h_;
  uint64_t total_ = 0;
  unsigned char pending_[8] = {};
  size_t pendingBytes_ = 0;
};
uint64_t HashBytes(const void* data, size_t n);
inline uint64_t HashString(const std::string& s) { return HashBytes(s.data(), s.size()); }

}  // namespace tracer
