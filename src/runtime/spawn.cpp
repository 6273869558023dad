#include "runtime/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/error.h"

extern char** environ;

namespace genai::runtime {
namespace {

// posix_spawn's two attribute objects, destroyed on every path out.
struct SpawnAttributes {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnAttributes() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnAttributes() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
};

// "NAME=value" strings: ours without the overridden names, then the overrides.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& [k, v] : overrides) overridden = overridden || k == name;
    if (!overridden) env.emplace_back(entry);
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  return env;
}

// 0 when `program` names an executable file the way posix_spawnp looks for it (a path as it is,
// a bare name on our PATH), else the errno that running it would give. posix_spawnp reports
// that too, but only where the C library learns of the child's exec failure before returning:
// under qemu-user (the aarch64 tests) the child just exits 127.
int program_error(const std::string& program) {
  const auto runnable = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno;
    if (!S_ISREG(st.st_mode)) return EACCES;
    return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
  };
  if (program.find('/') != std::string::npos) return runnable(program);
  const char* path = std::getenv("PATH");
  const std::string_view dirs = path ? path : "/bin:/usr/bin";
  int error = ENOENT;
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir(dirs.substr(start, end - start));
    const int e = runnable((dir.empty() ? std::string(".") : dir) + "/" + program);
    if (e == 0) return 0;
    if (e != ENOENT && e != ENOTDIR) error = e;
    start = end + 1;
  }
  return error;
}

}  // namespace

pid_t spawn_process(const SpawnRequest& request) {
  if (request.argv.empty()) throw_failure("internal: running an empty command");
  for (const auto& [k, v] : request.env_overrides)
    if (k.empty() || k.find('=') != std::string::npos)
      throw_failure("internal: running {} with the environment variable name '{}'", request.argv[0], k);
  if (const int e = program_error(request.argv[0]); e != 0)
    throw_failure("cannot run {}: {}", request.argv[0], std::strerror(e));
  SpawnAttributes s;
  for (const auto& m : request.fds) {
    if (m.parent_fd == kSpawnDevNull) posix_spawn_file_actions_addopen(&s.actions, m.child_fd, "/dev/null", O_RDONLY, 0);
    else posix_spawn_file_actions_adddup2(&s.actions, m.parent_fd, m.child_fd);
  }
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &all);
  if (request.new_process_group) {
    posix_spawnattr_setpgroup(&s.attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&s.attr, flags);

  std::vector<char*> args;
  for (const auto& a : request.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage;
  std::vector<char*> env_pointers;
  char** env = environ;
  if (!request.env_overrides.empty()) {
    env_storage = child_environment(request.env_overrides);
    for (auto& e : env_storage) env_pointers.push_back(e.data());
    env_pointers.push_back(nullptr);
    env = env_pointers.data();
  }
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, request.argv[0].c_str(), &s.actions, &s.attr, args.data(), env);
  if (rc != 0) throw_failure("cannot run {}: {}", request.argv[0], std::strerror(rc));
  return pid;
}

}  // namespace genai::runtime
