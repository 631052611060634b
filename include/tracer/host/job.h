// @file job.h: the processes that render one frame together. Job itself is one process alone, as tracer runs
// without mpirun; under mpirun, MpiJob (mpi_driver.h) is the ranks of the MPI job. The commands ask the job, not
// MPI: only the root (rank 0) reads the scene, prints progress and writes files, and the other ranks receive the
// scene from it and render the passes its dispatcher hands out.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tracer/host/backends.h"  // DeviceSceneOffer
#include "tracer/host/exit_code.h"
#include "tracer/host/pass_driver.h"

namespace tracer {

struct SceneData;

class Job {
 public:
  virtual ~Job() = default;
  virtual int Rank() const { return 0; }
  virtual int Ranks() const { return 1; }
  bool IsRoot() const { return Rank() == 0; }
  // The rank among those on this node (picks the GPU: local rank modulo the visible devices).
  virtual int LocalRank() const { return 0; }
  // Every process's outcome of a step that may fail, made one: each passes kContinue or an exit code, and all
  // get the root's code when it is not kContinue, else the code of the first rank that failed (the root
  // names it), else kContinue.
  virtual int Agree(int code) { return code; }
  // Every rank gets the root's values (settings only the root read, such as a scene file's render defaults).
  virtual void ShareInts(std::vector<int>& values) { (void)values; }
  // Refuses (exit code 1 on every rank, after the root said which rank differs and how) inputs that differ
  // between the ranks: the scene file where a rank can read it, the tracer build, the command line.
  virtual int CheckSameInputs(const std::string& scenePath, int argc, char** argv) {
    (void)scenePath, (void)argc, (void)argv;
    return kContinue;
  }
  // The root runs `load` (which fills `data` and returns kContinue or an exit code; its exceptions end every
  // rank with exit code 1 after the root printed them); then every rank holds the root's `data`. Alone: load().
  // The root may still be sending `data` when ShareScene returns, so that it can start rendering: until
  // SceneSent() returns, it only reads `data`, and it calls SceneSent() before `data` goes away.
  //
  // `deviceScene` (a render on the GPU without the tile guide): the root will offer its device scene
  // (OfferDeviceScene), and a rank that can take it (a GPU renderer ready, on the root's node) may return from
  // ShareScene with only RootDeviceScene() while its `data` is still on its way: it reads `data` only after
  // SceneSent() (or WaitForScene()), and copies the scene from the root's GPU meanwhile.
  virtual int ShareScene(const std::function<int()>& load, SceneData& data, bool deviceScene) {
    (void)data, (void)deviceScene;
    return load();
  }
  // The root, in a render that asked ShareScene for `deviceScene`, once: its GPU renderer's scene for the ranks
  // that take it (empty bytes when it renders otherwise); SceneSent() offers nothing if this never came. The
  // offer's device memory is kept until SceneSent().
  virtual void OfferDeviceScene(DeviceSceneOffer offer) { (void)offer; }
  // Another rank: the root's offer, when ShareScene returned with it (`data` not yet complete); empty otherwise.
  virtual const std::vector<unsigned char>& RootDeviceScene() const;
  // Another rank: until `data` has arrived whole (at once where ShareScene returned with it); the root: nothing.
  virtual void WaitForScene() {}
  // Before ShareScene, while the other ranks wait for the root to load: what the ranks will sum their films of
  // width x height pixels in (MPI: a shared-memory window on each node). Alone: nothing.
  virtual void PrepareFilm(int width, int height) { (void)width, (void)height; }
  // The root: until it has sent the scene (ShareScene); another rank: WaitForScene(); alone: at once.
  virtual void SceneSent() {}
  // The schedule of a render's passes: null alone (RunPasses's own). `bar` draws the progress of the whole
  // job on the root; `signal` says which signal this process received (0: none).
  virtual std::unique_ptr<PassSchedule> MakeSchedule(const RenderOptions& options, const ProgressFn& bar,
                                                     const std::function<int()>& signal) {
    (void)options, (void)bar, (void)signal;
    return nullptr;
  }
  // After a render with MakeSchedule's schedule: the signal that stopped any rank (0: none).
  virtual int Signal() const { return 0; }
  // On the root, unless quiet: per rank and in total, and the times of the distributed steps (writeSeconds: the
  // root's writing of the checkpoint and the image).
  virtual void Report(double writeSeconds) { (void)writeSeconds; }
  // --profile / --benchmark: each rank's optimised samples/s, summed on the root and reported per rank.
  virtual void ReportThroughput(double samplesPerSecond) { (void)samplesPerSecond; }
  // The root's exit code, for every rank (so that mpirun exits with it).
  virtual int FinalCode(int code) { return code; }
  // Prints `message` naming this rank and ends every rank with a non-zero exit status, at once. Alone: exit(1).
  [[noreturn]] virtual void Abort(const std::string& message);
};

// The number of processes an MPI launcher (mpirun, mpiexec, srun) started this one among: 0 when none did,
// -1 when one did without saying how many. Read from the launcher's environment, without MPI.
int LauncherRanks();

}  // namespace tracer
