// The device runner adapter: runs a compiled artifact dir on an Android phone through the adb
// client, as upstream's SimpleADB does. It pushes every artifact of the manifest's artifact map,
// the tokenizer, the manifest and a runner binary (an aarch64 build of genai) to
// /data/local/tmp/genai/<dir name>, runs `genai run -a . <options> --json` there and pulls the
// JSON result back, so the caller reports it exactly like a host run. Every adb invocation is an
// argument vector (posix_spawn, no local shell); the one command line the device's shell parses
// is built from single-quoted arguments.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/artifact_dir.h"

namespace genai::runtime {

inline constexpr std::string_view kDeviceWorkspace = "/data/local/tmp/genai";

struct DeviceTarget {
  std::string serial;  // --device: adb -s SERIAL
  std::string host;    // --host: adb -H HOST ("" = the local adb server)
};

// The adb command lines, as argument vectors (argv[0] = the adb executable).
class AdbCommands {
 public:
  AdbCommands(std::filesystem::path adb, DeviceTarget target);
  std::vector<std::string> devices() const;
  std::vector<std::string> push(const std::filesystem::path& local, const std::string& remote) const;
  std::vector<std::string> pull(const std::string& remote, const std::filesystem::path& local) const;
  // `adb shell` joins its arguments into one command line for the device's sh: each element of
  // `remote_argv` is quoted, `redirects` (e.g. "> out.json") are appended verbatim.
  std::vector<std::string> shell(const std::vector<std::string>& remote_argv, std::string_view cwd = "",
                                 std::string_view redirects = "") const;

 private:
  std::vector<std::string> prefix(bool with_serial) const;
  std::filesystem::path adb_;
  DeviceTarget target_;
};

// POSIX sh single quoting: 'it'\''s' for it's.
std::string shell_quote(std::string_view arg);

// The serials `adb devices` lists with their state ("device", "offline", "unauthorized", ...).
std::vector<std::pair<std::string, std::string>> parse_adb_devices(std::string_view output);

// Where the runner binary comes from: --runner_binary, else genai-aarch64 next to the running
// executable, else build-aarch64/genai beside its folder (scripts/build_aarch64.sh). InputError
// when the file is missing or not an aarch64 ELF executable.
std::filesystem::path resolve_runner_binary(const std::filesystem::path& requested);

// Deadlines of the adb calls: past one, adb and what it started are killed and the run fails
// naming the call. A push gets `push` plus one second per `push_bytes_per_second` of the file.
struct DeviceTimeouts {
  std::chrono::milliseconds devices{std::chrono::seconds(30)};   // adb devices (starts the server)
  std::chrono::milliseconds command{std::chrono::seconds(60)};   // mkdir, chmod, pull
  std::chrono::milliseconds push{std::chrono::seconds(60)};
  uint64_t push_bytes_per_second = 1u << 20;  // slower than any USB 2 link
  std::chrono::milliseconds run{std::chrono::hours(1)};          // the runner on the device
};

struct DeviceRunRequest {
  DeviceTarget target;
  ArtifactDir artifacts;
  std::filesystem::path runner_binary;  // resolved (resolve_runner_binary)
  std::vector<std::string> run_args;    // options forwarded to the device's `genai run` (no -a, no --json)
  std::vector<std::filesystem::path> extra_files;  // pushed too (e.g. a --tokenizer_model file)
  bool skip_push = false;               // --skip_push: the workspace already holds the files
  std::string path_env;                 // PATH to find adb on (the process's PATH when empty)
  DeviceTimeouts timeouts;
};

struct DeviceRunResult {
  nlohmann::json output;  // the device run's --json object
  std::string log;        // its stderr
  std::vector<std::vector<std::string>> commands;  // every adb command line run, in order
};

// Remote workspace of an artifact dir: /data/local/tmp/genai/<dir name>.
std::string device_workspace(const ArtifactDir& artifacts);
// Local files pushed to the workspace: the artifact map's values, the tokenizer (with its
// tokenizer_config.json when there is one), the manifest.
std::vector<std::filesystem::path> files_to_push(const ArtifactDir& artifacts);

// Runs the request. Failure naming the cause when adb is not installed (install the Debian
// package `adb`), a push or the run fails, adb dies by a signal, passes its deadline or writes
// what adb does not write; InputError when the device is not listed or the device's genai
// rejects its input (exit 2).
DeviceRunResult run_on_device(const DeviceRunRequest& request);

}  // namespace genai::runtime
