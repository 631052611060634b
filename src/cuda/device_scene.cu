// @file device_scene.cu: uploads the scene's arrays and points a SceneView at the device copies; exports them to,
// and copies them from, another process of the node (CUDA IPC: cudaIpcGetMemHandle / cudaIpcOpenMemHandle).
#include <cstring>
#include <memory>

#include "tracer/cuda/device_scene.h"

namespace tracer {
namespace {

// Export()'s bytes: the exporting process's view (its pointers are replaced by the importer's) and bounds, and per
// array of TRACER_SCENE_ARRAYS its element count and handle (unset for an empty array).
struct ExportedScene {
  uint32_t magic;
  uint32_t arrays;  // kNumSceneArrays of the exporting build
  SceneView view;
  Vec3 boundsMin, boundsMax;
  uint64_t counts[kNumSceneArrays];
  cudaIpcMemHandle_t handles[kNumSceneArrays];
};
constexpr uint32_t kExportMagic = 0x53505654;  // "TVPS"

// The mapping of another process's allocation, closed when done.
class PeerMapping {
 public:
  explicit PeerMapping(const cudaIpcMemHandle_t& handle) {
    TRACER_CUDA_CHECK(cudaIpcOpenMemHandle(&ptr_, handle, cudaIpcMemLazyEnablePeerAccess));
  }
  ~PeerMapping() {
    if (ptr_ && !CudaContextDead()) cudaIpcCloseMemHandle(ptr_);  // errors ignored: destructors never throw
  }
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;
  const void* Get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// Allocates s's arrays and copies each from its mapping (opened into `mapped`), on `stream`, finished on return.
void ImportArrays(DeviceScene& s, const ExportedScene& e, std::vector<std::unique_ptr<PeerMapping>>& mapped,
                  cudaStream_t stream) {
  int i = 0;
#define TRACER_IMPORT_SCENE_ARRAY(T, name, dataMember, viewMember, what)                                               \
  if (e.counts[i]) {                                                                                                   \
    s.name.Allocate(e.counts[i], what);                                                                                \
    mapped.push_back(std::make_unique<PeerMapping>(e.handles[i]));                                                     \
    TRACER_CUDA_CHECK(cudaMemcpyAsync(s.name.Get(), mapped.back()->Get(), s.name.Bytes(), cudaMemcpyDefault, stream)); \
  }                                                                                                                    \
  s.view.viewMember = s.name.Get();                                                                                    \
  ++i;
  TRACER_SCENE_ARRAYS(TRACER_IMPORT_SCENE_ARRAY)
#undef TRACER_IMPORT_SCENE_ARRAY
  TRACER_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

DeviceScene::DeviceScene(const SceneData& d) : boundsMin(d.boundsMin), boundsMax(d.boundsMax) {
  view = d.View();  // scalars and camera; every array's pointer is replaced below
#define TRACER_UPLOAD_SCENE_ARRAY(T, name, dataMember, viewMember, what) \
  name.Upload(d.dataMember, what);                                       \
  view.viewMember = name.Get();
  TRACER_SCENE_ARRAYS(TRACER_UPLOAD_SCENE_ARRAY)
#undef TRACER_UPLOAD_SCENE_ARRAY
  // The uploads run on the default stream, from pageable memory: they may return before their copies have reached the
  // device, and the kernels that read the scene run on non-blocking streams, which do not wait for the default stream.
  TRACER_CUDA_CHECK(cudaStreamSynchronize(0));
}

std::vector<unsigned char> DeviceScene::Export() const {
  // The upload (cudaMemcpyAsync from pageable memory) may return before its copy has reached the device, and the
  // importer's copy is not ordered after this process's stream.
  TRACER_CUDA_CHECK(cudaDeviceSynchronize());
  ExportedScene e{};
  e.magic = kExportMagic;
  e.arrays = kNumSceneArrays;
  e.view = view;
  e.boundsMin = boundsMin;
  e.boundsMax = boundsMax;
  int i = 0;
#define TRACER_EXPORT_SCENE_ARRAY(T, name, dataMember, viewMember, what)              \
  e.counts[i] = name.Size();                                                          \
  if (name.Size()) TRACER_CUDA_CHECK(cudaIpcGetMemHandle(&e.handles[i], name.Get())); \
  ++i;
  TRACER_SCENE_ARRAYS(TRACER_EXPORT_SCENE_ARRAY)
#undef TRACER_EXPORT_SCENE_ARRAY
  std::vector<unsigned char> bytes(sizeof e);
  std::memcpy(bytes.data(), &e, sizeof e);
  return bytes;
}

DeviceScene::DeviceScene(const std::vector<unsigned char>& exported, cudaStream_t stream) {
  ExportedScene e;
  if (exported.size() != sizeof e) throw std::invalid_argument("a device scene's export has the wrong size");
  std::memcpy(static_cast<void*>(&e), exported.data(), sizeof e);  // the bytes ExportScene copied out of one
  if (e.magic != kExportMagic || e.arrays != kNumSceneArrays)
    throw std::invalid_argument("bytes that are no device scene's export");
  view = e.view;
  boundsMin = e.boundsMin;
  boundsMax = e.boundsMax;
  std::vector<std::unique_ptr<PeerMapping>> mapped;  // open until every copy has finished
  try {
    ImportArrays(*this, e, mapped, stream);
  } catch (...) {
    if (!CudaContextDead()) cudaStreamSynchronize(stream);  // copies in flight still read the mappings
    throw;
  }
}

}  // namespace tracer
