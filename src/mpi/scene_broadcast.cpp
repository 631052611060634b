// @file scene_broadcast.cpp: SendScene and ReceiveScene (scene_broadcast.h): the header, the arrays piece by piece,
// the content hash followed as the pieces arrive.
#include "scene_broadcast.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "mpi_calls.h"
#include "tracer/host/scene_data.h"

namespace tracer::mpi {
namespace {

constexpr size_t kScenePiece = size_t(4) << 20;

struct SceneHeader {
  uint64_t arrays[kNumSceneArrays + 2];  // element counts, in ForEachSceneArray's order
  int32_t bvhDepth, wideDepth;
  Vec3 boundsMin, boundsMax, environment;
  EnvParams envParams;
  float deltaShare;
  Camera camera;
};
// Broadcast as bytes: plain data, whose vectors are three packed floats each (core/math.h asserts it; GLM declares
// their copy constructor, so the header is standard-layout but not formally trivially copyable).
static_assert(std::is_standard_layout<SceneHeader>::value, "SceneHeader is broadcast as bytes");

// The arrays' bytes, piece by piece, on rank 0 and the others alike; arrived(n) after each piece of n bytes.
template <typename Data, typename Arrived>
void BcastSceneArrays(Data& d, MPI_Comm comm, Arrived&& arrived) {
  ForEachSceneArray(d, [&](auto& v, bool) {
    char* p = const_cast<char*>(reinterpret_cast<const char*>(v.data()));  // rank 0 only reads
    const size_t bytes = v.size() * sizeof(v[0]);
    for (size_t off = 0; off < bytes; off += kScenePiece) {
      const size_t n = std::min(kScenePiece, bytes - off);
      BcastBytes(p + off, n, comm);
      arrived(n);
    }
  });
}

// Hashes a scene's stream on a thread of its own as its bytes arrive: Arrived(n) after each n bytes; the destructor
// returns once everything that arrived is hashed.
class HashFollower {
 public:
  explicit HashFollower(SceneHashStream& stream) : stream_(stream), thread_([this] { Run(); }) {}
  ~HashFollower() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  void Arrived(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      arrived_ += bytes;
    }
    wake_.notify_one();
  }

 private:
  void Run() {
    for (size_t hashed = 0;;) {
      size_t upTo = 0;
      bool last = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return arrived_ > hashed || stop_; });
        upTo = arrived_;
        last = stop_;  // nothing arrives after the stop
      }
      stream_.HashUpTo(upTo);
      hashed = upTo;
      if (last) return;
    }
  }

  SceneHashStream& stream_;
  std::mutex mutex_;
  std::condition_variable wake_;
  size_t arrived_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace

size_t SendScene(const SceneData& d, MPI_Comm comm) {
  std::future<uint64_t> hash = std::async(std::launch::async, [&d] { return SceneContentHash(d); });
  SceneHeader h{};
  int i = 0;
  ForEachSceneArray(d, [&](const auto& v, bool) { h.arrays[i++] = v.size(); });
  h.bvhDepth = d.bvh.depth;
  h.wideDepth = d.wide.depth;
  h.boundsMin = d.boundsMin;
  h.boundsMax = d.boundsMax;
  h.environment = d.environment;
  h.envParams = d.env.params;
  h.deltaShare = d.deltaShare;
  h.camera = d.camera;
  BcastBytes(&h, sizeof h, comm);
  size_t bytes = 0;
  BcastSceneArrays(d, comm, [&](size_t n) { bytes += n; });
  uint64_t digest = hash.get();
  BcastBytes(&digest, sizeof digest, comm);
  return sizeof h + bytes + sizeof digest;
}

size_t ReceiveScene(SceneData& d, MPI_Comm comm) {
  SceneHeader h{};
  BcastBytes(&h, sizeof h, comm);
  int i = 0;
  ForEachSceneArray(d, [&](auto& v, bool) { v.resize(static_cast<size_t>(h.arrays[i++])); });
  d.bvh.depth = h.bvhDepth;
  d.wide.depth = h.wideDepth;
  d.boundsMin = h.boundsMin;
  d.boundsMax = h.boundsMax;
  d.environment = h.environment;
  d.env.params = h.envParams;
  d.deltaShare = h.deltaShare;
  d.camera = h.camera;
  SceneHashStream stream(d);
  uint64_t digest = 0;
  {
    HashFollower follower(stream);
    BcastSceneArrays(d, comm, [&](size_t n) { follower.Arrived(n); });
    BcastBytes(&digest, sizeof digest, comm);
  }
  stream.HashUpTo(stream.Bytes());  // empty arrays at the end, if no byte came after them
  if (stream.Digest() != digest)
    throw std::runtime_error("the scene received from rank 0 differs from the one it sent (content hash)");
  return sizeof h + stream.Bytes() + sizeof digest;
}

}  // namespace tracer::mpi
