#include "model/synth.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/random.h"
#include "tokenizer/synthetic_vocab.h"

namespace genai {
namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A ChatML template as SmolLM2 ships it (the synthetic BPE vocabulary has <|im_start|>/<|im_end|>).
// SmolVLM-Instruct's template (its chat_template.json).
constexpr const char* kSmolVlmTemplate =
    "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}{% if message['content'][0]['type'] == "
    "'image' %}{{':'}}{% else %}{{': '}}{% endif %}{% for line in message['content'] %}{% if line['type'] == 'text' "
    "%}{{line['text']}}{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% "
    "endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}";

constexpr const char* kChatMlTemplate =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// --weight_type of a Hugging Face folder: its safetensors dtype.
DType hf_weight_dtype(const std::string& weight_type) {
  if (weight_type == "f32") return DType::kF32;
  if (weight_type == "f16") return DType::kF16;
  if (weight_type == "bf16") return DType::kBF16;
  throw_input_error("--weight_type: '{}' is not supported for --format hf (valid: f32, f16, bf16)", weight_type);
}

}  // namespace

void set_phi4_mini_rope(ModelConfig& c) {
  // Phi-4-mini's rotary layout: 3/4 of each head rotates, longrope over an original context of
  // half the model's (so a graph past it takes the long factors).
  c.rotary_dim = c.head_dim * 3 / 4 / 2 * 2;
  const int64_t half = c.rotary_dims() / 2;
  c.long_rope.short_factor.clear();
  c.long_rope.long_factor.clear();
  for (int64_t i = 0; i < half; ++i) {
    c.long_rope.short_factor.push_back(1.0f + 0.05f * static_cast<float>(i));
    c.long_rope.long_factor.push_back(2.0f + 0.25f * static_cast<float>(i));
  }
  c.long_rope.original_max_positions = std::max<int64_t>(c.max_positions / 2, 1);
  c.long_rope.attention_factor =
      static_cast<float>(std::sqrt(1.0 + std::log(2.0) / std::log(static_cast<double>(c.long_rope.original_max_positions))));
}

void set_gemma4_features(ModelConfig& c) {
  // Gemma 4 E2B's layout at the shape's size: every third layer global (head twice as wide,
  // rotating proportionally over a quarter of each half), the last third of the layers sharing
  // the keys and values of the last earlier layer of their kind with double-wide MLPs,
  // per-layer embeddings of about dim / 6, soft-capped logits.
  c.n_layers = std::max<int64_t>(c.n_layers, 6);  // so that even "tiny" has a shared layer of each kind
  c.ffn_activation = FfnActivation::kGeluTanh;
  c.embedding_multiplier = ModelConfig::gemma_embedding_scale(c.dim);
  c.tied_embeddings = true;
  c.sandwich_norms = true;
  c.attention_multiplier = 1.0f;
  c.final_logit_softcap = 30.0f;
  c.sliding_window = c.max_positions;
  c.sliding_layers.assign(static_cast<size_t>(c.n_layers), 0);
  for (int64_t l = 0; l < c.n_layers; ++l) c.sliding_layers[static_cast<size_t>(l)] = (l + 1) % 3 != 0;
  c.sliding_layers.back() = 0;
  c.rope_theta = 1e6f;
  c.rope_local_theta = 10000.0f;
  c.global_head_dim = 2 * c.head_dim;
  c.global_rope_fraction = 0.25f;
  c.kv_shared_layers = c.n_layers / 3;
  c.wide_shared_mlp = c.v_norm = c.layer_scalars = c.wide_kv_cache = true;
  c.ple_dim = std::max<int64_t>(8, c.dim / 6 / 8 * 8);
  c.ple_vocab = c.vocab_size;
}

