// The committed fuzz seeds (fuzz/corpus/pte_reader) are programs our writer produced; they must
// stay readable. Regenerate them with
//   test_pte --gtest_also_run_disabled_tests --gtest_filter='PteFuzzSeeds.DISABLED_Write'
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "pte/sample_programs.h"
#include "support/test_requirements.h"

namespace genai::pte {
namespace {

const std::filesystem::path kSeedDir = std::filesystem::path(GENAI_SOURCE_DIR) / "fuzz/corpus/pte_reader";

std::vector<std::pair<std::string, std::vector<uint8_t>>> seed_programs() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  out.emplace_back("sample.pte", serialize_program(testing::sample_program(300)));
  WriteOptions inline_payloads;
  inline_payloads.extract_delegate_segments = false;
  inline_payloads.segment_alignment = 16;
  out.emplace_back("sample_inline.pte", serialize_program(testing::sample_program(200), inline_payloads));
  Program kernels;
  kernels.methods.push_back(testing::kernels_method());
  out.emplace_back("kernels.pte", serialize_program(kernels));
  Program getters;
  getters.methods.push_back(make_constant_method("get_max_seq_len", Int{512}));
  getters.methods.push_back(make_constant_list_method("get_eos_ids", {Int{2}, Int{7}}));
  out.emplace_back("getters.pte", serialize_program(getters));
  Program delegated;
  const Blob payload(testing::pattern_bytes(128, 3));
  delegated.methods.push_back(testing::delegated_method("kv_forward", 1, payload));
  delegated.methods.push_back(testing::delegated_method("prefill_forward", 8, payload));
  delegated.named_data.push_back({"w", Blob(testing::pattern_bytes(64, 4))});
  out.emplace_back("delegated.pte", serialize_program(delegated));
  return out;
}

TEST(PteFuzzSeeds, CommittedSeedsAreValidAndSmall) {
  GENAI_REQUIRE_AVAILABLE(std::filesystem::exists(kSeedDir), "the seed dir " << kSeedDir);
  size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSeedDir)) {
    EXPECT_LT(entry.file_size(), 20u * 1024) << entry.path();
    EXPECT_NO_THROW(read_program(entry.path())) << entry.path();
    ++seen;
  }
  EXPECT_GE(seen, seed_programs().size());
}

TEST(PteFuzzSeeds, DISABLED_Write) {
  std::filesystem::create_directories(kSeedDir);
  for (const auto& [name, bytes] : seed_programs()) {
    std::ofstream(kSeedDir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

}  // namespace
}  // namespace genai::pte
