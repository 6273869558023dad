#include "runtime/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

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

}  // namespace

pid_t spawn_process(const SpawnRequest& request) {
  if (request.argv.empty()) throw_failure("internal: running an empty command");
  for (const auto& [k, v] : request.env_overrides)
    if (k.empty() || k.find('=') != std::string::npos)
      throw_failure("internal: running {} with the environment variable name '{}'", request.argv[0], k);
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