namespace {

// One row per shape: the real model's decoder dimensions and the architecture it is.
struct ShapeRow {
  const char* name;
  const char* arch;  // the shape's own architecture, when --arch is not given
  int64_t dim, layers, heads, kv_heads, ffn, vocab, context;
  bool tied;
  float theta;
  bool llama3_rope;  // Llama 3's rope scaling (factor 32 over an original context of 8192)
};

constexpr ShapeRow kShapes[] = {
    {"tiny", "llama", 64, 2, 4, 2, 160, 512, 128, false, 10000.0f, false},
    {"stories15m", "llama", 288, 6, 6, 6, 768, 32000, 256, false, 10000.0f, false},
    {"smollm2-135m", "llama", 576, 30, 9, 3, 1536, 49152, 2048, true, 100000.0f, false},
    {"smollm2-360m", "llama", 960, 32, 15, 5, 2560, 49152, 2048, true, 100000.0f, false},  // SmolVLM-500M's text model
    {"llama3.2-1b", "llama", 2048, 16, 32, 8, 8192, 128256, 2048, true, 500000.0f, true},
    {"llama3.2-3b", "llama", 3072, 28, 24, 8, 8192, 128256, 2048, true, 500000.0f, true},
    // Phi-4-mini-instruct (3.8B): partial rotary and longrope come with the phi3 architecture.
    {"phi-4-mini", "phi3", 3072, 32, 24, 8, 8192, 200064, 2048, true, 10000.0f, false},
};

const ShapeRow& shape_row(const std::string& shape) {
  for (const ShapeRow& row : kShapes)
    if (shape == row.name) return row;
  std::string valid;
  for (const ShapeRow& row : kShapes) valid += (valid.empty() ? "" : ", ") + std::string(row.name);
  throw_input_error("--shape: '{}' is not a known shape (valid: {})", shape, valid);
}

}  // namespace

std::vector<std::string> synth_shape_names() {
  std::vector<std::string> names;
  for (const ShapeRow& row : kShapes) names.emplace_back(row.name);
  return names;
}

ModelConfig synth_config(const std::string& shape, const std::string& arch_given) {
  ModelConfig c;
  const ShapeRow& row = shape_row(shape);
  const std::string arch = arch_given.empty() ? row.arch : arch_given;
  const ArchitectureInfo* info = find_architecture(arch);  // HF's model_type, its family name, or llama.cpp's name
  if (!info) info = find_architecture(arch + "_text");    // gemma4 -> gemma4_text
  if (!info) info = find_gguf_architecture(arch);
  if (!info) throw_input_error("--arch: '{}' is not supported (supported: {})", arch, supported_architectures());
  c.arch = info->arch;
  c.qkv_bias = info->qkv_bias;
  c.qk_norm = info->qk_norm;
  c.dim = row.dim;
  c.n_layers = row.layers;
  c.n_heads = row.heads;
  c.n_kv_heads = row.kv_heads;
  c.head_dim = row.dim / row.heads;
  c.ffn_dim = row.ffn;
  c.vocab_size = row.vocab;
  c.max_positions = row.context;
  c.tied_embeddings = row.tied;
  c.rope_theta = row.theta;
  if (row.llama3_rope) c.rope_scaling = {32.0f, 1.0f, 4.0f, 8192};
  if (c.arch == Architecture::kGranite) {  // Granite 3.3's multipliers; attention 1 / head_dim as there
    c.embedding_multiplier = 12.0f;
    c.residual_multiplier = 0.22f;
    c.attention_multiplier = 1.0f / static_cast<float>(c.head_dim);
    c.logits_scaling = 8.0f;
  }
  if (c.arch == Architecture::kSmolLM3) {  // SmolLM3's pattern: every fourth layer without rope
    c.n_layers = std::max<int64_t>(c.n_layers, 4);  // so that even "tiny" has one
    c.rope_layers.assign(static_cast<size_t>(c.n_layers), 1);
    for (int64_t l = 0; l < c.n_layers; ++l) c.rope_layers[static_cast<size_t>(l)] = (l + 1) % 4 != 0;
  }
  if (c.arch == Architecture::kPhi3) set_phi4_mini_rope(c);
  if (c.arch == Architecture::kGlm) c.rotary_dim = c.head_dim / 2;  // GLM rotates half of each head
  if (c.arch == Architecture::kCodeGen) {  // codegen2's layout: half of each head rotates, untied
    set_codegen_features(c);
    c.rotary_dim = c.head_dim / 2;
    c.tied_embeddings = false;
  }
  const bool gemma23 = c.arch == Architecture::kGemma2 || c.arch == Architecture::kGemma3;
  if (c.arch == Architecture::kGemma || gemma23) {  // GeGLU, sqrt(dim), always tied
    c.ffn_activation = FfnActivation::kGeluTanh;
    c.embedding_multiplier = ModelConfig::gemma_embedding_scale(c.dim);
    c.tied_embeddings = true;
  }
  if (gemma23) {  // gemma2: caps, every even layer slides; gemma3: five of six slide, with their own rope base
    const bool g2 = c.arch == Architecture::kGemma2;
    c.sandwich_norms = true;
    c.attn_logit_softcap = g2 ? 50.0f : 0.0f;
    c.final_logit_softcap = g2 ? 30.0f : 0.0f;
    c.sliding_window = c.max_positions;
    c.sliding_layers.assign(static_cast<size_t>(c.n_layers), 0);
    for (int64_t l = 0; l < c.n_layers; ++l) c.sliding_layers[static_cast<size_t>(l)] = g2 ? l % 2 == 0 : l % 6 < 5;
    if (!g2) {
      c.rope_theta = 1e6f;
      c.rope_local_theta = 10000.0f;
    }
  }
  if (c.arch == Architecture::kGemma4) set_gemma4_features(c);
  c.norm_eps = c.arch == Architecture::kLlama || c.arch == Architecture::kPhi3 ? 1e-5f : 1e-6f;
  c.bos_id = 1;
  c.eos_id = 2;
  c.name = fmt::format("synth-{}{}", shape, std::string(info->name) == row.arch ? "" : "-" + std::string(info->name));
  c.validate("synth " + shape);
  return c;
}

