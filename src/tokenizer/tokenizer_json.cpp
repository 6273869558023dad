#include "tokenizer/tokenizer_json.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/whole_file.h"
#include "tokenizer/bpe_tokenizer.h"

namespace genai {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

json read_json(const std::filesystem::path& path) {
  const std::optional<std::string> text = read_whole_file(path);
  if (!text) throw_input_error("{}: cannot open the tokenizer file", path.string());
  try {
    return json::parse(*text);
  } catch (const json::exception& e) {
    throw_input_error("{}: not valid JSON: {}", path.string(), e.what());
  }
}

[[noreturn]] void unsupported(const std::filesystem::path& path, const std::string& feature) {
  throw_input_error("{}: unsupported tokenizer.json feature: {}", path.string(), feature);
}

// Typed accessors that turn JSON type errors into InputErrors naming the file and key.
template <typename T>
T get_or(const std::filesystem::path& path, const json& obj, const char* key, T fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw_input_error("{}: key {:?} has the wrong type", path.string(), key);
  }
}

std::string type_of(const std::filesystem::path& path, const json& obj, const char* section) {
  if (!obj.is_object()) throw_input_error("{}: {} is not an object", path.string(), section);
  return get_or<std::string>(path, obj, "type", "");
}

std::string regex_escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

SplitBehavior parse_behavior(const std::filesystem::path& path, const std::string& b) {
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  unsupported(path, fmt::format("Split behavior {:?} (valid: Isolated, Removed, MergedWithPrevious, "
                                "MergedWithNext, Contiguous)",
                                b));
}

// The components list of a Sequence `what` (pre_tokenizer, normalizer, ...) under `key`.
const json& sequence_list(const std::filesystem::path& path, const json& node, const char* key, const char* what) {
  auto it = node.find(key);
  if (it == node.end() || !it->is_array()) throw_input_error("{}: Sequence {} without a list", path.string(), what);
  return *it;
}

void parse_pre_tokenizer(const std::filesystem::path& path, const json& node, std::vector<PreTokenizerStep>& steps) {
  if (node.is_null()) return;
  const std::string type = type_of(path, node, "pre_tokenizer");
  if (type == "Sequence") {
    for (const auto& child : sequence_list(path, node, "pretokenizers", "pre_tokenizer")) parse_pre_tokenizer(path, child, steps);
    return;
  }
  PreTokenizerStep s;
  if (type == "ByteLevel") {
    s.kind = PreTokenizerStep::Kind::kByteLevel;
    s.add_prefix_space = get_or<bool>(path, node, "add_prefix_space", false);
    s.use_regex = get_or<bool>(path, node, "use_regex", true);
  } else if (type == "Digits") {
    s.kind = PreTokenizerStep::Kind::kDigits;
    s.individual_digits = get_or<bool>(path, node, "individual_digits", false);
  } else if (type == "Split") {
    s.kind = PreTokenizerStep::Kind::kSplit;
    auto pat = node.find("pattern");
    if (pat == node.end() || !pat->is_object()) throw_input_error("{}: Split pre_tokenizer without a pattern", path.string());
    if (pat->contains("Regex"))
      s.pattern = get_or<std::string>(path, *pat, "Regex", "");
    else if (pat->contains("String"))
      s.pattern = regex_escape(get_or<std::string>(path, *pat, "String", ""));
    else
      unsupported(path, "Split pattern kind (valid: Regex, String)");
    s.invert = get_or<bool>(path, node, "invert", false);
    s.behavior = parse_behavior(path, get_or<std::string>(path, node, "behavior", "Isolated"));
  } else {
    unsupported(path, fmt::format("pre_tokenizer {:?} (supported: ByteLevel, Split, Digits, Sequence)", type));
  }
  steps.push_back(std::move(s));
}

// A Replace step's literal pattern and content (a String pattern only: a Regex one is refused).
std::pair<std::string, std::string> parse_replace(const std::filesystem::path& path, const json& node, const char* where) {
  auto pat = node.find("pattern");
  if (pat == node.end() || !pat->is_object() || !pat->contains("String"))
    unsupported(path, fmt::format("{} Replace without a String pattern", where));
  return {get_or<std::string>(path, *pat, "String", ""), get_or<std::string>(path, node, "content", "")};
}

