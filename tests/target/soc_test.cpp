#include "target/soc.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "target/backend_type.h"

namespace genai::target {
namespace {

struct Row {
  const char* name;
  int chipset;
  int arch;
  uint32_t vtcm;
  int lpai;  // 0 = none
};

// Upstream _soc_info_table, written here independently of src/target/soc.cpp.
const Row kExpected[] = {
    {"SA8295", 39, 68, 8, 0},    {"SA8797", 72, 81, 16, 0},   {"SM8350", 30, 68, 4, 0},   {"SM8450", 36, 69, 8, 0},
    {"SM8475", 42, 69, 8, 0},    {"SM8550", 43, 73, 8, 0},    {"SA8255", 52, 73, 8, 0},   {"SM8650", 57, 75, 8, 0},
    {"SM8750", 69, 79, 8, 0},    {"SM8850", 87, 81, 8, 6},    {"SSG2115P", 46, 73, 2, 0}, {"SSG2125P", 58, 73, 2, 0},
    {"SXR1230P", 45, 73, 2, 0},  {"SXR2230P", 53, 69, 8, 0},  {"SXR2330P", 75, 79, 8, 0}, {"QCS9100", 77, 73, 8, 0},
    {"SAR2230P", 95, 81, 4, 6},  {"SW6100", 96, 81, 4, 0},    {"QCM6490", 93, 68, 2, 0},  {"SM8845", 97, 81, 8, 0},
};

TEST(SocTable, MatchesUpstreamTable) {
  ASSERT_EQ(soc_table().size(), std::size(kExpected));
  for (const Row& r : kExpected) {
    SCOPED_TRACE(r.name);
    const SocInfo& s = resolve_soc(r.name);
    EXPECT_EQ(s.name, r.name);
    EXPECT_EQ(static_cast<int>(s.chipset), r.chipset);
    EXPECT_EQ(static_cast<int>(s.htp_arch), r.arch);
    EXPECT_EQ(s.vtcm_mb, r.vtcm);
    EXPECT_EQ(s.lpai.has_value(), r.lpai != 0);
    if (s.lpai) {
      EXPECT_EQ(static_cast<int>(*s.lpai), r.lpai);
    }
    // The table's name is the schema enum's name for that id.
    EXPECT_STREQ(qnn_delegate::EnumNameQcomChipset(s.chipset), r.name);
  }
}

TEST(SocTable, ResolvesAnyLetterCase) {
  EXPECT_EQ(resolve_soc_model("SM8650"), Chipset::SM8650);
  EXPECT_EQ(resolve_soc_model("sm8650"), Chipset::SM8650);
  EXPECT_EQ(resolve_soc_model("Sxr2230p"), Chipset::SXR2230P);
}

TEST(SocTable, UnknownNameListsValidOnes) {
  for (const char* bad : {"SM9999", "", "UNKNOWN_SM", "SM865"}) {
    try {
      resolve_soc_model(bad);
      FAIL() << bad;
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("--soc_model"), std::string::npos) << m;
      EXPECT_NE(m.find("SM8650"), std::string::npos) << m;
      EXPECT_NE(m.find("QCM6490"), std::string::npos) << m;
    }
  }
}

TEST(SocTable, ChipsetLookup) {
  EXPECT_EQ(soc_info(Chipset::SM8750).name, "SM8750");
  EXPECT_THROW(soc_info(Chipset::UNKNOWN_SM), InputError);
  EXPECT_THROW(soc_info(static_cast<Chipset>(1234)), InputError);
}

TEST(SocTable, ArchNames) {
  EXPECT_EQ(htp_arch_name(HtpArch::V75), "V75");
  EXPECT_EQ(htp_arch_name(HtpArch::NONE), "none");
  EXPECT_EQ(htp_arch_name(static_cast<HtpArch>(99)), "unknown(99)");
  EXPECT_EQ(lpai_version_name(LpaiVersion::V6), "V6");
}

TEST(BackendType, NamesComeFromTheEnum) {
  EXPECT_EQ(backend_type_names(), (std::vector<std::string>{"undefined", "gpu", "htp", "dsp", "lpai"}));
  EXPECT_EQ(backend_type_name(BackendType::kLpaiBackend), "lpai");
  EXPECT_EQ(resolve_backend_type("htp"), BackendType::kHtpBackend);
  EXPECT_EQ(resolve_backend_type("GPU"), BackendType::kGpuBackend);
  EXPECT_EQ(resolve_backend_type("dsp"), BackendType::kDspBackend);
  try {
    resolve_backend_type("foo");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "unknown backend type 'foo' for --backend; valid choices: undefined, gpu, htp, dsp, lpai");
  }
}

}  // namespace
}  // namespace genai::target