Tensor synth_tensor(const WeightSpec& spec, uint64_t seed) {
  uint64_t mix = seed ^ fnv1a(spec.name);
  Xoshiro256 rng(splitmix64(mix));
  Tensor t = Tensor::zeros(DType::kF32, spec.shape);
  float* p = t.mutable_data<float>();
  const int64_t n = t.numel();
  const bool norm = ends_with(spec.name, "norm.weight") || ends_with(spec.name, "layer_scalar");  // around 1
  for (int64_t i = 0; i < n; ++i) p[i] = (norm ? 1.0f : 0.0f) + 0.02f * rng.approx_normal();
  return t;
}

WeightSource synth_weights(const ModelConfig& config, uint64_t seed) {
  // Unscaled attention over normalized q and k (gemma4: scale 1): q/k norm weights around
  // head_dim^-1/4, as a trained model's keep the scores moderate; at 1 the random model's
  // attention is near one-hot and amplifies every rounding by about 30 dB.
  const bool unscaled = config.qk_norm && config.attention_multiplier == 1.0f;
  return {[seed, unscaled](const WeightSpec& spec) {
    Tensor t = synth_tensor(spec, seed);
    if (unscaled && (ends_with(spec.name, "self_attn.q_norm.weight") || ends_with(spec.name, "self_attn.k_norm.weight"))) {
      const float s = static_cast<float>(std::pow(static_cast<double>(spec.shape.at(0)), -0.25));
      for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] *= s;
    }
    return t;
  }};
}

std::vector<std::string> smolvlm_special_tokens() {
  std::vector<std::string> t{"<fake_token_around_image>", "<image>", "<global-img>", "<end_of_utterance>"};
  for (int r = 1; r <= 6; ++r)
    for (int c = 1; c <= 6; ++c) t.push_back(fmt::format("<row_{}_col_{}>", r, c));
  return t;
}

std::vector<std::string> internvl_special_tokens() {
  return {"<img>", "</img>", "<IMG_CONTEXT>", "<quad>", "</quad>", "<ref>", "</ref>", "<box>", "</box>"};
}

VisionTower synth_vision_tower(const std::string& shape, const ModelConfig& text, int32_t image_token_id, uint64_t seed,
                               VisionFamily family) {
  VisionTower t;
  VisionTowerConfig& c = t.config;
  set_vision_family(c, family);
  const bool internvl = family == VisionFamily::kInternVl;
  if (shape == "tiny") {
    c.dim = 32, c.n_layers = 2, c.n_heads = 2, c.ffn_dim = 64, c.scale_factor = 2;
    c.image_size = internvl ? 56 : 64, c.patch_size = internvl ? 14 : 16;
  } else if (internvl) {
    c.dim = 1024, c.n_layers = 24, c.n_heads = 16, c.ffn_dim = 4096, c.image_size = 448, c.patch_size = 14, c.scale_factor = 2;
  } else {
    c.dim = 768, c.n_layers = 12, c.n_heads = 12, c.ffn_dim = 3072, c.image_size = 512, c.patch_size = 16, c.scale_factor = 4;
  }
  c.text_dim = text.dim;
  c.image_token_id = image_token_id;
  c.validate("synth " + shape);
  for (const WeightSpec& spec : vision_tower_weights(c)) {
    Tensor w = synth_tensor(spec, seed ^ 0x5eed0f715104ull);
    // LayerNorm weights around 1, as synth_tensor makes the decoder's norms.
    if (spec.name.find("norm") != std::string::npos && ends_with(spec.name, ".weight") && !ends_with(spec.name, "norm.weight"))
      for (int64_t i = 0; i < w.numel(); ++i) w.mutable_data<float>()[i] += 1.0f;
    if (ends_with(spec.name, "layer_scale1") || ends_with(spec.name, "layer_scale2"))  // InternVL starts them at 0.1
      for (int64_t i = 0; i < w.numel(); ++i) w.mutable_data<float>()[i] += 0.1f;
    t.weights.add(spec.name, std::move(w));
  }
  return t;
}

