// The device runner adapter without a phone: the adb command lines it builds, the quoting of the
// one line the device's shell parses, and the failure paths (no adb, no device, failed push,
// failing runner) with fake adb scripts on a private PATH; one fake adb that behaves like a
// device checks the whole push / run / pull sequence.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "core/error.h"
#include "runtime/device_runner.h"
#include "runtime/subprocess.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"

namespace genai {
namespace {

using runtime::AdbCommands;
using Argv = std::vector<std::string>;

TEST(DeviceRunner, BuildsAdbCommandLinesAsArgumentVectors) {
  const AdbCommands local("/usr/bin/adb", {"R58M123", ""});
  EXPECT_EQ(local.devices(), (Argv{"/usr/bin/adb", "devices"}));
  EXPECT_EQ(local.push("/art/text_decoder.pte", "/data/local/tmp/genai/art/text_decoder.pte"),
            (Argv{"/usr/bin/adb", "-s", "R58M123", "push", "/art/text_decoder.pte",
                  "/data/local/tmp/genai/art/text_decoder.pte"}));
  EXPECT_EQ(local.pull("/data/local/tmp/genai/art/run.json", "/tmp/x/run.json"),
            (Argv{"/usr/bin/adb", "-s", "R58M123", "pull", "/data/local/tmp/genai/art/run.json", "/tmp/x/run.json"}));
  const AdbCommands remote("/usr/bin/adb", {"R58M123", "lab-host"});
  EXPECT_EQ(remote.devices(), (Argv{"/usr/bin/adb", "-H", "lab-host", "devices"}));
  EXPECT_EQ(remote.shell({"./genai", "run", "-a", ".", "--prompt=it's $HOME", "--json"}, "/data/local/tmp/genai/art",
                         "> run.json 2> run.log"),
            (Argv{"/usr/bin/adb", "-H", "lab-host", "-s", "R58M123", "shell",
                  "cd '/data/local/tmp/genai/art' && './genai' 'run' '-a' '.' '--prompt=it'\\''s $HOME' '--json' > "
                  "run.json 2> run.log"}));
}

TEST(DeviceRunner, QuotingKeepsEveryArgumentLiteralForTheDeviceShell) {
  const Argv args{"printf", "%s|", "a b", "it's", "$(echo pwned)", "`id`", "\"q\"\n2", "; rm -rf /", ""};
  const AdbCommands cmd("adb", {"S", ""});
  const std::string line = cmd.shell(args).back();
  const auto r = runtime::run_subprocess({"sh", "-c", line});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "a b|it's|$(echo pwned)|`id`|\"q\"\n2|; rm -rf /||");
  EXPECT_EQ(runtime::shell_quote("it's"), "'it'\\''s'");
}

TEST(DeviceRunner, ParsesAdbDevices) {
  const auto d = runtime::parse_adb_devices(
      "* daemon not running; starting now at tcp:5037\n* daemon started successfully\nList of devices attached\n"
      "R58M123\tdevice\nemulator-5554\toffline\n0123\tunauthorized\n\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], (std::pair<std::string, std::string>{"R58M123", "device"}));
  EXPECT_EQ(d[1].second, "offline");
  EXPECT_EQ(d[2].second, "unauthorized");
  EXPECT_TRUE(runtime::parse_adb_devices("List of devices attached\n\n").empty());
}

TEST(DeviceRunner, FindsProgramsOnAGivenPath) {
  testing::TempDir dir;
  testing::write_file(dir.file("adb"), "#!/bin/sh\n", true);
  testing::write_file(dir.file("notexec"), "x");
  EXPECT_EQ(runtime::find_on_path("adb", "/nonexistent:" + dir.path()), std::filesystem::path(dir.file("adb")));
  EXPECT_FALSE(runtime::find_on_path("notexec", dir.path()));
  EXPECT_FALSE(runtime::find_on_path("adb", ""));
  EXPECT_FALSE(runtime::find_on_path("adb", "/nonexistent"));
}

TEST(DeviceRunner, RunnerBinaryMustBeAnAarch64Elf) {
  testing::TempDir dir;
  std::string elf(64, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;  // 64-bit
  elf[5] = 1;  // little-endian
  elf[18] = static_cast<char>(183);  // EM_AARCH64
  testing::write_file(dir.file("genai-arm64"), elf);
  EXPECT_EQ(runtime::resolve_runner_binary(dir.file("genai-arm64")), std::filesystem::path(dir.file("genai-arm64")));
  elf[18] = 62;  // EM_X86_64
  testing::write_file(dir.file("genai-x86"), elf);
  for (const std::string& bad : {dir.file("genai-x86"), dir.file("missing")}) {
    try {
      runtime::resolve_runner_binary(bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  testing::write_file(dir.file("script"), "#!/bin/sh\necho hi\n");
  EXPECT_THROW(runtime::resolve_runner_binary(dir.file("script")), InputError);
}

// An artifact dir with two programs and a tokenizer, and a fake aarch64 runner binary.
struct DeviceFixture {
  testing::TempDir tmp;
  std::string art, bin, path;
  runtime::DeviceRunRequest req;
  DeviceFixture() {
    art = tmp.file("my_model");
    bin = tmp.file("bin");
    std::filesystem::create_directories(art);
    std::filesystem::create_directories(bin);
    path = bin;
    req.target = {"R58M123", ""};
    req.artifacts.dir = art;
    req.artifacts.artifacts[pipeline::ArtifactKey::kTextDecoder] = art + "/text_decoder.pte";
    req.artifacts.artifacts[pipeline::ArtifactKey::kTokEmbedding] = art + "/tok_embedding.pte";
    req.artifacts.tokenizer_path = art + "/tokenizer.json";
    req.runner_binary = tmp.file("genai-aarch64");
    req.run_args = {"--prompt=hi", "--max_new_tokens=4"};
    req.path_env = bin;
  }
  // A fake adb: logs each call (one argument a line, then "--"), answers `devices` with
  // `devices_out`, and runs `body` (sh) for everything else with $1.. = the command after -H/-s.
  void fake_adb(const std::string& devices_out, const std::string& body) {
    testing::write_file(bin + "/adb",
               "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + tmp.file("adb.log") +
                   "'; done\necho -- >> '" + tmp.file("adb.log") +
                   "'\nwhile [ \"$1\" = -H ] || [ \"$1\" = -s ]; do shift 2; done\n"
                   "if [ \"$1\" = devices ]; then printf '" + devices_out + "'; exit 0; fi\n" + body + "\n",
               true);
  }
  std::string log() const {
    std::ifstream in(tmp.file("adb.log"));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

template <typename E>
std::string expect_throw(const runtime::DeviceRunRequest& req, const std::vector<std::string>& words) {
  try {
    runtime::run_on_device(req);
  } catch (const E& e) {
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "ran without " << words.front();
  return "";
}

TEST(DeviceRunner, WithoutAdbSaysToInstallIt) {
  DeviceFixture f;
  expect_throw<Failure>(f.req, {"adb", "not on PATH", "apt-get install adb"});
}

TEST(DeviceRunner, AnUnlistedOrUnreadyDeviceIsNamed) {
  DeviceFixture f;
  f.fake_adb("List of devices attached\\nOTHER99\\tdevice\\n", "exit 0");
  expect_throw<InputError>(f.req, {"--device R58M123", "not listed by `adb devices`", "OTHER99 (device)"});
  f.fake_adb("List of devices attached\\n", "exit 0");
  expect_throw<InputError>(f.req, {"(listed: none)"});
  f.fake_adb("List of devices attached\\nR58M123\\tunauthorized\\n", "exit 0");
  expect_throw<Failure>(f.req, {"R58M123", "'unauthorized'"});
  f.req.target.host = "lab-host";
  f.fake_adb("", "exit 0");
  expect_throw<InputError>(f.req, {"on adb host lab-host"});
  EXPECT_NE(f.log().find("-H\nlab-host\ndevices\n--\n"), std::string::npos) << f.log();
}

TEST(DeviceRunner, AFailedPushNamesTheFile) {
  DeviceFixture f;
  f.fake_adb("List of devices attached\\nR58M123\\tdevice\\n",
             "if [ \"$1\" = push ] && [ \"${2##*/}\" = tok_embedding.pte ]; then echo 'adb: error: no space left' >&2; exit 1; fi\n"
             "exit 0");
  expect_throw<Failure>(f.req, {"pushing " + f.art + "/tok_embedding.pte", "/data/local/tmp/genai/my_model/tok_embedding.pte",
                                "no space left"});
}

TEST(DeviceRunner, PushesRunsAndPullsTheResult) {
  DeviceFixture f;
  f.fake_adb("List of devices attached\\nR58M123\\tdevice\\n",
             "if [ \"$1\" = pull ]; then case \"$2\" in\n"
             "  */run.json) printf '{\"text\": \"hello\", \"tokens\": [1, 2], \"stats\": {\"decode_tok_s\": 9.5}}' > \"$3\";;\n"
             "  */run.log) printf 'device log' > \"$3\";;\n"
             "esac; fi\nexit 0");
  const auto r = runtime::run_on_device(f.req);
  EXPECT_EQ(r.output["text"], "hello");
  EXPECT_EQ(r.output["stats"]["decode_tok_s"], 9.5);
  EXPECT_EQ(r.log, "device log");
  const std::string adb = f.bin + "/adb", ws = "/data/local/tmp/genai/my_model";
  const AdbCommands c(adb, f.req.target);
  ASSERT_EQ(r.commands.size(), 11u);
  EXPECT_EQ(r.commands[0], c.devices());
  EXPECT_EQ(r.commands[1], c.shell({"mkdir", "-p", ws}));
  // The artifact map's values, the tokenizer, the manifest, then the runner.
  EXPECT_EQ(r.commands[2], c.push(f.art + "/text_decoder.pte", ws + "/text_decoder.pte"));
  EXPECT_EQ(r.commands[3], c.push(f.art + "/tok_embedding.pte", ws + "/tok_embedding.pte"));
  EXPECT_EQ(r.commands[4], c.push(f.art + "/tokenizer.json", ws + "/tokenizer.json"));
  EXPECT_EQ(r.commands[5], c.push(f.art + "/manifest.json", ws + "/manifest.json"));
  EXPECT_EQ(r.commands[6], c.push(f.tmp.file("genai-aarch64"), ws + "/genai"));
  EXPECT_EQ(r.commands[7], c.shell({"chmod", "755", ws + "/genai"}));
  EXPECT_EQ(r.commands[8],
            c.shell({"./genai", "run", "-a", ".", "--prompt=hi", "--max_new_tokens=4", "--json"}, ws, "> run.json 2> run.log"));
  // Results come back through a private temporary directory.
  EXPECT_EQ(Argv(r.commands[9].begin(), r.commands[9].begin() + 5), (Argv{adb, "-s", "R58M123", "pull", ws + "/run.log"}));
  EXPECT_EQ(Argv(r.commands[10].begin(), r.commands[10].begin() + 5), (Argv{adb, "-s", "R58M123", "pull", ws + "/run.json"}));
  // What the fake adb received is exactly those vectors (no shell re-splitting on this side).
  EXPECT_NE(f.log().find("-s\nR58M123\nshell\ncd '/data/local/tmp/genai/my_model' && './genai' 'run' '-a' '.' "
                         "'--prompt=hi' '--max_new_tokens=4' '--json' > run.json 2> run.log\n--\n"),
            std::string::npos)
      << f.log();

  // --skip_push: straight to the run.
  f.req.skip_push = true;
  const auto s = runtime::run_on_device(f.req);
  ASSERT_EQ(s.commands.size(), 4u);
  EXPECT_EQ(s.commands[1][3], "shell");
}

TEST(DeviceRunner, AFailingRunnerReportsTheDeviceLog) {
  DeviceFixture f;
  f.fake_adb("List of devices attached\\nR58M123\\tdevice\\n",
             "if [ \"$1\" = shell ]; then case \"$2\" in *./genai*) exit 2;; esac; fi\n"
             "if [ \"$1\" = pull ]; then printf 'error: tokenizer.json: vocabulary mismatch' > \"$3\"; fi\nexit 0");
  expect_throw<InputError>(f.req, {"the runner failed (exit 2)", "vocabulary mismatch"});
}

}  // namespace
}  // namespace genai
