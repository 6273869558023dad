// The compilation strategy and the compiler adapter, with a test backend (listing_backend.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "compile/compiler.h"
#include "compile/compiler_adapter.h"
#include "compile/constant_methods.h"
#include "compile/decoder_metadata.h"
#include "compile/float_bundles.h"
#include "compile/source_checksum.h"
#include "compile/listing_backend.h"
#include "core/error.h"
#include "core/sha256.h"
#include "graph/random_model.h"
#include "pte/program_reader.h"
#include "quant/quantize.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/input_errors.h"
#include "target/compile_spec.h"
#include "target/qnn_spec_builder.h"
#include "options/option_values.h"
#include "options/spec_from_options.h"

namespace genai::compile {
namespace {

namespace fs = std::filesystem;
using pipeline::GraphName;

void register_test_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_backend(std::make_unique<testing::ListingBackend>());
    // A GPU backend that lacks rope: the unsupported-op path of the strategy.
    register_backend(std::make_unique<testing::ListingBackend>(std::set<graph::OpKind>{graph::OpKind::kRope},
                                                               "listing-gpu", target::BackendType::kGpuBackend));
  });
}

std::shared_ptr<const Model> model() {
  static const auto m = graph_testing::random_model();
  return m;
}

// Quantized hybrid bundles of the random model (computed once: calibration takes a moment).
const pipeline::GraphBundles& quantized_bundles() {
  static const pipeline::GraphBundles bundles = [] {
    quant::QuantizeOptions o;
    o.mode = graph::ModelMode::kHybrid;
    o.max_context_len = 32;
    o.prefill_ar_len = 8;
    o.recipe = quant::recipe_from_spelling("16a8w");
    o.calibration.context_len = 32;
    o.calibration.max_windows = 2;
    const auto q = quant::quantize_model(model(), o);
    DecoderMetadataOptions mo;
    mo.max_seq_len = 24;
    return with_decoder_metadata(model()->config, q.bundles, mo);
  }();
  return bundles;
}

CompileRequest htp_request(const std::string& dir) {
  register_test_backends();
  CompileRequest r;
  r.soc = &target::resolve_soc("SM8650");
  r.backend_type = target::BackendType::kHtpBackend;
  r.graphs = quantized_bundles();
  r.compile_specs = target::QnnSpecBuilder("SM8650").build();
  r.artifact_dir = dir;
  return r;
}

using genai::testing::dir_entries;
using genai::testing::read_bytes;

using genai::testing::input_error_of;

const pte::TensorValue& io(const pte::Method& m, bool input, size_t i) {
  const auto& idx = input ? m.inputs : m.outputs;
  return std::get<pte::TensorValue>(m.values.at(static_cast<size_t>(idx.at(i))));
}

