// Starting a child program without a shell, the one way the runtime does it (run_subprocess,
// WorkerProcess): posix_spawnp with the argument vector as is, chosen descriptors of ours mapped
// onto the child's (every other descriptor of ours is close-on-exec), default signal dispositions
// and an empty signal mask whatever this process set, optionally its own process group (so a
// deadline can kill whatever the child starts too), and our environment with overrides.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace genai::runtime {

// As SpawnRequest::FdMapping::parent_fd: the child's descriptor is /dev/null, opened read-only.
inline constexpr int kSpawnDevNull = -1;

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] absolute, or a name searched on PATH
  // Set in the child's environment, replacing ours of the same name; the rest of ours is kept.
  std::vector<std::pair<std::string, std::string>> env_overrides;
  struct FdMapping {
    int parent_fd = kSpawnDevNull;
    int child_fd = 0;
  };
  std::vector<FdMapping> fds;
  bool new_process_group = true;  // the child leads a new group whose id is its pid
};

// The child's pid. Failure "cannot run <argv[0]>: <reason>" when it cannot be started.
pid_t spawn_process(const SpawnRequest& request);

}  // namespace genai::runtime