// Normalizer: none (byte-level models), or literal Replace steps, alone or in a Sequence
// (SentencePiece-style BPE: Gemma's " " -> "▁").
void parse_normalizer(const std::filesystem::path& path, const json& node,
                      std::vector<std::pair<std::string, std::string>>& out) {
  if (node.is_null()) return;
  const std::string type = type_of(path, node, "normalizer");
  if (type == "Sequence") {
    for (const auto& child : sequence_list(path, node, "normalizers", "normalizer")) parse_normalizer(path, child, out);
    return;
  }
  if (type != "Replace") unsupported(path, fmt::format("normalizer {:?} (supported: Replace, Sequence)", type));
  out.push_back(parse_replace(path, node, "normalizer"));
}

// Decoder: ByteLevel (byte-level models), or a Sequence of literal Replace, ByteFallback and Fuse
// (SentencePiece-style). Returns whether it is ByteLevel.
bool parse_decoder(const std::filesystem::path& path, const json& node, BpeModelSpec& spec) {
  if (node.is_null()) unsupported(path, "decoder null (supported: ByteLevel, or Sequence of Replace, ByteFallback, Fuse)");
  const std::string type = type_of(path, node, "decoder");
  if (type == "ByteLevel") return true;
  if (type != "Sequence")
    unsupported(path, fmt::format("decoder {:?} (supported: ByteLevel, or Sequence of Replace, ByteFallback, Fuse)", type));
  for (const auto& child : sequence_list(path, node, "decoders", "decoder")) {
    const std::string t = type_of(path, child, "decoder");
    if (t == "Replace") spec.decoder_replace.push_back(parse_replace(path, child, "decoder"));
    else if (t == "ByteFallback" && !spec.byte_fallback) unsupported(path, "decoder ByteFallback without model.byte_fallback");
    else if (t != "ByteFallback" && t != "Fuse")
      unsupported(path, fmt::format("decoder {:?} in a Sequence (supported: Replace, ByteFallback, Fuse)", t));
  }
  return false;
}

// Everything read from a tokenizer.json (+ tokenizer_config.json) before choosing the output form.
struct ParsedTokenizerJson {
  BpeModelSpec spec;
  bool bos_from_template = false;
  std::string chat_template;
};

// Finds bos from a TemplateProcessing post-processor ("<s> $A" style templates).
void parse_post_processor(const std::filesystem::path& path, const json& node, ParsedTokenizerJson& out,
                          const std::unordered_map<std::string, int32_t>& ids) {
  if (node.is_null()) return;
  const std::string type = type_of(path, node, "post_processor");
  if (type == "ByteLevel") return;  // only adjusts offsets
  if (type == "Sequence") {
    for (const auto& child : sequence_list(path, node, "processors", "post_processor")) parse_post_processor(path, child, out, ids);
    return;
  }
  if (type != "TemplateProcessing")
    unsupported(path, fmt::format("post_processor {:?} (supported: ByteLevel, TemplateProcessing, Sequence)", type));
  auto single = node.find("single");
  if (single == node.end() || !single->is_array() || single->empty()) return;
  const json& first = (*single)[0];
  if (!first.is_object() || !first.contains("SpecialToken")) return;
  const std::string name = get_or<std::string>(path, first["SpecialToken"], "id", "");
  int32_t id = -1;
  if (auto st = node.find("special_tokens"); st != node.end() && st->is_object() && st->contains(name)) {
    auto list = (*st)[name].find("ids");
    if (list != (*st)[name].end() && list->is_array() && !list->empty() && (*list)[0].is_number_integer())
      id = (*list)[0].get<int32_t>();
  }
  if (id < 0) {
    auto it = ids.find(name);
    if (it != ids.end()) id = it->second;
  }
  if (id >= 0) {
    out.spec.bos_id = id;
    out.spec.add_bos = true;
    out.bos_from_template = true;
  }
}

std::string token_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return {};
}