SpeechTower synth_speech_tower(const std::string& shape, const ModelConfig& text, int32_t audio_token_id, uint64_t seed) {
  SpeechTower t;
  SpeechTowerConfig& c = t.config;
  if (shape == "tiny") {
    c.n_layers = 4, c.dim = 32, c.ffn_mult = 2, c.n_heads = 2, c.head_dim = 16, c.ctc_dim = 12, c.context = 20, c.max_pos_emb = 24;
    c.conv_kernel = 5, c.q_dim = 32, c.q_layers = 2, c.q_heads = 2, c.q_ffn = 64;
  } else {
    c.n_layers = 16, c.dim = 1024, c.ffn_mult = 4, c.n_heads = 8, c.head_dim = 128, c.ctc_dim = 256, c.context = 200;
    c.max_pos_emb = 512, c.conv_kernel = 15, c.q_dim = 1024, c.q_layers = 2, c.q_heads = 16, c.q_ffn = 4096;
  }
  c.q_encoder_dim = c.dim;
  c.text_dim = text.dim;
  c.audio_token_id = audio_token_id;
  c.validate("synth " + shape);
  for (const WeightSpec& spec : speech_tower_weights(c)) {
    Tensor w = synth_tensor(spec, seed ^ 0xa0d10ull);
    float* p = w.mutable_data<float>();
    const bool norm = spec.name.find("norm") != std::string::npos || spec.name.find("LayerNorm") != std::string::npos;
    if ((norm && ends_with(spec.name, ".weight")) || ends_with(spec.name, "batch_norm.weight") ||
        ends_with(spec.name, "running_var"))
      for (int64_t i = 0; i < w.numel(); ++i) p[i] += 1.0f;  // scales and variances around 1
    if (spec.name == "projector.query")  // HF draws the queries from N(0, 1)
      for (int64_t i = 0; i < w.numel(); ++i) p[i] *= 50.0f;
    t.weights.add(spec.name, std::move(w));
  }
  return t;
}

