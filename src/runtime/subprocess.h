// Running a helper program (adb) without a shell: the argument vector goes to posix_spawn as is,
// so no argument is ever re-parsed by a shell on this machine. Output is captured.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genai::runtime {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out, err;
};

// Runs argv[0] (an absolute path, or a name searched on PATH) with argv and waits. Failure when
// the program cannot be started at all.
ProcessResult run_subprocess(const std::vector<std::string>& argv);

// The first executable file named `program` in the ':'-separated directory list `path_env`
// (the PATH value); nullopt when there is none.
std::optional<std::filesystem::path> find_on_path(std::string_view program, std::string_view path_env);

}  // namespace genai::runtime
