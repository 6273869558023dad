#include "core/error.h"
#include "core/log.h"
#include "formats/llama2c_file.h"
#include "model/loaders.h"
#include "model/rotary_layout.h"
#include "model/weight_layout.h"
#include "model/weights.h"
#include "tokenizer/factory.h"

namespace genai {

namespace {
// Canonical per-layer suffix of each stacked llama2.c array.
constexpr std::pair<const char*, const char*> kStacked[] = {
    {"rms_att_weight", "input_layernorm.weight"},  {"wq", "self_attn.q_proj.weight"},
    {"wk", "self_attn.k_proj.weight"},             {"wv", "self_attn.v_proj.weight"},
    {"wo", "self_attn.o_proj.weight"},             {"rms_ffn_weight", "post_attention_layernorm.weight"},
    {"w1", "mlp.gate_proj.weight"},                {"w2", "mlp.down_proj.weight"},
    {"w3", "mlp.up_proj.weight"},
};
}  // namespace

Model load_llama2c_model(const std::filesystem::path& path, bool with_tokenizer) {
  Llama2cFile file = Llama2cFile::open(path);
  const Llama2cHeader& h = file.header();
  const std::string& src = file.source();
  Model m;
  m.format = CheckpointFormat::kLlama2c;
  m.checkpoint_path = path;
  ModelConfig& c = m.config;
  c.arch = Architecture::kLlama;
  c.dim = h.dim;
  c.ffn_dim = h.hidden_dim;
  c.n_layers = h.n_layers;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.head_dim = h.head_size();
  c.vocab_size = h.vocab_size;
  c.max_positions = h.seq_len;
  c.rope_theta = 10000.0f;  // run.c hard-codes it
  c.norm_eps = 1e-5f;       // run.c's rmsnorm epsilon
  c.tied_embeddings = h.shared_classifier;
  c.bos_id = 1;
  c.eos_id = 2;
  c.name = path.stem().string();
  c.validate(src);

  namespace wn = weight_names;
  m.weights.set_source(src);
  m.weights.add(wn::embed_tokens(), file.array("token_embedding_table"));
  m.weights.add(wn::final_norm(), file.array("rms_final_weight"));
  if (!h.shared_classifier) m.weights.add(wn::lm_head(), file.array("wcls"));
  for (const auto& [array, suffix] : kStacked) {
    const Tensor stacked = file.array(array);
    Shape per_layer(stacked.shape().begin() + 1, stacked.shape().end());
    const int64_t n = shape_numel(per_layer);
    auto keep = std::make_shared<Tensor>(stacked);
    for (int64_t i = 0; i < c.n_layers; ++i) {
      // A slice of the mapped array; the shared copy of `stacked` keeps the map alive.
      Tensor t = Tensor::view(DType::kF32, per_layer, stacked.data<float>() + i * n, keep);
      const std::string name = wn::layer(i, suffix);
      const std::string kind = rotary_projection_kind(name);
      // llama2.c keeps Meta's interleaved rotary row order; the canonical order is rotate-half.
      if (!kind.empty()) t = interleaved_to_half_rows(t, kind == "q" ? c.n_heads : c.n_kv_heads);
      m.weights.add(name, std::move(t));
    }
  }
  for (const WeightSpec& spec : expected_weights(c)) check_weight_shape(src, spec.name, spec, m.weights.get(spec.name).shape());

  if (with_tokenizer) {
    const auto tb = path.parent_path() / "tokenizer.bin";
    if (std::filesystem::exists(tb)) {
      m.tokenizer = load_tokenizer_file(tb);
      if (m.tokenizer->vocab_size() > c.vocab_size)
        throw_input_error("{}: {} tokens, but the checkpoint {} has a vocabulary of {}", tb.string(),
                          m.tokenizer->vocab_size(), src, c.vocab_size);
      m.tokenizer_path = tb;
    } else {
      log::warn("{}: no tokenizer.bin beside the checkpoint (pass --tokenizer_bin)", src);
    }
  }
  return m;
}

}  // namespace genai