namespace {

constexpr int64_t kSmolVlmAddedTokens = 128, kInternVlAddedTokens = 16, kGraniteSpeechAddedTokens = 8;

// Granite 3.3's chat markers (what the granite chat format writes) and the audio token.
constexpr const char* kGraniteTemplate =
    "{%- for message in messages %}{{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + "
    "'<|end_of_text|>\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_of_role|>assistant<|end_of_role|>' }}"
    "{%- endif %}";

// A Granite Speech folder: a granite decoder of `shape` whose vocabulary grows by Granite's chat
// markers and <|audio|>, the audio side, the feature extractor's settings and the chat template.
SynthResult write_synth_speech(const SynthRequest& r) {
  if (r.format != "hf")
    throw_input_error("--format: '{}' cannot hold a speech model (valid for --arch granite_speech: hf)", r.format);
  const DType dtype = hf_weight_dtype(r.weight_type);
  SynthResult res;
  res.config = synth_config(r.shape, "granite");
  ModelConfig& c = res.config;
  c.name = fmt::format("synth-{}-granite_speech", r.shape);
  BpeVocab vocab = make_synthetic_bpe_vocab(static_cast<int32_t>(c.vocab_size), r.seed);
  c.vocab_size += kGraniteSpeechAddedTokens;
  int32_t audio_id = -1;
  for (const char* tok : {"<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>", "<|audio|>"}) {
    if (std::string_view(tok) == "<|audio|>") audio_id = static_cast<int32_t>(vocab.tokens.size());
    vocab.tokens.push_back(tok);
    vocab.types.push_back(TokenType::kUserDefined);
  }
  for (int32_t i = 0; static_cast<int64_t>(vocab.tokens.size()) < c.vocab_size; ++i) {
    vocab.tokens.push_back(fmt::format("<|unused_{}|>", i));
    vocab.types.push_back(TokenType::kUnused);
  }
  vocab.chat_template = kGraniteTemplate;
  const SpeechTower tower = synth_speech_tower(r.shape, c, audio_id, r.seed);
  for (const auto& spec : expected_weights(c)) res.parameters += shape_numel(spec.shape);
  for (const auto& spec : speech_tower_weights(tower.config)) res.parameters += shape_numel(spec.shape);
  write_hf_model(r.out, c, synth_weights(c, r.seed), dtype, &vocab, uint64_t{2} << 30, nullptr, &tower);
  const nlohmann::json extractor = {{"feature_extractor_type", "GraniteSpeechFeatureExtractor"},
                                    {"melspec_kwargs", {{"hop_length", 160}, {"n_fft", 512}, {"n_mels", 80},
                                                        {"sample_rate", 16000}, {"win_length", 400}}},
                                    {"padding_value", 0.0},
                                    {"projector_downsample_rate", tower.config.downsample},
                                    {"projector_window_size", tower.config.window},
                                    {"sampling_rate", 16000}};
  write_file_atomic(r.out / "preprocessor_config.json", extractor.dump(2) + "\n");
  res.checkpoint = r.out;
  res.tokenizer = r.out / "tokenizer.json";
  return res;
}

// The chat template InternVL3-hf ships (ChatML; an image item is "<IMG_CONTEXT>\n").
constexpr const char* kInternVlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n'}}{% if message['content'] is string %}"
    "{{ message['content'] }}{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' %}"
    "{{ '<IMG_CONTEXT>\n' }}{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{{'<|im_end|>\n'}}{% endfor %}{% if add_generation_prompt %}{{'<|im_start|>assistant\n' }}{% endif %}";

// A vision-language folder: the decoder (SmolVLM: llama, InternVL: qwen2, of `shape`) with its
// vocabulary grown as the family grows its text model's (SmolVLM: by 128 tokens, 49152 -> 49280;
// InternVL: by 16 here, its added tokens first), the tower, the image processor's settings (a
// few tiles per image) and the chat template.
SynthResult write_synth_vision_language(const SynthRequest& r, VisionFamily family) {
  if (r.format != "hf")
    throw_input_error("--format: '{}' cannot hold a vision-language model (valid for --arch {}: hf)", r.format, r.arch);
  const DType dtype = hf_weight_dtype(r.weight_type);
  const bool internvl = family == VisionFamily::kInternVl;
  SynthResult res;
  res.config = synth_config(r.shape, internvl ? "qwen2" : "llama");
  ModelConfig& c = res.config;
  c.name = fmt::format("synth-{}-{}", r.shape, r.arch);
  BpeVocab vocab = make_synthetic_bpe_vocab(static_cast<int32_t>(c.vocab_size), r.seed);
  c.vocab_size += internvl ? kInternVlAddedTokens : kSmolVlmAddedTokens;
  int32_t image_id = -1;
  for (const auto& tok : internvl ? internvl_special_tokens() : smolvlm_special_tokens()) {
    if (tok == (internvl ? "<IMG_CONTEXT>" : "<image>")) image_id = static_cast<int32_t>(vocab.tokens.size());
    vocab.tokens.push_back(tok);
    vocab.types.push_back(TokenType::kUserDefined);
  }
  for (int32_t i = 0; static_cast<int64_t>(vocab.tokens.size()) < c.vocab_size; ++i) {
    vocab.tokens.push_back(fmt::format("<|unused_{}|>", i));
    vocab.types.push_back(TokenType::kUnused);
  }
  vocab.chat_template = internvl ? kInternVlTemplate : kSmolVlmTemplate;
  const VisionTower tower = synth_vision_tower(r.shape, c, image_id, r.seed, family);
  for (const auto& spec : expected_weights(c)) res.parameters += shape_numel(spec.shape);
  for (const auto& spec : vision_tower_weights(tower.config)) res.parameters += shape_numel(spec.shape);
  write_hf_model(r.out, c, synth_weights(c, r.seed), dtype, &vocab, uint64_t{2} << 30, &tower);
  const int64_t tile = tower.config.image_size;
  nlohmann::json processor = {{"do_convert_rgb", true}, {"do_normalize", true}, {"do_rescale", true},
                              {"do_resize", true},      {"rescale_factor", 1.0 / 255.0}};
  if (internvl) {
    processor.update({{"crop_to_patches", false},  // as InternVL3-hf ships it: its processor tiles anyway
                      {"image_mean", {0.485, 0.456, 0.406}},
                      {"image_processor_type", "GotOcr2ImageProcessor"},
                      {"image_std", {0.229, 0.224, 0.225}},
                      {"max_patches", 6},
                      {"min_patches", 1},
                      {"processor_class", "InternVLProcessor"},
                      {"resample", 3},
                      {"size", {{"height", tile}, {"width", tile}}}});
  } else {
    processor.update({{"do_image_splitting", true},
                      {"do_pad", true},
                      {"image_mean", {0.5, 0.5, 0.5}},
                      {"image_processor_type", "SmolVLMImageProcessor"},
                      {"image_std", {0.5, 0.5, 0.5}},
                      {"max_image_size", {{"longest_edge", tile}}},
                      {"processor_class", "SmolVLMProcessor"},
                      {"resample", 1},
                      {"size", {{"longest_edge", 2 * tile}}}});
  }
  write_file_atomic(r.out / "preprocessor_config.json", processor.dump(2) + "\n");
  res.checkpoint = r.out;
  res.tokenizer = r.out / "tokenizer.json";
  return res;
}

}  // namespace

