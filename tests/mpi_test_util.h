// @file mpi_test_util.h: starting `mpirun ... tracer` jobs from the MPI tests (mpi_test.cpp on the CPU backend,
// mpi_gpu_test.cpp on the GPU). The launcher flags are Open MPI's, as CI installs it; TRACER_MPIEXEC and TRACER_EXE
// come from tests/CMakeLists.txt.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace tracer::test {

inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
inline size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}
inline std::string Scene(const char* name) { return ProjectScenesDir() + "/" + name; }

// The launcher with Open MPI's flags for a test machine: as root, more ranks than cores. Shared-memory transfers
// without cross-memory attach, which containers often forbid (ptrace).
inline std::string Launcher() {
  return std::string(TRACER_MPIEXEC) +
         " --allow-run-as-root --oversubscribe --mca btl_vader_single_copy_mechanism none";
}
inline std::string Mpi(int ranks, const std::string& args) {
  return Launcher() + " -np " + std::to_string(ranks) + " " + TRACER_EXE + " " + args;
}
// Multiple program, multiple data: one rank per entry, each "launcher options|tracer arguments".
inline std::string Mpmd(const std::vector<std::pair<std::string, std::string>>& ranks) {
  std::string cmd = Launcher();
  for (size_t i = 0; i < ranks.size(); ++i)
    cmd += std::string(i ? " : " : " ") + "-np 1 " + ranks[i].first + " " + TRACER_EXE + " " + ranks[i].second;
  return cmd;
}

// SIGTERM first, which mpirun turns into ending the job; SIGKILL 10 s later.
inline CommandResult RunJob(const std::string& command, int timeoutSeconds = 120) {
  return RunCommand("timeout -k 10 " + std::to_string(timeoutSeconds) + " " + command);
}

}  // namespace tracer::test
