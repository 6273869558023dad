// Renaming the graphs of a QNN context binary in place (backends/qnn/qnn_graph_rename.h): every
// stored copy of the name, with or without a "PICKLE/256/"-style prefix, gets the new name and
// length while the binary keeps its size and every other byte; a name stored in a form this code
// does not know, a missing graph, or a longer or clashing new name is a Failure that leaves
// nothing half-renamed. (The real QNN compiler's binaries are renamed and run in the QnnLowering
// and ExecuTorch-runtime tests.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/qnn/qnn_graph_rename.h"
#include "core/error.h"

namespace genai::backends::qnn {
namespace {

const std::string kOrtName = "QNNExecutionProvider_QNNExecutionProvider_17914568239579531125_1_0";

void put_u32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A stored string as the binary keeps it: length, prefix + text, NUL, padding to 4 bytes.
void put_string(std::vector<uint8_t>& b, const std::string& prefix, const std::string& text) {
  put_u32(b, static_cast<uint32_t>(prefix.size() + text.size()));
  b.insert(b.end(), prefix.begin(), prefix.end());
  b.insert(b.end(), text.begin(), text.end());
  do b.push_back(0);
  while (b.size() % 4);
}

// Two graphs' names as a QNN 2.51 binary stores them (metadata and graph blob), among other data.
std::vector<uint8_t> two_graph_binary(const std::string& a, const std::string& b) {
  std::vector<uint8_t> bin = {0, 0, 0, 2, 0, 0, 0, 3};
  put_string(bin, "", a);
  put_u32(bin, 0xfffffce2);
  put_string(bin, "", "soc_type=SM8650;arch=75");
  put_string(bin, "", b);
  for (int i = 0; i < 37; ++i) bin.push_back(static_cast<uint8_t>(i * 7));
  put_string(bin, "PICKLE/256/", a);
  put_string(bin, "", a);
  put_string(bin, "PICKLE/256/", b);
  put_string(bin, "", b);
  return bin;
}

TEST(QnnGraphRename, EveryStoredCopyGetsTheMethodNameAndTheSizeStays) {
  const std::string other = "QNNExecutionProvider_QNNExecutionProvider_55555568239579531125_1_0";
  const auto bin = two_graph_binary(kOrtName, other);
  ASSERT_EQ(count_qnn_name_records(bin, kOrtName), 3u);
  const std::vector<QnnGraphRename> renames = {{kOrtName, "kv_forward"}, {other, "prefill_forward"}};
  const auto out = rename_qnn_graphs(bin, renames);
  EXPECT_EQ(out.size(), bin.size());
  EXPECT_EQ(count_qnn_name_records(out, "kv_forward"), 3u);
  EXPECT_EQ(count_qnn_name_records(out, "prefill_forward"), 3u);
  EXPECT_EQ(count_qnn_name_records(out, kOrtName), 0u);
  EXPECT_EQ(count_qnn_name_records(out, other), 0u);
  EXPECT_EQ(count_qnn_name_records(out, "soc_type=SM8650;arch=75"), 1u);
  // Exactly what a binary built with the short names in the same slots would hold.
  std::vector<uint8_t> expected = bin;
  auto rewrite = [&](const std::string& from, const std::string& to) {
    for (size_t at = 0; at + from.size() <= expected.size(); ++at) {
      if (std::equal(from.begin(), from.end(), expected.begin() + static_cast<long>(at))) {
        const bool prefixed = at >= 11 && std::string(expected.begin() + static_cast<long>(at) - 11,
                                                      expected.begin() + static_cast<long>(at)) == "PICKLE/256/";
        const size_t len_at = at - 4 - (prefixed ? 11 : 0);
        const uint32_t len = static_cast<uint32_t>(to.size() + (prefixed ? 11 : 0));
        for (int i = 0; i < 4; ++i) expected[len_at + static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
        std::copy(to.begin(), to.end(), expected.begin() + static_cast<long>(at));
        std::fill(expected.begin() + static_cast<long>(at + to.size()), expected.begin() + static_cast<long>(at + from.size()), 0);
      }
    }
  };
  rewrite(kOrtName, "kv_forward");
  rewrite(other, "prefill_forward");
  EXPECT_EQ(out, expected);
}

TEST(QnnGraphRename, ANameInsideALongerStringIsNotAGraphName) {
  // "x" + name is another string: its tail must neither count nor be renamed.
  std::vector<uint8_t> bin;
  put_string(bin, "", "x" + kOrtName);
  put_string(bin, "", kOrtName);
  EXPECT_EQ(count_qnn_name_records(bin, kOrtName), 1u);
  EXPECT_THROW(rename_qnn_graphs(bin, std::vector<QnnGraphRename>{{kOrtName, "kv_forward"}}), Failure)
      << "an occurrence outside a string of its own must stop the rename";
}

TEST(QnnGraphRename, AnUnknownLayoutAMissingGraphOrABadNewNameIsAFailure) {
  auto bin = two_graph_binary(kOrtName, "other_graph_name_that_is_long_enough");
  auto expect_failure = [&](const std::vector<uint8_t>& b, std::vector<QnnGraphRename> r, const std::string& word) {
    try {
      rename_qnn_graphs(b, r);
      ADD_FAILURE() << "no Failure for " << word;
    } catch (const Failure& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expect_failure(bin, {{"no_such_graph", "kv_forward"}}, "no graph named 'no_such_graph'");
  expect_failure(bin, {{"kv", "kv_forward"}}, "longer than");
  expect_failure(bin, {{kOrtName, ""}}, "empty graph name");
  expect_failure(bin, {{kOrtName, "soc_type=SM8650;arch=75"}}, "already has a string");
  // Two graphs cannot both become one method.
  expect_failure(bin, {{kOrtName, "kv_forward"}, {"other_graph_name_that_is_long_enough", "kv_forward"}},
                 "already has a string");
  // A copy of the name whose length word does not match: not a layout this code knows.
  auto broken = bin;
  for (size_t at = 4; at + kOrtName.size() <= broken.size(); ++at)
    if (std::equal(kOrtName.begin(), kOrtName.end(), broken.begin() + static_cast<long>(at))) {
      broken[at - 4] ^= 0x40;
      break;
    }
  expect_failure(broken, {{kOrtName, "kv_forward"}}, "outside a length-prefixed string");
  // Renaming to the same name changes nothing.
  EXPECT_EQ(rename_qnn_graphs(bin, std::vector<QnnGraphRename>{{kOrtName, kOrtName}}), bin);
}

}  // namespace
}  // namespace genai::backends::qnn