SynthResult write_synth_model(const SynthRequest& r) {
  if (r.out.empty()) throw_input_error("--out: an output path is required");
  if (r.arch == "smolvlm") return write_synth_vision_language(r, VisionFamily::kSmolVlm);
  if (r.arch == "internvl3") return write_synth_vision_language(r, VisionFamily::kInternVl);
  if (r.arch == "granite_speech") return write_synth_speech(r);
  SynthResult res;
  res.config = synth_config(r.shape, r.arch);
  const ModelConfig& c = res.config;
  for (const auto& spec : expected_weights(c)) res.parameters += shape_numel(spec.shape);
  const WeightSource weights = synth_weights(c, r.seed);
  const int32_t vocab_size = static_cast<int32_t>(c.vocab_size);

  if (r.format == "gguf") {
    auto type = ggml_type_from_name(r.weight_type);
    if (!type || !(*type == GgmlType::kF32 || *type == GgmlType::kF16 || *type == GgmlType::kBF16 ||
                   *type == GgmlType::kQ8_0 || *type == GgmlType::kQ4_0))
      throw_input_error("--weight_type: '{}' is not supported for gguf (valid: f32, f16, bf16, q8_0, q4_0)", r.weight_type);
    BpeVocab vocab = make_synthetic_bpe_vocab(vocab_size, r.seed);
    if (vocab.chat_template.empty()) vocab.chat_template = kChatMlTemplate;
    write_gguf_model(r.out, c, weights, *type, vocab);
    res.checkpoint = r.out;
    res.tokenizer = r.out;
  } else if (r.format == "hf") {
    const DType dtype = hf_weight_dtype(r.weight_type);
    BpeVocab vocab = make_synthetic_bpe_vocab(vocab_size, r.seed);
    if (vocab.chat_template.empty()) vocab.chat_template = kChatMlTemplate;
    write_hf_model(r.out, c, weights, dtype, &vocab);
    res.checkpoint = r.out;
    res.tokenizer = r.out / "tokenizer.json";
  } else if (r.format == "llama2c") {
    if (r.weight_type != "f32")
      throw_input_error("--weight_type: '{}' is not supported for --format llama2c (valid: f32)", r.weight_type);
    SpmVocab vocab = make_synthetic_spm_vocab(vocab_size, r.seed);
    write_llama2c_model(r.out, c, weights, &vocab);
    res.checkpoint = r.out;
    res.tokenizer = r.out.parent_path() / "tokenizer.bin";
  } else {
    throw_input_error("--format: '{}' is not supported (valid: gguf, hf, llama2c)", r.format);
  }
  return res;
}

}  // namespace genai
