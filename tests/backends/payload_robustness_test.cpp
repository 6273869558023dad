// A payload comes from a file: bit flips, truncation and missing or resized named data must end
// in an InputError naming the label (or, when the damage still describes a consistent program,
// in a run that stays inside its buffers), never in a crash. Run under ASan/UBSan by CI.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "backend_test_util.h"
#include "backends/lower/kv_fusion.h"
#include "backends/payload/payload_format.h"
#include "core/error.h"

namespace genai::backends_testing {
namespace {

class PayloadRobustness : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backends::register_builtin_backends();
    const auto model = block_friendly_model(3);
    q_ = new quant::QuantizedModel(quantize(model, "16a4w_block:32", graph::ModelMode::kHybrid, 16, 4));
  }
  static void TearDownTestSuite() {
    delete q_;
    q_ = nullptr;
  }
  static quant::QuantizedModel* q_;

  // Initialises `payload` and, when that succeeds, runs it once on valid-size buffers.
  // Returns true when init rejected it (with the label in the message).
  static bool init_and_run(const pte::Blob& payload, const std::map<std::string, pte::NamedData>& named,
                           const std::string& label) {
    const auto* ex = runtime::find_backend_executor("GenaiHtpBackend");
    std::unique_ptr<runtime::DelegateMethod> m;
    try {
      m = ex->init(payload, {}, lookup_of(named), method_labelled(label));
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(label), std::string::npos) << e.what();
      return true;
    }
    if (m->scratch_bytes() > (uint64_t{1} << 28)) return false;  // a flipped size: not worth allocating
    std::vector<std::vector<uint8_t>> in, out;
    std::vector<runtime::BufferRef> ib, ob;
    for (const auto& io : m->inputs()) {
      std::vector<uint8_t> b(static_cast<size_t>(shape_numel(io.shape)) * dtype_size(io.dtype), 0);
      in.push_back(std::move(b));
    }
    for (const auto& io : m->outputs())
      out.emplace_back(static_cast<size_t>(shape_numel(io.shape)) * dtype_size(io.dtype), 0);
    for (auto& b : in) ib.push_back({b.data(), b.size()});
    for (auto& b : out) ob.push_back({b.data(), b.size()});
    std::vector<uint64_t> scratch(m->scratch_bytes() / 8 + 16);
    uint8_t* base = reinterpret_cast<uint8_t*>(scratch.data());
    base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
    try {
      m->execute(ib, ob, std::span<uint8_t>(base, m->scratch_bytes()));
    } catch (const Error&) {
      // An index input out of range after damage is an InputError at run time: fine.
    }
    return false;
  }

  // Every flip either runs or is an InputError (never a crash); the share rejected is what the
  // verifier achieves today (about 70 % of single-bit flips in these payloads; the rest land in
  // padding or in values any reading accepts), asserted with a margin.
  static void flip_bits_and_truncate(const compile::LoweredMethod& l, uint32_t seed, int default_flips) {
    std::map<std::string, pte::NamedData> named;
    for (const auto& nd : l.named_data) named.emplace(nd.key, nd);
    const std::vector<uint8_t> good(l.payload.bytes().begin(), l.payload.bytes().end());
    std::mt19937 rng(seed);
    int rejected = 0, flips = 0;
    // GENAI_PAYLOAD_FLIPS=N for a longer sweep (sanitizer runs); the default keeps the suite fast.
    const char* env = std::getenv("GENAI_PAYLOAD_FLIPS");
    const int n_flips = env ? std::atoi(env) : default_flips;
    for (int k = 0; k < n_flips; ++k) {
      std::vector<uint8_t> bad = good;
      const size_t at = rng() % bad.size();
      bad[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      ++flips;
      rejected += init_and_run(pte::Blob(std::move(bad)), named, "text_decoder.pte/prefill_forward");
    }
    EXPECT_GE(rejected * 100, flips * 60) << rejected << " of " << flips << " flips rejected";
    for (size_t len = 0; len < good.size(); len += 1 + good.size() / 200)
      EXPECT_TRUE(init_and_run(pte::Blob(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(len))), named,
                               "truncated"))
          << len;
  }
};
quant::QuantizedModel* PayloadRobustness::q_ = nullptr;

TEST_F(PayloadRobustness, IntactPayloadRuns) {
  const compile::Backend* htp = compile::find_backend("htp");
  auto l = htp->lower("kv_forward", q_->bundles.at(pipeline::GraphName::kKvForward), target_for("SM8650", true));
  std::map<std::string, pte::NamedData> named;
  for (const auto& nd : l.named_data) named.emplace(nd.key, nd);
  EXPECT_FALSE(init_and_run(l.payload, named, "kv_forward"));
  // Identifier and version are checked.
  std::vector<uint8_t> bytes(l.payload.bytes().begin(), l.payload.bytes().end());
  ASSERT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()) + 4, 4), backends::kPayloadIdentifier);
}

