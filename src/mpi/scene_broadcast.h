// @file scene_broadcast.h: the scene's way from rank 0 to the other ranks, checked against rank 0's content hash.
//
// Rank 0 sends the scene through a communicator of its own, from a thread, so that its main thread can render
// meanwhile: a header (the arrays' sizes and the scalars), the arrays of ForEachSceneArray in pieces of 4 MiB, and
// last rank 0's SceneContentHash, computed on another thread while the arrays go out. A receiving rank hashes each
// piece on a thread of its own while the next one arrives, and compares before it renders. The hash guards the
// transfer and the layout (the ranks have already checked that they run one build with one command line and,
// where they can read it, one scene file), at the cost of the last piece's hashing only.
#pragma once
#include <mpi.h>

#include <cstddef>

namespace tracer {
struct SceneData;
}  // namespace tracer

namespace tracer::mpi {

// Rank 0's side. Returns the bytes sent.
size_t SendScene(const SceneData& d, MPI_Comm comm);

// Every other rank's side: fills `d` and checks it against rank 0's hash. Returns the bytes received.
size_t ReceiveScene(SceneData& d, MPI_Comm comm);

}  // namespace tracer::mpi