ParsedTokenizerJson parse_tokenizer_json_unchecked(const std::filesystem::path& path) {
  const json root = read_json(path);
  if (!root.is_object()) throw_input_error("{}: the top level is not an object", path.string());
  ParsedTokenizerJson out;
  BpeModelSpec& spec = out.spec;
  spec.origin = path.string();

  // Model: BPE only.
  auto model_it = root.find("model");
  if (model_it == root.end() || !model_it->is_object()) throw_input_error("{}: missing key \"model\"", path.string());
  const json& model = *model_it;
  const std::string mtype = get_or<std::string>(path, model, "type", model.contains("merges") ? "BPE" : "");
  if (mtype != "BPE") unsupported(path, fmt::format("model.type {:?} (supported: BPE)", mtype));
  if (get_or<double>(path, model, "dropout", 0.0) != 0.0) unsupported(path, "model.dropout");
  if (!get_or<std::string>(path, model, "continuing_subword_prefix", "").empty())
    unsupported(path, "model.continuing_subword_prefix");
  if (!get_or<std::string>(path, model, "end_of_word_suffix", "").empty()) unsupported(path, "model.end_of_word_suffix");
  spec.byte_fallback = get_or<bool>(path, model, "byte_fallback", false);
  spec.fuse_unk = get_or<bool>(path, model, "fuse_unk", false);
  spec.ignore_merges = get_or<bool>(path, model, "ignore_merges", false);

  // Vocabulary: model.vocab plus added tokens (which may lie beyond it, as in Llama 3).
  std::unordered_map<std::string, int32_t> ids;
  int64_t max_id = -1;
  auto vocab_it = model.find("vocab");
  if (vocab_it == model.end() || !vocab_it->is_object()) throw_input_error("{}: missing key \"model.vocab\"", path.string());
  for (auto it = vocab_it->begin(); it != vocab_it->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() >= (1 << 30))
      throw_input_error("{}: model.vocab entry {:?} has an invalid id", path.string(), it.key());
    ids[it.key()] = it.value().get<int32_t>();
    max_id = std::max<int64_t>(max_id, it.value().get<int64_t>());
  }
  if (auto at = root.find("added_tokens"); at != root.end() && !at->is_null()) {
    if (!at->is_array()) throw_input_error("{}: added_tokens is not a list", path.string());
    for (const auto& t : *at) {
      if (!t.is_object()) throw_input_error("{}: added_tokens entry is not an object", path.string());
      AddedToken a;
      a.content = get_or<std::string>(path, t, "content", "");
      const int64_t id = get_or<int64_t>(path, t, "id", -1);
      if (a.content.empty() || id < 0 || id >= (1 << 30))
        throw_input_error("{}: added_tokens entry {:?} has no valid id/content", path.string(), a.content);
      a.id = static_cast<int32_t>(id);
      a.special = get_or<bool>(path, t, "special", false);
      a.lstrip = get_or<bool>(path, t, "lstrip", false);
      a.rstrip = get_or<bool>(path, t, "rstrip", false);
      a.single_word = get_or<bool>(path, t, "single_word", false);
      ids.emplace(a.content, a.id);
      max_id = std::max<int64_t>(max_id, id);
      spec.added.push_back(std::move(a));
    }
  }
  // Ids must cover 0..max_id without gaps, so max_id is bounded by the number of entries; checking
  // that first keeps a hostile id from sizing a huge allocation.
  if (static_cast<size_t>(max_id + 1) > vocab_it->size() + spec.added.size())
    throw_input_error("{}: token id {} leaves gaps: model.vocab and added_tokens hold only {} entries", path.string(),
                      max_id, vocab_it->size() + spec.added.size());
  spec.tokens.assign(static_cast<size_t>(max_id + 1), std::string());
  std::vector<bool> filled(spec.tokens.size(), false);
  for (auto it = vocab_it->begin(); it != vocab_it->end(); ++it) {
    const auto id = it.value().get<size_t>();
    spec.tokens[id] = it.key();
    filled[id] = true;
  }
  for (const auto& a : spec.added)
    if (!filled[a.id]) {
      spec.tokens[a.id] = a.content;
      filled[a.id] = true;
    }
  for (size_t i = 0; i < filled.size(); ++i)
    if (!filled[i]) throw_input_error("{}: token id {} is missing from model.vocab and added_tokens", path.string(), i);

  // Merges: "a b" strings (tokenizers < 0.20) or [a, b] pairs.
  if (auto mg = model.find("merges"); mg != model.end() && !mg->is_null()) {
    if (!mg->is_array()) throw_input_error("{}: model.merges is not a list", path.string());
    spec.merges.reserve(mg->size());
    for (const auto& m : *mg) {
      if (m.is_string()) {
        const auto& s = m.get_ref<const std::string&>();
        const size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
          throw_input_error("{}: merge {:?} is not two tokens separated by one space", path.string(), s);
        spec.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        spec.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
      } else {
        throw_input_error("{}: model.merges entry {} is neither \"a b\" nor [a, b]", path.string(), m.dump());
      }
    }
  }
  if (auto unk = model.find("unk_token"); unk != model.end() && unk->is_string()) {
    auto it = ids.find(unk->get<std::string>());
    if (it != ids.end()) spec.unk_id = it->second;
  }

  // Byte-level (a ByteLevel pre-tokenizer step and decoder, no normalizer) or SentencePiece-style
  // (literal replacements in the normalizer and the decoder, characters as symbols).
  if (auto nz = root.find("normalizer"); nz != root.end()) parse_normalizer(path, *nz, spec.normalizer_replace);
  if (auto pt = root.find("pre_tokenizer"); pt != root.end()) parse_pre_tokenizer(path, *pt, spec.pre_steps);
  bool has_byte_level = false;
  for (const auto& s : spec.pre_steps) has_byte_level |= s.kind == PreTokenizerStep::Kind::kByteLevel;
  auto dec = root.find("decoder");
  const bool byte_level_decoder = parse_decoder(path, dec == root.end() ? json() : *dec, spec);
  if (has_byte_level != byte_level_decoder || (has_byte_level && !spec.normalizer_replace.empty()))
    unsupported(path, has_byte_level ? "a ByteLevel pre_tokenizer without a ByteLevel decoder and no normalizer"
                                     : "a pre_tokenizer without a ByteLevel step beside a ByteLevel decoder");
  if (auto pp = root.find("post_processor"); pp != root.end()) parse_post_processor(path, *pp, out, ids);

  // tokenizer_config.json beside it: bos/eos names, add_bos_token, chat template.
  const auto config_path = path.parent_path() / "tokenizer_config.json";
  if (std::filesystem::is_regular_file(config_path)) {
    const json cfg = read_json(config_path);
    if (cfg.is_object()) {
      auto lookup = [&](const char* key) -> int32_t {
        auto it = cfg.find(key);
        if (it == cfg.end()) return -2;  // absent: keep what tokenizer.json said
        auto id = ids.find(token_text(*it));
        return id == ids.end() ? -1 : id->second;
      };
      if (int32_t b = lookup("bos_token"); b != -2) spec.bos_id = b;
      if (int32_t e = lookup("eos_token"); e != -2) spec.eos_id = e;
      if (auto it = cfg.find("add_bos_token"); it != cfg.end() && it->is_boolean()) spec.add_bos = it->get<bool>();
      if (auto it = cfg.find("chat_template"); it != cfg.end()) {
        if (it->is_string()) {
          out.chat_template = it->get<std::string>();
        } else if (it->is_array()) {  // [{name, template}, ...]: the "default" one
          for (const auto& t : *it)
            if (t.is_object() && t.value("name", "") == "default" && t.contains("template") && t["template"].is_string())
              out.chat_template = t["template"].get<std::string>();
        }
      }
    }
  }
  return out;
}

