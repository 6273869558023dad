// Randomly corrupted copies of real programs (truncations, bit flips, swapped bytes) never crash
// the reader: each is either rejected with an InputError (exit 2 through the CLI) whose message
// names the file, or — when the damage only touched bytes the format treats as opaque data (a
// payload byte, a name's letter) — read as a still-consistent program. Truncations are always
// rejected. The CI runs this suite under ASan+UBSan too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "pte/sample_programs.h"
#include "support/cli_runner.h"
#include "support/sanitizers.h"
#include "support/test_requirements.h"

namespace genai::pte {
namespace {

const std::string kFixtureDir = std::string(GENAI_SOURCE_DIR) + "/../shared/fixtures/pte";

std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::vector<uint8_t>> real_files() {
  std::vector<std::vector<uint8_t>> files;
  const std::string& dir = kFixtureDir;
  for (const char* name : {"add.pte", "ModuleLinear-no-constant-segment.pte"})
    if (std::filesystem::exists(dir + "/" + name)) files.push_back(slurp(dir + "/" + name));
  files.push_back(serialize_program(testing::sample_program(600)));
  return files;
}

enum class Damage { kTruncate, kBitFlips, kSwap };

struct Corruption {
  std::vector<uint8_t> bytes;
  Damage damage;
};

// Most damage lands in the flatbuffer and header (where structure lives); some anywhere.
Corruption corrupt(const std::vector<uint8_t>& original, std::mt19937_64& rng) {
  Corruption c{original, static_cast<Damage>(rng() % 3)};
  auto& b = c.bytes;
  const size_t structural = std::min<size_t>(b.size(), 2048);
  // Draws are sequenced one per statement so every compiler produces the same corruptions.
  auto pos = [&] {
    const bool anywhere = rng() % 4 == 0;
    return static_cast<size_t>(rng() % (anywhere ? b.size() : structural));
  };
  switch (c.damage) {
    case Damage::kTruncate:
      b.resize(static_cast<size_t>(rng() % b.size()));
      break;
    case Damage::kBitFlips: {
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < flips; ++i) {
        const size_t at = pos();
        b[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      }
      break;
    }
    case Damage::kSwap: {
      const size_t n = 1 + static_cast<size_t>(rng() % 8);
      const size_t i = pos();
      const size_t j = pos();
      for (size_t k = 0; k < n && i + k < b.size() && j + k < b.size(); ++k) std::swap(b[i + k], b[j + k]);
      if (b == original) b[i] ^= 0xff;  // swapped equal bytes: make it a real change
      break;
    }
  }
  return c;
}

// `count` corrupt copies of the real files read in process: every one is either rejected with an
// InputError naming the file or still a consistent program.
void corrupt_copies_in_process(int count, uint64_t seed) {
  GENAI_REQUIRE_AVAILABLE(std::filesystem::exists(kFixtureDir), "the upstream fixtures " << kFixtureDir);
  const auto files = real_files();
  std::mt19937_64 rng(seed);
  int rejected = 0, accepted = 0, truncations = 0;
  for (int i = 0; i < count; ++i) {
    const auto& original = files[static_cast<size_t>(i) % files.size()];
    const Corruption c = corrupt(original, rng);
    try {
      const LoadedProgram p = read_program_bytes(c.bytes, "corrupt.pte");
      // Accepted: the damage must have been to opaque bytes; the result is consistent.
      EXPECT_NE(c.damage, Damage::kTruncate) << "copy " << i << ": a truncated file was accepted";
      EXPECT_FALSE(find_program_problem(p.program).has_value());
      ++accepted;
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("corrupt.pte: ", 0), 0u) << msg;
      EXPECT_GT(msg.size(), std::string("corrupt.pte: ").size() + 5) << msg;
      ++rejected;
    }
    truncations += c.damage == Damage::kTruncate;
  }
  EXPECT_EQ(rejected + accepted, count);
  EXPECT_GT(truncations, count / 4);
  // Most damage to structure is detected (the rest hit names, values or payload bytes).
  EXPECT_GT(rejected, count * 7 / 10) << "accepted " << accepted;
  std::printf("corrupt copies: %d rejected with InputError, %d still valid\n", rejected, accepted);
}

TEST(PteCorruption, TwoThousandCorruptCopiesInProcess) { corrupt_copies_in_process(2000, 20261129); }
// The long sweep (ctest -L long).
TEST(PteCorruption, LongHundredThousandCorruptCopiesInProcess) { corrupt_copies_in_process(100000, 20261201); }

// `count` corrupt copies through `genai inspect`: exit 2 naming the file, or exit 0 with valid JSON.
void corrupt_copies_through_the_cli(int count, uint64_t seed) {
  GENAI_REQUIRE_AVAILABLE(std::filesystem::exists(kFixtureDir), "the upstream fixtures " << kFixtureDir);
  const auto files = real_files();
  genai::testing::TempDir dir;
  std::mt19937_64 rng(seed);
  int rejected = 0;
  for (int i = 0; i < count; ++i) {
    const Corruption c = corrupt(files[static_cast<size_t>(i) % files.size()], rng);
    const std::string path = dir.file("c" + std::to_string(i) + ".pte");
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(c.bytes.data()),
                                                 static_cast<std::streamsize>(c.bytes.size()));
    const auto r = genai::testing::run_genai({"inspect", path, "--json"});
    if (r.exit_code == 2) {
      EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
      ++rejected;
    } else {
      ASSERT_EQ(r.exit_code, 0) << "copy " << i << " exit " << r.exit_code << ": " << r.err;
      EXPECT_NE(c.damage, Damage::kTruncate);
      EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
    }
    std::filesystem::remove(path);
  }
  EXPECT_GT(rejected, count * 2 / 3);
  std::printf("CLI: %d of %d corrupt copies exited 2\n", rejected, count);
}

// 300 copies (60 under the sanitizers: testing::rounds).
TEST(PteCorruption, CorruptCopiesThroughTheCli) { corrupt_copies_through_the_cli(genai::testing::rounds(300, 60), 7); }
TEST(PteCorruption, LongThreeThousandCorruptCopiesThroughTheCli) { corrupt_copies_through_the_cli(3000, 8); }

}  // namespace
}  // namespace genai::pte