TEST(CompileStrategy, HybridGroupsBothGraphsIntoOneTextDecoderProgram) {
  genai::testing::TempDir dir;
  const CompileResult r = compile_artifacts(htp_request(dir.path()));
  ASSERT_EQ(r.artifacts.size(), 1u);
  const fs::path pte_path = r.artifacts.at(pipeline::ArtifactKey::kTextDecoder);
  EXPECT_EQ(pte_path.filename(), "text_decoder.pte");
  EXPECT_EQ(dir_entries(dir.path()), (std::vector<std::string>{"manifest.json", "text_decoder.pte"}));

  const pte::LoadedProgram p = pte::read_program(pte_path);
  const pte::Method* kv = p.program.find_method("kv_forward");
  const pte::Method* prefill = p.program.find_method("prefill_forward");
  ASSERT_TRUE(kv && prefill);
  EXPECT_EQ(pte::method_kind(*kv), pte::MethodKind::kDelegated);
  EXPECT_EQ(p.program.methods[0].name, "kv_forward");  // real methods first, sorted by name
  EXPECT_EQ(p.program.methods[1].name, "prefill_forward");

  // Scratch is a property of the group: the larger method's plan, in both methods and the spec.
  const uint64_t kv_planned = r.method_reports.at("kv_forward").planned_bytes;
  const uint64_t prefill_planned = r.method_reports.at("prefill_forward").planned_bytes;
  EXPECT_GT(prefill_planned, kv_planned);  // AR-8 activations are wider than AR-1
  const int64_t scratch = static_cast<int64_t>(std::max(kv_planned, prefill_planned));
  EXPECT_EQ(kv->non_const_buffer_sizes, (std::vector<int64_t>{0, scratch}));
  EXPECT_EQ(prefill->non_const_buffer_sizes, (std::vector<int64_t>{0, scratch}));
  EXPECT_EQ(r.planned_bytes, static_cast<uint64_t>(scratch));
  EXPECT_GE(r.planned_bytes, r.lower_bound_bytes);
  for (const pte::Method* m : {kv, prefill}) {
    ASSERT_EQ(m->delegates.size(), 1u);
    EXPECT_EQ(m->delegates[0].id, "GenaiListingBackend");
    const auto options = target::options_from_specs(m->delegates[0].compile_specs);
    ASSERT_TRUE(options && options->htp_options);
    EXPECT_EQ(options->soc_model, target::Chipset::SM8650);
    EXPECT_EQ(options->htp_options->max_sf_buf_size, scratch);
    const std::string payload(m->delegates[0].processed.bytes().begin(), m->delegates[0].processed.bytes().end());
    EXPECT_EQ(payload.rfind("method " + m->name + "\n", 0), 0u);
  }

  // Quantized boundary tensors keep their integer dtypes.
  EXPECT_EQ(io(*kv, true, 0).scalar_type, pte::ScalarType::kInt);  // tokens
  EXPECT_EQ(io(*kv, true, 0).sizes, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(io(*kv, true, 1).scalar_type, pte::ScalarType::kUInt16);  // atten_mask
  EXPECT_EQ(io(*kv, true, 3).scalar_type, pte::ScalarType::kByte);  // k_cache_0 (16a8w: 8-bit KV)
  EXPECT_EQ(io(*kv, false, 0).scalar_type, pte::ScalarType::kUInt16);  // logits
  EXPECT_EQ(io(*prefill, true, 0).sizes, (std::vector<int32_t>{1, 8}));
  EXPECT_FALSE(io(*kv, true, 0).allocation.has_value());  // caller-supplied

  // One stored copy of the weights: every key once, and the file is smaller than two copies.
  uint64_t weight_bytes = 0;
  std::set<std::string> keys;
  for (const auto& d : p.program.named_data) {
    EXPECT_TRUE(keys.insert(d.key).second) << d.key;
    weight_bytes += d.data.size();
  }
  size_t model_weight_bytes = 0;
  for (const auto& [name, t] : model()->weights.all()) model_weight_bytes += t.nbytes();
  EXPECT_EQ(weight_bytes, model_weight_bytes);  // the listing backend stores float weights as-is
  EXPECT_LT(p.layout.file_size, weight_bytes + weight_bytes / 2);

  EXPECT_EQ(r.methods.at(pipeline::ArtifactKey::kTextDecoder).size(), p.program.methods.size());
}

TEST(CompileStrategy, ConstantMethodsCarryTheDecodeGraphsFacts) {
  genai::testing::TempDir dir;
  const CompileResult r = compile_artifacts(htp_request(dir.path()));
  const pte::LoadedProgram p = pte::read_program(r.artifacts.at(pipeline::ArtifactKey::kTextDecoder));
  auto constant = [&](const std::string& name) -> pte::Value {
    const pte::Method* m = p.program.find_method(name);
    if (!m) {
      ADD_FAILURE() << "missing " << name;
      return pte::Null{};
    }
    EXPECT_EQ(pte::method_kind(*m), pte::MethodKind::kConstant) << name;
    return m->values.at(static_cast<size_t>(m->outputs.at(0)));
  };
  const ModelConfig& c = model()->config;
  EXPECT_EQ(std::get<pte::Int>(constant("get_max_seq_len")).value, 24);
  EXPECT_EQ(std::get<pte::Int>(constant("get_max_context_len")).value, 32);
  EXPECT_EQ(std::get<pte::Int>(constant("get_ar_len")).value, 1);  // the decode graph's
  EXPECT_EQ(std::get<pte::Int>(constant("get_vocab_size")).value, c.vocab_size);
  EXPECT_EQ(std::get<pte::Int>(constant("get_n_layers")).value, c.n_layers);
  EXPECT_EQ(std::get<pte::Int>(constant("get_n_kv_heads")).value, c.n_kv_heads);
  EXPECT_EQ(std::get<pte::Int>(constant("get_head_dim")).value, c.head_dim);
  EXPECT_EQ(std::get<pte::Int>(constant("get_dim")).value, c.dim);
  EXPECT_EQ(std::get<pte::Int>(constant("get_bos_id")).value, c.bos_id);
  EXPECT_EQ(std::get<pte::Int>(constant("get_eos_id")).value, c.eos_id);
  EXPECT_EQ(std::get<pte::Int>(constant("get_n_bos")).value, 1);
  EXPECT_EQ(std::get<pte::Int>(constant("get_n_eos")).value, 1);
  EXPECT_EQ(std::get<pte::Int>(constant("get_max_batch_size")).value, 1);
  EXPECT_TRUE(std::get<pte::Bool>(constant("get_use_kv_cache")).value);
  EXPECT_EQ(std::get<pte::Int>(constant("get_kv_io_bit_width")).value, 8);  // 16a8w: 8-bit KV

  const auto& kv_bundle = quantized_bundles().at(GraphName::kKvForward);
  const auto& enc = kv_bundle.encodings()->activations;
  const auto& g = *kv_bundle.graph();
  EXPECT_EQ(std::get<pte::Double>(constant("get_logits_scale")).value,
            static_cast<double>(enc.at(g.value(g.find_output("logits")->value).name).scale));
  EXPECT_EQ(std::get<pte::Int>(constant("get_logits_zero_point")).value,
            enc.at(g.value(g.find_output("logits")->value).name).zero_point);

  // One list method per KV output, in output order: k_out_0, k_out_1, v_out_0, v_out_1.
  for (int64_t i = 0; i < 2 * c.n_layers; ++i) {
    const pte::Method* m = p.program.find_method(fmt::format("get_kv_output_{}_quant_attr", i));
    ASSERT_TRUE(m) << i;
    ASSERT_EQ(m->outputs.size(), 5u);
    const std::string out_name = i < c.n_layers ? fmt::format("k_out_{}", i) : fmt::format("v_out_{}", i - c.n_layers);
    const quant::Encoding& e = enc.at(g.value(g.find_output(out_name)->value).name);
    EXPECT_EQ(std::get<pte::Double>(m->values[0]).value, static_cast<double>(e.scale));
    EXPECT_EQ(std::get<pte::Int>(m->values[1]).value, e.zero_point);
    EXPECT_EQ(std::get<pte::Int>(m->values[2]).value, 0);
    EXPECT_EQ(std::get<pte::Int>(m->values[1]).value, 128);  // symmetric
    EXPECT_EQ(std::get<pte::Int>(m->values[3]).value, 255);
    EXPECT_EQ(std::get<pte::String>(m->values[4]).value, "torch.uint8");
  }
  EXPECT_FALSE(p.program.find_method(fmt::format("get_kv_output_{}_quant_attr", 2 * c.n_layers)));
}

TEST(CompileStrategy, IdenticalRequestsGiveIdenticalBytes) {
  genai::testing::TempDir a, b;
  CompileRequest ra = htp_request(a.path()), rb = htp_request(b.path());
  ra.options = rb.options = {{"max_seq_len", 24}, {"soc_model", "SM8650"}};
  compile_artifacts(ra);
  compile_artifacts(rb);
  for (const char* f : {"text_decoder.pte", "manifest.json"}) {
    EXPECT_EQ(read_bytes(a.file(f)), read_bytes(b.file(f))) << f;
  }
  // And again into the same dir: same bytes, nothing else left behind.
  const auto before = read_bytes(a.file("text_decoder.pte"));
  compile_artifacts(ra);
  EXPECT_EQ(read_bytes(a.file("text_decoder.pte")), before);
  EXPECT_EQ(dir_entries(a.path()), (std::vector<std::string>{"manifest.json", "text_decoder.pte"}));
}

TEST(CompileStrategy, ManifestRecordsArtifactsTokenizerOptionsAndSourceChecksum) {
  genai::testing::TempDir dir, src;
  const std::string checkpoint = src.file("model.bin");
  std::ofstream(checkpoint, std::ios::binary) << "checkpoint bytes";
  const std::string tokenizer = src.file("tokenizer.model");
  std::ofstream(tokenizer, std::ios::binary) << "not really a sentencepiece model";
  CompileRequest r = htp_request(dir.path() + "/out");
  r.checkpoint_path = checkpoint;
  r.tokenizer_path = tokenizer;
  r.options = {{"quant_recipe", "16a8w"}, {"model_mode", "hybrid"}};
  const CompileResult res = compile_artifacts(r);
  EXPECT_EQ(res.manifest_path, fs::path(dir.path() + "/out/manifest.json"));
  const auto m = nlohmann::json::parse(read_bytes(res.manifest_path));
  EXPECT_EQ(m["format"], "genai-artifacts");
  EXPECT_EQ(m["version"], 1);
  EXPECT_EQ(m["artifacts"], (nlohmann::json{{"text_decoder", "text_decoder.pte"}}));
  EXPECT_EQ(m["methods"]["text_decoder"][0], "kv_forward");
  EXPECT_EQ(m["methods"]["text_decoder"][1], "prefill_forward");
  EXPECT_EQ(m["methods"]["text_decoder"][2], "get_max_seq_len");
  EXPECT_EQ(m["tokenizer"], "tokenizer.model");
  EXPECT_EQ(m["soc_model"], "SM8650");
  EXPECT_EQ(m["backend"], "htp");
  EXPECT_EQ(m["options"], r.options);
  EXPECT_EQ(m["source"]["path"], checkpoint);
  EXPECT_EQ(m["source"]["sha256"], sha256_hex(std::string_view("checkpoint bytes")));
  EXPECT_EQ(m["planned_bytes"], res.planned_bytes);
  EXPECT_EQ(m["lower_bound_bytes"], res.lower_bound_bytes);
  EXPECT_EQ(read_bytes(dir.path() + "/out/tokenizer.model"), read_bytes(tokenizer));
}

TEST(CompileStrategy, FolderChecksumCoversNamesAndContents) {
  genai::testing::TempDir a;
  fs::create_directories(a.file("sub"));
  std::ofstream(a.file("config.json")) << "{}";
  std::ofstream(a.file("sub/w.safetensors")) << "weights";
  const std::string first = source_checksum(a.path());
  EXPECT_EQ(first, source_checksum(a.path()));
  std::ofstream(a.file("sub/w.safetensors")) << "weightz";
  const std::string changed = source_checksum(a.path());
  EXPECT_NE(changed, first);
  fs::rename(a.file("sub/w.safetensors"), a.file("sub/v.safetensors"));
  EXPECT_NE(source_checksum(a.path()), changed);
  EXPECT_NE(input_error_of([&] { source_checksum(a.file("missing")); }).find("missing"), std::string::npos);
}

TEST(CompileStrategy, StaleTempFilesOfAnInterruptedRunAreRemoved) {
  genai::testing::TempDir dir;
  std::ofstream(dir.file(".text_decoder.pte.tmp-Ab12Cd")) << "partial";
  compile_artifacts(htp_request(dir.path()));
  EXPECT_EQ(dir_entries(dir.path()), (std::vector<std::string>{"manifest.json", "text_decoder.pte"}));
}

TEST(CompileAdapter, SpecMismatchInjectedThroughTheAdapterNamesBothSides) {
  register_test_backends();
  const testing::ListingBackend backend;
  const CompilerAdapter adapter(backend);
  LoweringTarget target;
  target.soc = &target::resolve_soc("SM8650");
  target.compile_specs = target::QnnSpecBuilder("SM8550").build();  // the injected mismatch
  const auto& bundle = quantized_bundles().at(GraphName::kKvForward);
  std::string msg = input_error_of([&] { adapter.compile_method("kv_forward", bundle, target); });
  EXPECT_NE(msg.find("SM8550"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SM8650"), std::string::npos) << msg;

  target.compile_specs = target::QnnSpecBuilder("SM8650", target::BackendType::kGpuBackend).build();
  msg = input_error_of([&] { adapter.compile_method("kv_forward", bundle, target); });
  EXPECT_NE(msg.find("gpu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("htp"), std::string::npos) << msg;

  target.compile_specs = target::QnnSpecBuilder("SM8650").use_fp16(true).build();
  msg = input_error_of([&] { adapter.compile_method("kv_forward", bundle, target); });
  EXPECT_NE(msg.find("fp16"), std::string::npos) << msg;

  // Specs without a QNN entry are not checked.
  target.compile_specs = {CompileSpec{"other_backend_spec", {1, 2, 3}}};
  const CompiledMethod m = adapter.compile_method("kv_forward", bundle, target);
  EXPECT_EQ(m.method.delegates.at(0).compile_specs, target.compile_specs);
  EXPECT_EQ(m.method.non_const_buffer_sizes, (std::vector<int64_t>{0, static_cast<int64_t>(m.planned_bytes)}));
}

TEST(CompileStrategy, SpecMismatchFailsBeforeAnythingIsWritten) {
  genai::testing::TempDir dir;
  CompileRequest r = htp_request(dir.path() + "/out");
  r.compile_specs = target::QnnSpecBuilder("SM8750").build();
  const std::string msg = input_error_of([&] { compile_artifacts(r); });
  EXPECT_NE(msg.find("SM8750"), std::string::npos);
  EXPECT_NE(msg.find("SM8650"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() + "/out"));
}

TEST(CompileStrategy, AnOpTheBackendLacksIsAnInputErrorNamingOpAndSoc) {
  genai::testing::TempDir dir;
  CompileRequest r = htp_request(dir.path() + "/out");
  r.backend_type = target::BackendType::kGpuBackend;
  r.graphs = float_bundles(model(), {});
  r.compile_specs = target::QnnSpecBuilder("SM8650", target::BackendType::kGpuBackend).build();
  const std::string msg = input_error_of([&] { compile_artifacts(r); });
  EXPECT_NE(msg.find("rope"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SM8650"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir.path() + "/out"));
}

TEST(CompileStrategy, ABackendTypeWithoutBackendIsNamed) {
  genai::testing::TempDir dir;
  CompileRequest r = htp_request(dir.path());
  r.backend_type = target::BackendType::kLpaiBackend;
  r.compile_specs = {};
  const std::string msg = input_error_of([&] { compile_artifacts(r); });
  EXPECT_NE(msg.find("--backend lpai"), std::string::npos) << msg;
  EXPECT_NE(msg.find("listing"), std::string::npos) << msg;
}

TEST(CompileStrategy, Fp16NeedsFloatGraphsAndFloatGraphsCompile) {
  genai::testing::TempDir dir;
  CompileRequest r = htp_request(dir.path());
  r.use_fp16 = true;
  r.compile_specs = target::QnnSpecBuilder("SM8650").use_fp16(true).build();
  EXPECT_NE(input_error_of([&] { compile_artifacts(r); }).find("--use_fp16"), std::string::npos);

  r.graphs = float_bundles(model(), {graph::ModelMode::kHybrid, 32, 8});
  const CompileResult res = compile_artifacts(r);
  const pte::LoadedProgram p = pte::read_program(res.artifacts.at(pipeline::ArtifactKey::kTextDecoder));
  const pte::Method* kv = p.program.find_method("kv_forward");
  ASSERT_TRUE(kv);
  EXPECT_EQ(io(*kv, true, 1).scalar_type, pte::ScalarType::kFloat);   // atten_mask
  EXPECT_EQ(io(*kv, false, 0).scalar_type, pte::ScalarType::kFloat);  // logits
  EXPECT_FALSE(p.program.find_method("get_logits_scale"));
  EXPECT_FALSE(p.program.find_method("get_kv_output_0_quant_attr"));
  const pte::Method* bits = p.program.find_method("get_kv_io_bit_width");
  ASSERT_TRUE(bits);
  EXPECT_EQ(std::get<pte::Int>(bits->values[0]).value, 32);
}

TEST(CompileStrategy, SeparateEmbeddingGivesATokEmbeddingProgram) {
  genai::testing::TempDir dir;
  CompileRequest r = htp_request(dir.path());
  graph::DecoderGraphOptions go{graph::ModelMode::kHybrid, 32, 8};
  go.separate_embedding = true;
  r.graphs = float_bundles(model(), go);
  r.use_fp16 = true;
  r.compile_specs = target::QnnSpecBuilder("SM8650").use_fp16(true).build();
  const CompileResult res = compile_artifacts(r);
  ASSERT_EQ(res.artifacts.size(), 2u);
  EXPECT_EQ(res.artifacts.at(pipeline::ArtifactKey::kTokEmbedding).filename(), "tok_embedding.pte");
  EXPECT_EQ(res.methods.at(pipeline::ArtifactKey::kTokEmbedding),
            (std::vector<std::string>{"tok_embedding_kv_forward", "tok_embedding_prefill_forward"}));
  const pte::LoadedProgram p = pte::read_program(res.artifacts.at(pipeline::ArtifactKey::kTokEmbedding));
  EXPECT_EQ(p.program.methods.size(), 2u);  // no constant methods outside the text decoder
  ASSERT_EQ(p.program.named_data.size(), 1u);  // the one embedding table both graphs gather from
  EXPECT_GE(res.planned_bytes, res.lower_bound_bytes);
}

TEST(CompileStrategy, IncompleteMetadataIsNamed) {
  quant::QuantizeOptions o;
  o.mode = graph::ModelMode::kKv;
  o.max_context_len = 16;
  o.recipe = quant::recipe_from_spelling("8a8w");
  o.calibration.context_len = 16;
  o.calibration.max_windows = 1;
  const auto q = quant::quantize_model(model(), o);
  try {
    decoder_constant_methods(q.bundles.at(GraphName::kKvForward));
    FAIL() << "expected a Failure";
  } catch (const Failure& e) {
    EXPECT_NE(std::string(e.what()).find("get_max_context_len"), std::string::npos) << e.what();
  }
  const auto complete = with_decoder_metadata(model()->config, q.bundles);
  const auto methods = decoder_constant_methods(complete.at(GraphName::kKvForward));
  bool found = false;
  for (const auto& m : methods) {
    if (m.name == "get_kv_io_bit_width") {
      EXPECT_EQ(std::get<pte::Int>(m.values[0]).value, 8);  // 8a8w: 8-bit KV
      found = true;
    }
    if (m.name == "get_use_kv_cache") {
      EXPECT_TRUE(std::get<pte::Bool>(m.values[0]).value);
    }
    if (m.name == "get_kv_output_0_quant_attr") {
      EXPECT_EQ(std::get<pte::String>(m.values[4]).value, "torch.uint8");
    }
  }
  EXPECT_TRUE(found);
}

TEST(CompileStrategy, SpillFillSizeIsWrittenOnlyIntoHtpSpecs) {
  const auto htp = target::QnnSpecBuilder("SM8650").build();
  const auto updated = specs_with_spill_fill_size(htp, 12345);
  EXPECT_EQ(target::options_from_specs(updated)->htp_options->max_sf_buf_size, 12345);
  auto expected = *target::options_from_specs(htp);
  expected.htp_options->max_sf_buf_size = 12345;
  EXPECT_EQ(*target::options_from_specs(updated), expected);  // nothing else changed
  const auto gpu = target::QnnSpecBuilder("SM8650", target::BackendType::kGpuBackend).build();
  EXPECT_EQ(specs_with_spill_fill_size(gpu, 12345), gpu);
  EXPECT_THROW(specs_with_spill_fill_size(htp, uint64_t{1} << 31), Failure);
}

}  // namespace
}  // namespace genai::compile

namespace genai::compile {
namespace {

// Sharding (num_sharding > 1) turns on multiple contexts, which online prepare cannot build:
// rejected by the spec builder the compile stage uses, naming the option and the SoC.
TEST(CompileTargets, OnlinePrepareWithMultipleContextsIsRejected) {
  options::OptionValues values(options::kCompileScope);
  values.set("soc_model", std::string("SM8650"));
  values.set("model_mode", std::string("kv"));
  values.set("online_prepare", true);
  EXPECT_NO_THROW(options::spec_builder_from_options(values).build());
  values.set("num_sharding", int64_t{2});
  const std::string msg = input_error_of([&] { options::spec_builder_from_options(values).build(); });
  EXPECT_NE(msg.find("--online_prepare"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SM8650"), std::string::npos) << msg;
}

}  // namespace
}  // namespace genai::compile
