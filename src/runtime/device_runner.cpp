#include "runtime/device_runner.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "core/whole_file.h"
#include "runtime/subprocess.h"

namespace genai::runtime {
namespace {

namespace fs = std::filesystem;

constexpr uint16_t kElfMachineAarch64 = 183;  // EM_AARCH64
constexpr const char* kRunnerName = "genai";  // the binary's name in the device workspace

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

AdbCommands::AdbCommands(fs::path adb, DeviceTarget target) : adb_(std::move(adb)), target_(std::move(target)) {}

std::vector<std::string> AdbCommands::prefix(bool with_serial) const {
  std::vector<std::string> argv{adb_.string()};
  if (!target_.host.empty()) argv.insert(argv.end(), {"-H", target_.host});
  if (with_serial && !target_.serial.empty()) argv.insert(argv.end(), {"-s", target_.serial});
  return argv;
}

std::vector<std::string> AdbCommands::devices() const {
  auto argv = prefix(false);
  argv.push_back("devices");
  return argv;
}

std::vector<std::string> AdbCommands::push(const fs::path& local, const std::string& remote) const {
  auto argv = prefix(true);
  argv.insert(argv.end(), {"push", local.string(), remote});
  return argv;
}

std::vector<std::string> AdbCommands::pull(const std::string& remote, const fs::path& local) const {
  auto argv = prefix(true);
  argv.insert(argv.end(), {"pull", remote, local.string()});
  return argv;
}

std::vector<std::string> AdbCommands::shell(const std::vector<std::string>& remote_argv, std::string_view cwd,
                                            std::string_view redirects) const {
  std::string line;
  if (!cwd.empty()) line = "cd " + shell_quote(cwd) + " && ";
  for (size_t i = 0; i < remote_argv.size(); ++i) line += (i ? " " : "") + shell_quote(remote_argv[i]);
  if (!redirects.empty()) line += " " + std::string(redirects);
  auto argv = prefix(true);
  argv.insert(argv.end(), {"shell", line});
  return argv;
}

std::string shell_quote(std::string_view arg) {
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::vector<std::pair<std::string, std::string>> parse_adb_devices(std::string_view output) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in{std::string(output)};
  std::string line;
  while (std::getline(in, line)) {
    line = trimmed(line);
    if (line.empty() || line.rfind("List of devices", 0) == 0 || line.rfind("* ", 0) == 0) continue;
    std::istringstream fields(line);
    std::string serial, state;
    if (fields >> serial >> state) out.emplace_back(serial, state);
  }
  return out;
}

fs::path resolve_runner_binary(const fs::path& requested) {
  fs::path p = requested;
  if (p.empty()) {
    // genai-aarch64 next to this genai, else the static build of scripts/build_aarch64.sh in
    // build-aarch64/ beside this genai's build folder.
    std::error_code ec;
    std::vector<fs::path> candidates;
    if (const std::optional<fs::path> self = this_executable()) {
      candidates.push_back(self->parent_path() / "genai-aarch64");
      candidates.push_back(self->parent_path().parent_path() / "build-aarch64" / "genai");
    }
    for (const auto& c : candidates)
      if (fs::is_regular_file(c, ec)) {
        p = c;
        break;
      }
    if (p.empty())
      throw_input_error(
          "no runner binary for the device: pass --runner_binary PATH (a static aarch64 genai: bash "
          "scripts/build_aarch64.sh -- genai), or place one at {}",
          candidates.empty() ? "genai-aarch64 next to genai" : fmt::format("{} or {}", candidates[0].string(), candidates[1].string()));
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) throw_input_error("--runner_binary {}: cannot be read", p.string());
  unsigned char h[20] = {};
  in.read(reinterpret_cast<char*>(h), sizeof h);
  const bool elf = in.gcount() == sizeof h && h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F';
  const uint16_t machine = static_cast<uint16_t>(h[18] | (h[19] << 8));  // little-endian e_machine
  if (!elf || h[4] != 2 || h[5] != 1 || machine != kElfMachineAarch64)
    throw_input_error("--runner_binary {}: not an aarch64 (arm64) ELF executable; the phone cannot run it", p.string());
  return p;
}

std::string device_workspace(const ArtifactDir& artifacts) {
  std::string name = artifacts.dir.filename().string();
  if (name.empty()) name = artifacts.dir.parent_path().filename().string();  // a path ending in '/'
  if (name.empty() || name == "." || name == "..") name = "artifacts";
  return fmt::format("{}/{}", kDeviceWorkspace, name);
}

std::vector<fs::path> files_to_push(const ArtifactDir& artifacts) {
  std::vector<fs::path> files;
  for (const auto& [key, path] : artifacts.artifacts) files.push_back(path);
  if (artifacts.tokenizer_path) {
    files.push_back(*artifacts.tokenizer_path);
    // A tokenizer.json reads its chat template and special tokens from tokenizer_config.json beside it.
    const fs::path config = artifacts.tokenizer_path->parent_path() / "tokenizer_config.json";
    std::error_code ec;
    if (artifacts.tokenizer_path->filename() == "tokenizer.json" && fs::is_regular_file(config, ec)) files.push_back(config);
  }
  files.push_back(artifacts.dir / "manifest.json");
  return files;
}

DeviceRunResult run_on_device(const DeviceRunRequest& req) {
  DeviceRunResult result;
  const char* env_path = std::getenv("PATH");
  const std::string path_env = !req.path_env.empty() ? req.path_env : env_path ? env_path : "";
  const auto adb = find_on_path("adb", path_env);
  if (!adb)
    throw_failure("--device needs the adb client, which is not on PATH; install it (Debian/Ubuntu: apt-get install adb)");
  const AdbCommands cmd(*adb, req.target);
  const std::string where = req.target.host.empty() ? std::string() : fmt::format(" on adb host {}", req.target.host);

  const DeviceTimeouts& limits = req.timeouts;
  auto run = [&](const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    result.commands.push_back(argv);
    log::debug("adb: {}", fmt::join(argv, " "));
    return run_subprocess(argv, timeout);
  };
  // What went wrong with one adb call, with what it printed (escaped: it may be garbage).
  auto failed = [](const ProcessResult& r, const std::string& log = "") {
    const std::string text = printable_tail(log.empty() ? r.err + r.out : log);
    return fmt::format("({}){}{}", r.describe(), text.empty() ? "" : ": ", text);
  };

  const auto listed = run(cmd.devices(), limits.devices);
  if (!listed.ok()) throw_failure("adb: `adb devices`{} failed {}", where, failed(listed));
  // adb always prints this header; output without it is not adb's and cannot be trusted.
  if (!trimmed(listed.out).empty() && listed.out.find("List of devices attached") == std::string::npos)
    throw_failure("adb: `adb devices`{} wrote output that is not a device list: {}", where, printable_tail(listed.out, 200));
  const auto devices = parse_adb_devices(listed.out);
  std::string known;
  const std::pair<std::string, std::string>* found = nullptr;
  for (const auto& d : devices) {
    known += (known.empty() ? "" : ", ") + d.first + " (" + d.second + ")";
    if (d.first == req.target.serial) found = &d;
  }
  if (!found)
    throw_input_error("--device {}: not listed by `adb devices`{} (listed: {})", req.target.serial, where,
                      known.empty() ? "none" : known);
  if (found->second != "device")
    throw_failure("--device {}: adb lists it as '{}', not ready ('device'); unlock it and accept USB debugging",
                  req.target.serial, found->second);

  const std::string ws = device_workspace(req.artifacts);
  if (!req.skip_push) {
    auto mk = run(cmd.shell({"mkdir", "-p", ws}), limits.command);
    if (!mk.ok()) throw_failure("--device {}: adb shell cannot create {} {}", req.target.serial, ws, failed(mk));
    std::vector<std::pair<fs::path, std::string>> pushes;
    for (const auto& f : files_to_push(req.artifacts)) pushes.emplace_back(f, ws + "/" + f.filename().string());
    for (const auto& f : req.extra_files) pushes.emplace_back(f, ws + "/" + f.filename().string());
    pushes.emplace_back(req.runner_binary, ws + "/" + kRunnerName);
    for (const auto& [local, remote] : pushes) {
      std::error_code ec;
      const uint64_t bytes = fs::file_size(local, ec);
      const auto timeout = limits.push + std::chrono::milliseconds(ec ? 0 : bytes * 1000 / std::max<uint64_t>(1, limits.push_bytes_per_second));
      const auto r = run(cmd.push(local, remote), timeout);
      if (!r.ok())
        throw_failure("--device {}: adb push failed pushing {} to {} {}", req.target.serial, local.string(), remote, failed(r));
    }
    const auto ch = run(cmd.shell({"chmod", "755", ws + "/" + kRunnerName}), limits.command);
    if (!ch.ok()) throw_failure("--device {}: adb shell cannot make the runner executable {}", req.target.serial, failed(ch));
  }

  std::vector<std::string> remote{std::string("./") + kRunnerName, "run", "-a", "."};
  remote.insert(remote.end(), req.run_args.begin(), req.run_args.end());
  remote.push_back("--json");
  const auto ran = run(cmd.shell(remote, ws, "> run.json 2> run.log"), limits.run);

  // Results come back as files, whatever the exit status, so a failure can show the device's log.
  char tmpl[] = "/tmp/genai-device-XXXXXX";
  if (!mkdtemp(tmpl)) throw_failure("cannot create a temporary directory for the device results");
  const fs::path local(tmpl);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{local};
  const auto got_log = run(cmd.pull(ws + "/run.log", local / "run.log"), limits.command);
  if (got_log.ok()) result.log = read_whole_file(local / "run.log").value_or("");
  if (!ran.ok()) {
    const std::string msg = fmt::format("--device {}: adb shell running genai there: the runner failed {}", req.target.serial,
                                        failed(ran, result.log));
    if (ran.exit_code == 2 && ran.signal == 0 && !ran.timed_out) throw InputError(msg);
    throw Failure(msg);
  }
  const auto got = run(cmd.pull(ws + "/run.json", local / "run.json"), limits.command);
  if (!got.ok()) throw_failure("--device {}: adb pull failed pulling {}/run.json {}", req.target.serial, ws, failed(got));
  try {
    result.output = nlohmann::json::parse(read_whole_file(local / "run.json").value_or(""));
  } catch (const nlohmann::json::exception& e) {
    throw_failure("--device {}: the runner's output {}/run.json is not JSON: {}", req.target.serial, ws, e.what());
  }
  if (!result.output.is_object() || !result.output.contains("stats"))
    throw_failure("--device {}: the runner's output has no stats", req.target.serial);
  return result;
}

}  // namespace genai::runtime