// Any JSON type surprise not caught by the typed accessors is still bad input, not a crash.
ParsedTokenizerJson parse_tokenizer_json(const std::filesystem::path& path) {
  try {
    return parse_tokenizer_json_unchecked(path);
  } catch (const json::exception& e) {
    throw_input_error("{}: malformed tokenizer file: {}", path.string(), e.what());
  }
}

bool same_steps(const std::vector<PreTokenizerStep>& a, const std::vector<PreTokenizerStep>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    if (x.kind != y.kind) return false;
    switch (x.kind) {
      case PreTokenizerStep::Kind::kSplit:
        if (x.pattern != y.pattern || x.invert != y.invert || x.behavior != y.behavior) return false;
        break;
      case PreTokenizerStep::Kind::kDigits:
        if (x.individual_digits != y.individual_digits) return false;
        break;
      case PreTokenizerStep::Kind::kByteLevel:
        if (x.add_prefix_space != y.add_prefix_space || x.use_regex != y.use_regex) return false;
        break;
    }
  }
  return true;
}

ordered_json step_json(const PreTokenizerStep& s) {
  ordered_json j;
  switch (s.kind) {
    case PreTokenizerStep::Kind::kByteLevel:
      j["type"] = "ByteLevel";
      j["add_prefix_space"] = s.add_prefix_space;
      j["trim_offsets"] = true;
      j["use_regex"] = s.use_regex;
      break;
    case PreTokenizerStep::Kind::kDigits:
      j["type"] = "Digits";
      j["individual_digits"] = s.individual_digits;
      break;
    case PreTokenizerStep::Kind::kSplit: {
      static const char* names[] = {"Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
      j["type"] = "Split";
      j["pattern"] = ordered_json{{"Regex", s.pattern}};
      j["behavior"] = names[static_cast<int>(s.behavior)];
      j["invert"] = s.invert;
      break;
    }
  }
  return j;
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::filesystem::path& path) {
  ParsedTokenizerJson parsed = parse_tokenizer_json(path);
  auto tok = std::make_unique<BpeTokenizer>(std::move(parsed.spec));
  tok->set_chat_template(std::move(parsed.chat_template));
  return tok;
}

BpeVocab read_tokenizer_json_vocab(const std::filesystem::path& path) {
  ParsedTokenizerJson parsed = parse_tokenizer_json(path);
  BpeModelSpec& spec = parsed.spec;
  BpeVocab v;
  for (const auto& name : PreTokenizer::known_names()) {
    if (same_steps(spec.pre_steps, PreTokenizer::named_steps(name)) &&
        spec.ignore_merges == PreTokenizer::named_ignore_merges(name)) {
      v.pre_tokenizer = name;
      break;
    }
  }
  if (v.pre_tokenizer.empty()) {
    std::string known;
    for (const auto& n : PreTokenizer::known_names()) known += (known.empty() ? "" : ", ") + n;
    unsupported(path, fmt::format("a pre_tokenizer/ignore_merges configuration that is none of the named ones ({})", known));
  }
  if (spec.byte_fallback) unsupported(path, "model.byte_fallback in a byte-level vocabulary");
  v.tokens = std::move(spec.tokens);
  v.types.assign(v.tokens.size(), TokenType::kNormal);
  for (const auto& a : spec.added) v.types[a.id] = a.special ? TokenType::kControl : TokenType::kUserDefined;
  v.merges.reserve(spec.merges.size());
  for (const auto& [a, b] : spec.merges) {
    if (a.find(' ') != std::string::npos || b.find(' ') != std::string::npos)
      unsupported(path, fmt::format("merge of tokens containing a space ({:?}, {:?})", a, b));
    v.merges.push_back(a + " " + b);
  }
  v.bos_id = spec.bos_id;
  v.eos_id = spec.eos_id;
  v.add_bos = spec.add_bos;
  v.chat_template = std::move(parsed.chat_template);
  return v;
}

void write_tokenizer_json(const BpeVocab& vocab, const std::filesystem::path& path) {
  const std::string& pre = vocab.pre_tokenizer;
  const bool spm = vocab.sentencepiece_style;
  const auto steps = spm ? std::vector<PreTokenizerStep>{} : PreTokenizer::named_steps(pre);  // InputError for unknown names
  const auto n = static_cast<int32_t>(vocab.tokens.size());
  if (!vocab.types.empty() && vocab.types.size() != vocab.tokens.size())
    throw_input_error("{}: vocabulary has {} tokens but {} token types", path.string(), n, vocab.types.size());
  if (vocab.add_bos && (vocab.bos_id < 0 || vocab.bos_id >= n))
    throw_input_error("{}: add_bos is set but bos_id {} is not a token", path.string(), vocab.bos_id);

  ordered_json added = ordered_json::array();
  ordered_json vocab_json = ordered_json::object();
  std::set<std::string_view> seen;
  for (int32_t i = 0; i < n; ++i) {
    const std::string& t = vocab.tokens[i];
    if (!seen.insert(t).second)
      throw_input_error("{}: token {:?} (id {}) appears twice; tokenizer.json cannot store that", path.string(), t, i);
    // Appended directly: `seen` already rejects duplicates, and operator[] on an ordered_json
    // object searches linearly (quadratic over a 49k-token vocabulary).
    vocab_json.get_ref<ordered_json::object_t&>().emplace_back(t, i);
    const TokenType type = vocab.types.empty() ? TokenType::kNormal : vocab.types[i];
    if (type == TokenType::kControl || type == TokenType::kUserDefined) {
      const bool special = type == TokenType::kControl;
      added.push_back(ordered_json{{"id", i},
                                   {"content", t},
                                   {"single_word", false},
                                   {"lstrip", false},
                                   {"rstrip", false},
                                   {"normalized", !special},
                                   {"special", special}});
    }
  }
  ordered_json merges = ordered_json::array();
  for (size_t r = 0; r < vocab.merges.size(); ++r) {
    const std::string& m = vocab.merges[r];
    const size_t sp = m.find(' ');
    if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
      throw_input_error("{}: merge {} {:?} is not two tokens separated by one space", path.string(), r, m);
    merges.push_back(ordered_json::array({m.substr(0, sp), m.substr(sp + 1)}));
  }

  ordered_json root;
  root["version"] = "1.0";
  root["truncation"] = nullptr;
  root["padding"] = nullptr;
  root["added_tokens"] = std::move(added);
  const ordered_json space = ordered_json{{"String", " "}}, meta = ordered_json{{"String", "\xe2\x96\x81"}};
  root["normalizer"] = spm ? ordered_json{{"type", "Replace"}, {"pattern", space}, {"content", "\xe2\x96\x81"}} : ordered_json(nullptr);
  if (steps.empty()) {
    root["pre_tokenizer"] = nullptr;
  } else if (steps.size() == 1) {
    root["pre_tokenizer"] = step_json(steps[0]);
  } else {
    ordered_json list = ordered_json::array();
    for (const auto& s : steps) list.push_back(step_json(s));
    root["pre_tokenizer"] = ordered_json{{"type", "Sequence"}, {"pretokenizers", std::move(list)}};
  }
  if (vocab.add_bos) {
    const std::string& bos = vocab.tokens[vocab.bos_id];
    auto special = [&](int type_id) { return ordered_json{{"SpecialToken", {{"id", bos}, {"type_id", type_id}}}}; };
    auto seq = [](const char* id, int type_id) { return ordered_json{{"Sequence", {{"id", id}, {"type_id", type_id}}}}; };
    root["post_processor"] = ordered_json{
        {"type", "TemplateProcessing"},
        {"single", ordered_json::array({special(0), seq("A", 0)})},
        {"pair", ordered_json::array({special(0), seq("A", 0), special(1), seq("B", 1)})},
        {"special_tokens", {{bos, {{"id", bos}, {"ids", {vocab.bos_id}}, {"tokens", {bos}}}}}}};
  } else {
    root["post_processor"] = nullptr;
  }
  root["decoder"] =
      spm ? ordered_json{{"type", "Sequence"},
                         {"decoders", ordered_json::array({ordered_json{{"type", "Replace"}, {"pattern", meta}, {"content", " "}},
                                                           ordered_json{{"type", "ByteFallback"}}, ordered_json{{"type", "Fuse"}}})}}
          : ordered_json{{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
  int32_t unk = -1;
  for (int32_t i = 0; i < n && spm; ++i)
    if (vocab.tokens[i] == "<unk>") unk = i;
  root["model"] = ordered_json{{"type", "BPE"},
                               {"dropout", nullptr},
                               {"unk_token", unk >= 0 ? ordered_json("<unk>") : ordered_json(nullptr)},
                               {"continuing_subword_prefix", nullptr},
                               {"end_of_word_suffix", nullptr},
                               {"fuse_unk", spm},
                               {"byte_fallback", spm},
                               {"ignore_merges", !spm && PreTokenizer::named_ignore_merges(pre)},
                               {"vocab", std::move(vocab_json)},
                               {"merges", std::move(merges)}};
  std::string text;
  try {
    text = root.dump(1);
  } catch (const nlohmann::json::exception& e) {
    throw_input_error("{}: vocabulary is not valid UTF-8 text: {}", path.string(), e.what());
  }
  text.push_back('\n');
  write_file_atomic(path, text);
}

void write_tokenizer_config_json(const BpeVocab& vocab, const std::filesystem::path& path) {
  const auto n = static_cast<int32_t>(vocab.tokens.size());
  auto name = [&](int32_t id) -> ordered_json {
    if (id < 0 || id >= n) return nullptr;
    return vocab.tokens[id];
  };
  ordered_json cfg;
  cfg["add_bos_token"] = vocab.add_bos;
  cfg["bos_token"] = name(vocab.bos_id);
  cfg["eos_token"] = name(vocab.eos_id);
  if (!vocab.chat_template.empty()) cfg["chat_template"] = vocab.chat_template;
  cfg["tokenizer_class"] = "PreTrainedTokenizerFast";
  std::string text;
  try {
    text = cfg.dump(2);
  } catch (const nlohmann::json::exception& e) {
    throw_input_error("{}: tokenizer config is not valid UTF-8 text: {}", path.string(), e.what());
  }
  text.push_back('\n');
  write_file_atomic(path, text);
}

}  // namespace genai
