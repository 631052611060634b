// @file mpi_gpu_test.cpp: one frame over MPI ranks on the GPU: `mpirun -np N tracer --backend cuda` against one
// process, byte for byte, with the ranks of rank 0's node copying its device scene (CUDA IPC) and without
// (TRACER_MPI_DEVICE_SCENE=0), and a rank whose GPU faults after that copy. On one GPU the ranks share it (IPC within a
// device); where several are visible, rank r uses GPU r modulo their number, so that the copies go from GPU to GPU.
// Skips without a device.
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_util.h"
#include "mpi_test_util.h"

namespace tracer {
namespace {

using test::CommandResult;
using test::Contains;
using test::Count;
using test::FileExists;
using test::MakeTempDir;
using test::Mpi;
using test::Mpmd;
using test::ReadFile;
using test::RunJob;
using test::Scene;

// The Cornell box at 1 spp per pass (a pool of one path per pixel), so that the ranks share 64 passes.
const char kCornellArgs[] = " --backend cuda --width 320 --height 240 --spp 64 --seed 7 --paths-in-flight 76800";

TEST(MpiGpu, RanksCopyRank0sDeviceSceneAndRenderTheImageOfOneProcess) {
  TRACER_REQUIRE_GPU();
  const std::string dir = MakeTempDir(), base = Scene("cornell.obj") + kCornellArgs;
  CommandResult one = test::RunTracer(base + " -o " + dir + "/one.pfm");
  ASSERT_EQ(one.exitCode, 0) << one.output;
  const std::string image = ReadFile(dir + "/one.pfm");
  for (int ranks : {2, 3}) {
    const std::string out = dir + "/mpi" + std::to_string(ranks) + ".pfm";
    CommandResult r = RunJob(Mpi(ranks, base + " -o " + out));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_TRUE(ReadFile(out) == image) << ranks << " ranks";  // (not the 900-KB files)
    EXPECT_TRUE(Contains(r.output, "its device scene offered at")) << r.output;
    EXPECT_EQ(Count(r.output, "rank 0's device scene offered at"), static_cast<size_t>(ranks - 1)) << r.output;
    EXPECT_FALSE(Contains(r.output, "cannot copy the scene")) << r.output;
  }
  // The naive twin: every rank waits for the host's arrays and uploads them.
  CommandResult host = RunJob("env TRACER_MPI_DEVICE_SCENE=0 " + Mpi(2, base + " -o " + dir + "/host.pfm"));
  ASSERT_EQ(host.exitCode, 0) << host.output;
  EXPECT_TRUE(ReadFile(dir + "/host.pfm") == image);
  EXPECT_FALSE(Contains(host.output, "device scene offered")) << host.output;
  EXPECT_TRUE(Contains(host.output, "(scene received at")) << host.output;
  // The tile guide is built from the host's arrays: no offer; the image is deterministic for a fixed number of ranks
  // (the GPU's statistics are float sums whose order differs from one process's).
  const std::string tiles = base + " --light-sampling tiles --tile-size 16";
  for (const char* run : {"a", "b"}) {
    CommandResult guided = RunJob(Mpi(2, tiles + " -o " + dir + "/tiles" + run + ".pfm"));
    ASSERT_EQ(guided.exitCode, 0) << guided.output;
    EXPECT_FALSE(Contains(guided.output, "device scene offered")) << guided.output;
  }
  EXPECT_TRUE(ReadFile(dir + "/tilesa.pfm") == ReadFile(dir + "/tilesb.pfm"));
}

// A rank that cannot map rank 0's memory (TRACER_FAULT_INJECT=ipc-open: the driver refuses a handle, as between two
// GPUs without peer access) says so, waits for the broadcast, uploads it and renders: the same image. The CUDA error
// is not reported again by the next launch check.
TEST(MpiGpu, RankThatCannotMapRank0sMemoryUploadsTheBroadcastInstead) {
  TRACER_REQUIRE_GPU();
  const std::string dir = MakeTempDir(), base = Scene("cornell.obj") + kCornellArgs;
  ASSERT_EQ(test::RunTracer(base + " -o " + dir + "/one.pfm").exitCode, 0);
  const std::string args = base + " -o " + dir + "/two.pfm";  // (every rank is given the same arguments)
  CommandResult r = RunJob(Mpmd({{"", args}, {"-x TRACER_FAULT_INJECT=ipc-open", args}}));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "cannot copy the scene from rank 0's GPU")) << r.output;
  EXPECT_TRUE(Contains(r.output, "uploading it from the host instead")) << r.output;
  EXPECT_TRUE(ReadFile(dir + "/two.pfm") == ReadFile(dir + "/one.pfm"));
}

// A rank whose GPU faults right after it took rank 0's scene ends the job, naming itself and the cause, and no image
// is written. (The fault comes after a copy and after an upload alike; with these flags the first test shows that
// rank 1 copies.)
TEST(MpiGpu, RankWhoseGpuFaultsAfterTheCopyEndsTheJob) {
  TRACER_REQUIRE_GPU();
  const std::string dir = MakeTempDir(), args = Scene("cornell.obj") + kCornellArgs + " -o " + dir + "/x.png";
  CommandResult r = RunJob(Mpmd({{"", args}, {"-x TRACER_FAULT_INJECT=illegal-address", args}}), 60);
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "rank 1 (")) << r.output;
  EXPECT_TRUE(Contains(r.output, "cudaErrorIllegalAddress")) << r.output;
  EXPECT_FALSE(FileExists(dir + "/x.png"));
}

}  // namespace
}  // namespace tracer