TEST_F(PayloadRobustness, BitFlipsAndTruncationAreInputErrors) {
  const compile::Backend* htp = compile::find_backend("htp");
  for (bool shared : {true, false}) {
    SCOPED_TRACE(shared ? "shared buffers" : "copied I/O");
    flip_bits_and_truncate(htp->lower("prefill_forward", q_->bundles.at(pipeline::GraphName::kPrefillForward),
                                      target_for("SM8650", shared)),
                           shared ? 1 : 2, 800);
  }
}

// The same for a payload with MatMulConcat ops (8-bit caches, the default).
TEST_F(PayloadRobustness, FusedKvPayloadBitFlipsAreInputErrors) {
  const compile::Backend* htp = compile::find_backend("htp");  // 8-bit caches fused: the target's default
  flip_bits_and_truncate(htp->lower("kv_forward", q_->bundles.at(pipeline::GraphName::kKvForward), target_for("SM8650", true)),
                         3, 400);
}

// Versions: 1 and 2 are read; MatMulConcat needs 2; anything newer is refused.
TEST_F(PayloadRobustness, VersionsAreChecked) {
  const compile::Backend* htp = compile::find_backend("htp");  // 8-bit caches fused: the target's default
  auto l = htp->lower("kv_forward", q_->bundles.at(pipeline::GraphName::kKvForward), target_for("SM8650", true));
  std::map<std::string, pte::NamedData> named;
  for (const auto& nd : l.named_data) named.emplace(nd.key, nd);
  auto with_version = [&](uint32_t version) {
    auto method = backends::fb::UnPackMethod(l.payload.bytes().data());
    method->version = version;
    flatbuffers::FlatBufferBuilder builder;
    builder.Finish(backends::fb::Method::Pack(builder, method.get()), backends::fb::MethodIdentifier());
    return pte::Blob(std::vector<uint8_t>(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()));
  };
  EXPECT_FALSE(init_and_run(with_version(backends::kPayloadVersion), named, "v2"));
  EXPECT_TRUE(init_and_run(with_version(1), named, "v1 with MatMulConcat"));
  EXPECT_TRUE(init_and_run(with_version(backends::kPayloadVersion + 1), named, "v3"));
  // An unfused payload is a valid version-1 payload.
  l = htp->lower("kv_forward", q_->bundles.at(pipeline::GraphName::kKvForward),
                 target_for("SM8650", true, false, target::BackendType::kHtpBackend, compile::KvFusion::kNone));
  EXPECT_FALSE(init_and_run(with_version(1), named, "v1"));
}

TEST_F(PayloadRobustness, MissingOrResizedNamedDataIsAnInputError) {
  const compile::Backend* htp = compile::find_backend("htp");
  auto l = htp->lower("kv_forward", q_->bundles.at(pipeline::GraphName::kKvForward), target_for("SM8650", true));
  std::map<std::string, pte::NamedData> named;
  for (const auto& nd : l.named_data) named.emplace(nd.key, nd);
  for (const auto& nd : l.named_data) {
    auto missing = named;
    missing.erase(nd.key);
    try {
      runtime::find_backend_executor("GenaiHtpBackend")
          ->init(l.payload, {}, lookup_of(missing), method_labelled("prog.pte/kv_forward"));
      ADD_FAILURE() << "missing " << nd.key << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(nd.key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("prog.pte/kv_forward"), std::string::npos) << e.what();
    }
    auto shorter = named;
    std::vector<uint8_t> b(nd.data.bytes().begin(), nd.data.bytes().end() - 1);
    shorter[nd.key].data = pte::Blob(std::move(b));
    EXPECT_THROW(runtime::find_backend_executor("GenaiHtpBackend")
                     ->init(l.payload, {}, lookup_of(shorter), method_labelled("x")),
                 InputError);
  }
  // Buffers of the wrong size at execute are refused (a caller bug: Failure).
  auto m =
      runtime::find_backend_executor("GenaiHtpBackend")->init(l.payload, {}, lookup_of(named), method_labelled("x"));
  std::vector<runtime::BufferRef> none;
  std::vector<uint8_t> scratch(m->scratch_bytes() + 64);
  EXPECT_THROW(m->execute(none, none, scratch), Failure);
}

}  // namespace
}  // namespace genai::backends_testing
