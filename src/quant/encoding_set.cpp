#include "quant/encoding_set.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/thread_pool.h"
#include "core/whole_file.h"
#include "kernels/float_arith.h"
#include "model/weights.h"
#include "quant/gptq.h"

namespace genai::quant {

using graph::Graph;
using graph::OpKind;
using graph::ValueId;
using graph::ValueKind;

bool EncodingSet::is_float() const {
  for (const auto& [name, e] : activations)
    if (!e.is_float()) return false;
  return !activations.empty();
}

void Range::add_columns(const float* data, int64_t rows, int64_t cols) {
  if (column_squares.empty()) column_squares.assign(static_cast<size_t>(cols), 0.0);
  if (static_cast<int64_t>(column_squares.size()) != cols) throw_failure("quant: column statistics of {} and {} columns", column_squares.size(), cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const double v = data[r * cols + c];
      if (std::isfinite(v)) column_squares[static_cast<size_t>(c)] += v * v;
    }
  column_rows += rows;
}

void Range::add_gram(const float* data, int64_t rows, int64_t cols) {
  if (gram.empty()) gram.assign(static_cast<size_t>(cols * cols), 0.0f);
  std::vector<float> t(static_cast<size_t>(rows * cols));  // columns as rows: contiguous dot products
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = data[r * cols + c];
  ThreadPool::global().parallel_for(
      cols,
      [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = 0; j <= i; ++j)
            gram[static_cast<size_t>(i * cols + j)] += kernels::dot8_f32(t.data() + i * rows, t.data() + j * rows, rows);
      },
      8);
}

void Range::add(const float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) continue;
    if (!seen) {
      lo = hi = v;
      seen = true;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
}

namespace {
constexpr int64_t kHistogramBins = 2048;
}  // namespace

void Range::add_to_histogram(const float* data, int64_t n) {
  if (!seen) return;
  if (histogram.empty()) histogram.assign(kHistogramBins, 0.0);
  const float a = std::min(lo, 0.0f), b = std::max(hi, 0.0f);
  if (!(b > a)) return;
  const double inv = static_cast<double>(kHistogramBins) / (static_cast<double>(b) - a);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(data[i])) continue;
    const int64_t bin = std::clamp<int64_t>(static_cast<int64_t>((data[i] - a) * inv), 0, kHistogramBins - 1);
    histogram[static_cast<size_t>(bin)] += 1.0;
  }
}

std::string_view range_method_name(RangeMethod m) { return m == RangeMethod::kMse ? "mse" : "minmax"; }

RangeMethod range_method_from_name(std::string_view name, std::string_view option) {
  if (name == "minmax") return RangeMethod::kMinMax;
  if (name == "mse") return RangeMethod::kMse;
  throw_input_error("{}: unknown range method '{}' (valid: minmax, mse)", option, name);
}

std::pair<float, float> mse_range(const Range& r, int64_t levels) {
  const float a = std::min(r.lo, 0.0f), b = std::max(r.hi, 0.0f);
  if (r.histogram.empty() || !(b > a)) return {a, b};
  const double width = (static_cast<double>(b) - a) / static_cast<double>(r.histogram.size());
  double best = -1.0, best_alpha = 1.0;
  for (int k = 0; k <= 45; ++k) {
    const double alpha = 1.0 - 0.02 * k;
    const double ca = a * alpha, cb = b * alpha, step = (cb - ca) / static_cast<double>(levels);
    double err = 0.0;
    for (size_t i = 0; i < r.histogram.size(); ++i) {
      if (r.histogram[i] == 0.0) continue;
      const double x = a + (static_cast<double>(i) + 0.5) * width;
      const double d = x < ca ? ca - x : (x > cb ? x - cb : 0.0);
      err += r.histogram[i] * (d > 0.0 ? d * d : step * step / 12.0);
    }
    if (best < 0.0 || err < best) {
      best = err;
      best_alpha = alpha;
    }
  }
  return {static_cast<float>(a * best_alpha), static_cast<float>(b * best_alpha)};
}

bool is_passthrough(OpKind kind) {
  return kind == OpKind::kReshape || kind == OpKind::kTranspose || kind == OpKind::kSlice || kind == OpKind::kConcat;
}

Encoding mask_encoding() {
  Encoding e;
  e.dtype = QDType::kU16;
  e.qmin = 0;
  e.qmax = 65535;
  e.scale = 255.0f / 65535.0f;
  e.zero_point = 65535;
  return e;
}

namespace {

bool is_float_value(const graph::Value& v) { return v.type.dtype == DType::kF32; }

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// Follows passthrough producers back to the value that owns the encoding.
ValueId root_of(const Graph& g, ValueId v) {
  for (;;) {
    const auto& val = g.value(v);
    if (val.kind != ValueKind::kOpResult) return v;
    const auto& op = g.ops()[static_cast<size_t>(val.producer)];
    if (!is_passthrough(op.kind)) return v;
    v = op.operands[0];
  }
}

// Cache inputs from their outputs, then passthrough results from their operands (op order).
void complete(const Graph& g, std::map<std::string, Encoding>& acts) {
  for (ValueId id : g.inputs()) {
    const std::string& n = g.value(id).name;
    for (const char* kind : {"k", "v"}) {
      const std::string in_prefix = std::string(kind) + "_cache_";
      if (!starts_with(n, in_prefix)) continue;
      const std::string out_name = std::string(kind) + "_out_" + n.substr(in_prefix.size());
      const auto* out = g.find_output(out_name);
      if (!out) throw_failure("quant: graph {} has input {} but no output {}", g.name(), n, out_name);
      const std::string& root = g.value(root_of(g, out->value)).name;
      auto it = acts.find(root);
      if (it == acts.end()) throw_failure("quant: graph {}: no encoding for {} (feeds {})", g.name(), root, out_name);
      acts[n] = it->second;
    }
  }
  for (const auto& op : g.ops()) {
    if (!is_passthrough(op.kind)) continue;
    const auto& r = g.value(op.result);
    if (!is_float_value(r)) continue;
    auto it = acts.find(g.value(op.operands[0]).name);
    if (it == acts.end())
      throw_failure("quant: graph {}: no encoding for {} (operand of {})", g.name(), g.value(op.operands[0]).name, r.name);
    for (ValueId o : op.operands) {
      auto jt = acts.find(g.value(o).name);
      if (jt == acts.end() || !(jt->second == it->second))
        throw_failure("quant: graph {}: {} joins operands with different encodings ({} vs {})", g.name(), r.name,
                      g.value(op.operands[0]).name, g.value(o).name);
    }
    acts[r.name] = it->second;
  }
}

void check_complete(const Graph& g, const std::map<std::string, Encoding>& acts) {
  for (const auto& v : g.values())
    if (is_float_value(v) && (v.kind == ValueKind::kInput || v.kind == ValueKind::kOpResult) && !acts.count(v.name))
      throw_failure("quant: graph {}: tensor {} has no encoding", g.name(), v.name);
}

}  // namespace

EncodingSet derive_encodings(const Graph& g, const RangeMap& ranges, const Recipe& recipe) {
  EncodingSet set;
  set.recipe = recipe.name;
  const bool fp = recipe.is_float();
  std::set<ValueId> kv_roots;
  ValueId logits_root = -1;  // logits stay 16-bit, after the head and whatever scales or caps them
  for (const auto& o : g.outputs()) {
    if (starts_with(o.name, "k_out_") || starts_with(o.name, "v_out_")) kv_roots.insert(root_of(g, o.value));
    if (o.name == "logits") logits_root = root_of(g, o.value);
  }
  auto calibrated = [&](const std::string& name, QDType dtype, bool symmetric = false) {
    if (fp) return float16_encoding();
    auto it = ranges.find(name);
    if (it == ranges.end() || !it->second.seen)
      throw_failure("quant: no calibration range for tensor {} of graph {}", name, g.name());
    const auto [lo, hi] = mse_range(it->second, qdtype_max(dtype) - qdtype_min(dtype));
    return symmetric ? symmetric_encoding(dtype, lo, hi) : asymmetric_encoding(dtype, lo, hi);
  };
  for (ValueId id : g.inputs()) {
    const auto& v = g.value(id);
    if (!is_float_value(v) || starts_with(v.name, "k_cache_") || starts_with(v.name, "v_cache_")) continue;
    set.activations[v.name] = v.name == "atten_mask" ? (fp ? float16_encoding() : mask_encoding())
                                                     : calibrated(v.name, recipe.scheme_for(v.name).act);
  }
  // A concat does not requantize, so the tensors it joins share one encoding: their roots form a
  // group calibrated on the union of their ranges (upstream's shared quantization spec for cat),
  // with the KV type when any of them feeds the cache. The cache concats join a cache input,
  // which takes its output's encoding anyway, and form no group.
  std::map<ValueId, ValueId> leader;  // root -> group leader (union-find without ranks: tiny groups)
  auto find = [&](ValueId v) {
    while (leader.count(v) && leader[v] != v) v = leader[v];
    return v;
  };
  for (const auto& op : g.ops()) {
    if (op.kind != OpKind::kConcat || !is_float_value(g.value(op.result))) continue;
    std::vector<ValueId> roots;
    bool joins_input = false;
    for (ValueId o : op.operands) {
      const ValueId root = root_of(g, o);
      joins_input = joins_input || g.value(root).kind != ValueKind::kOpResult;
      roots.push_back(root);
    }
    if (joins_input) continue;
    for (size_t i = 1; i < roots.size(); ++i) {
      const ValueId a = find(roots[0]), b = find(roots[i]);
      leader.try_emplace(a, a);
      if (a != b) leader[b] = a;
    }
  }
  std::map<ValueId, Range> group_range;
  std::set<ValueId> group_kv;
  for (const auto& [member, unused] : leader) {
    const ValueId l = find(member);
    auto it = ranges.find(g.value(member).name);
    if (it == ranges.end() || !it->second.seen)
      throw_failure("quant: no calibration range for tensor {} of graph {}", g.value(member).name, g.name());
    Range& u = group_range[l];
    u.lo = u.seen ? std::min(u.lo, it->second.lo) : it->second.lo;
    u.hi = u.seen ? std::max(u.hi, it->second.hi) : it->second.hi;
    u.seen = true;
    if (kv_roots.count(member)) group_kv.insert(l);
  }
  for (const auto& op : g.ops()) {
    const auto& r = g.value(op.result);
    if (!is_float_value(r) || is_passthrough(op.kind)) continue;
    if (starts_with(r.name, "atten_mask.")) {  // the sliding layers' mask: 0 / -255 as the mask input
      set.activations[r.name] = fp ? float16_encoding() : mask_encoding();
      continue;
    }
    QDType dtype = recipe.scheme_for(r.name).act;
    const bool grouped = leader.count(op.result) > 0;
    const ValueId l = grouped ? find(op.result) : op.result;
    const bool kv = grouped ? group_kv.count(l) > 0 : kv_roots.count(op.result) > 0;
    if (kv) dtype = recipe.kv;
    if ((r.name == "lm_head.out" || op.result == logits_root) && !fp) dtype = QDType::kU16;
    if (grouped && !fp) {
      dtype = kv ? recipe.kv : recipe.scheme_for(g.value(l).name).act;
      const Range& u = group_range.at(l);
      const int64_t levels = qdtype_max(dtype) - qdtype_min(dtype);
      const auto [lo, hi] = mse_range(u, levels);
      set.activations[r.name] = kv && dtype == QDType::kU8 ? symmetric_encoding(dtype, lo, hi)
                                                           : asymmetric_encoding(dtype, lo, hi);
      continue;
    }
    set.activations[r.name] = calibrated(r.name, dtype, kv && dtype == QDType::kU8);
  }
  complete(g, set.activations);
  check_complete(g, set.activations);

  // Weights: linear ops first, so a tied table takes the output head's scheme.
  int64_t weight_ops = 0;
  for (const auto& op : g.ops()) weight_ops += op.kind == OpKind::kLinear || op.kind == OpKind::kGather;
  ProgressBar bar(recipe.gptq ? "weights (GPTQ)" : recipe.seq_mse_candidates > 0 ? "weights (range search)" : "weights",
                  weight_ops);
  std::map<std::string, std::shared_ptr<const GptqFactor>> gptq_factors;  // by input: q/k/v share one
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& op : g.ops()) {
      const bool linear = op.kind == OpKind::kLinear, gather = op.kind == OpKind::kGather;
      if ((pass == 0 && !linear) || (pass == 1 && !gather)) continue;
      bar.advance();
      const ValueId wid = op.operands[linear ? 1 : 0];
      const auto& wv = g.value(wid);
      if (wv.kind != ValueKind::kWeight || set.weights.count(wv.name)) continue;
      const bool token_table = gather && wv.name == weight_names::embed_tokens() && recipe.embedding_table;
      const Scheme s = token_table ? *recipe.embedding_table : recipe.scheme_for(g.value(op.result).name);
      const Tensor f = g.weights()->f32(wv.name);
      if (f.rank() != 2) throw_failure("quant: weight {} is not 2-D", wv.name);
      // The range search weighs each weight's error by its input column's mean square.
      WeightSearch search;
      std::vector<float> importance;
      if (linear && recipe.seq_mse_candidates > 0 && !fp) {
        auto in = ranges.find(g.value(op.operands[0]).name);
        if (in != ranges.end() && in->second.column_rows > 0 &&
            static_cast<int64_t>(in->second.column_squares.size()) == f.dim(1)) {
          for (double v : in->second.column_squares)
            importance.push_back(static_cast<float>(v / static_cast<double>(in->second.column_rows)));
          search.importance = importance.data();
          search.candidates = recipe.seq_mse_candidates;
        }
      }
      if (linear && recipe.gptq && !fp) {
        const auto in = ranges.find(g.value(op.operands[0]).name);
        if (in == ranges.end() || static_cast<int64_t>(in->second.gram.size()) != f.dim(1) * f.dim(1))
          throw_failure("quant: GPTQ for {}: its input {} has no calibration statistics", wv.name,
                        g.value(op.operands[0]).name);
        auto& factor = gptq_factors[in->first];
        if (!factor) {
          const int64_t n = f.dim(1);
          std::vector<double> gram(static_cast<size_t>(n * n));
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j <= i; ++j)
              gram[static_cast<size_t>(i * n + j)] = gram[static_cast<size_t>(j * n + i)] =
                  in->second.gram[static_cast<size_t>(i * n + j)];
          factor = std::make_shared<const GptqFactor>(gptq_factor(gram, in->second.column_rows, n));
        }
        set.weights[wv.name] = std::make_shared<const WeightEncoding>(gptq_quantize(
            wv.name, f.data<float>(), f.dim(0), f.dim(1), s.weight, s.block_size, *factor, recipe.seq_mse_candidates));
        continue;
      }
      set.weights[wv.name] = std::make_shared<const WeightEncoding>(
          quantize_weight(wv.name, f.data<float>(), f.dim(0), f.dim(1), fp ? QDType::kF16 : s.weight,
                          linear || token_table ? s.block_size : 0, search));
    }
  bar.finish();
  return set;
}

EncodingSet reconcile_encodings(const Graph& g, const EncodingSet& source) {
  EncodingSet set;
  set.recipe = source.recipe;
  set.weights = source.weights;
  for (const auto& v : g.values()) {
    if (!is_float_value(v)) continue;
    if (v.kind == ValueKind::kOpResult && is_passthrough(g.ops()[static_cast<size_t>(v.producer)].kind)) continue;
    if (v.kind != ValueKind::kOpResult && v.kind != ValueKind::kInput) continue;
    auto it = source.activations.find(v.name);
    if (it != source.activations.end()) set.activations[v.name] = it->second;
  }
  // A decoder taking inputs_embeds takes them as the embedding lookup gives them (embed.out of
  // the calibration graph, the output of tok_embedding_<graph>), and the other way round.
  if (auto lookup = source.activations.find("embed.out");
      g.find_input("inputs_embeds") && !set.activations.count("inputs_embeds") && lookup != source.activations.end())
    set.activations["inputs_embeds"] = lookup->second;
  if (auto embeds = source.activations.find("inputs_embeds"); embeds != source.activations.end() && !set.activations.count("embed.out"))
    for (const auto& v : g.values())
      if (v.name == "embed.out" && v.kind == ValueKind::kOpResult) set.activations["embed.out"] = embeds->second;
  // The sliding layers' window mask (0 / -255, as the mask input) appears only in graphs whose
  // context passes the window; a calibration graph within the window has none, so it takes the
  // mask input's encoding here, as derive_encodings gives it where it is calibrated.
  if (auto mask = source.activations.find("atten_mask"); mask != source.activations.end())
    for (const auto& op : g.ops()) {
      const auto& r = g.value(op.result);
      if (is_float_value(r) && !is_passthrough(op.kind) && starts_with(r.name, "atten_mask.") && !set.activations.count(r.name))
        set.activations[r.name] = mask->second;
    }
  complete(g, set.activations);
  check_complete(g, set.activations);
  for (const auto& op : g.ops())
    if (op.kind == OpKind::kLinear && !set.weights.count(g.value(op.operands[1]).name))
      throw_failure("quant: graph {}: weight {} has no encoding", g.name(), g.value(op.operands[1]).name);
  return set;
}

namespace {

nlohmann::json encoding_json(const Encoding& e) {
  return {{"dtype", std::string(qdtype_name(e.dtype))},
          {"scale", static_cast<double>(e.scale)},
          {"zero_point", e.zero_point},
          {"qmin", e.qmin},
          {"qmax", e.qmax}};
}

template <typename T>
void append(std::string& bin, const T* data, size_t n) {
  bin.append(reinterpret_cast<const char*>(data), n * sizeof(T));
}

}  // namespace

std::filesystem::path save_encodings(const EncodingSet& set, const Graph& g, const std::filesystem::path& dir,
                                     const std::string& stem) {
  nlohmann::json j;
  j["format"] = "genai-qdq-1";
  j["recipe"] = set.recipe;
  j["graph"] = g.name();
  j["binary"] = stem + ".bin";
  nlohmann::json acts = nlohmann::json::object();
  for (const auto& v : g.values()) {
    auto it = set.activations.find(v.name);
    if (it != set.activations.end()) acts[v.name] = encoding_json(it->second);
  }
  j["activations"] = acts;
  std::string bin;
  nlohmann::json ws = nlohmann::json::object();
  for (const auto& v : g.values()) {
    if (v.kind != ValueKind::kWeight) continue;
    auto it = set.weights.find(v.name);
    if (it == set.weights.end()) continue;
    const WeightEncoding& w = *it->second;
    nlohmann::json e{{"dtype", std::string(qdtype_name(w.dtype))},
                     {"rows", w.rows},
                     {"cols", w.cols},
                     {"block_size", w.block_size},
                     {"scales_offset", bin.size()},
                     {"scales_count", w.scales.size()}};
    append(bin, w.scales.data(), w.scales.size());
    // The file holds every code, stored or rounded: a reader needs no weights to use it.
    const std::vector<int16_t> codes = w.is_float() ? std::vector<int16_t>{} : weight_codes(w, g.weights()->get(v.name));
    e["values_offset"] = bin.size();
    e["values_count"] = codes.size();
    append(bin, codes.data(), codes.size());
    ws[v.name] = e;
  }
  j["weights"] = ws;
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / (stem + ".bin"), std::string_view(bin));
  const auto path = dir / (stem + ".json");
  write_file_atomic(path, std::string_view(j.dump(1) + "\n"));
  return path;
}

EncodingSet load_encodings(const std::filesystem::path& json_path) {
  auto read = [](const std::filesystem::path& p) {
    std::optional<std::string> text = read_whole_file(p);
    if (!text) throw_input_error("{}: cannot open", p.string());
    return std::move(*text);
  };
  const std::string file = json_path.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read(json_path));
  } catch (const nlohmann::json::exception& e) {
    throw_input_error("{}: not valid JSON: {}", file, e.what());
  }
  EncodingSet set;
  try {
    if (j.value("format", "") != "genai-qdq-1") throw_input_error("{}: key 'format' is not genai-qdq-1", file);
    set.recipe = j.at("recipe").get<std::string>();
    const std::string bin_name = j.at("binary").get<std::string>();
    if (bin_name.find('/') != std::string::npos || bin_name.find('\\') != std::string::npos)
      throw_input_error("{}: key 'binary' must be a file name beside it, got '{}'", file, bin_name);
    const std::string bin = read(json_path.parent_path() / bin_name);
    auto dtype_of = [&](const nlohmann::json& e, const std::string& name) {
      QDType t;
      if (!qdtype_from_name(e.at("dtype").get<std::string>(), &t))
        throw_input_error("{}: tensor {}: unknown dtype '{}'", file, name, e.at("dtype").get<std::string>());
      return t;
    };
    for (const auto& [name, e] : j.at("activations").items()) {
      Encoding enc;
      enc.dtype = dtype_of(e, name);
      enc.scale = e.at("scale").get<float>();
      enc.zero_point = e.at("zero_point").get<int32_t>();
      enc.qmin = e.at("qmin").get<int64_t>();
      enc.qmax = e.at("qmax").get<int64_t>();
      if (!enc.is_float() && (!(enc.scale > 0.0f) || !std::isfinite(enc.scale) || enc.qmin > enc.qmax ||
                              enc.qmin < qdtype_min(enc.dtype) || enc.qmax > qdtype_max(enc.dtype)))
        throw_input_error("{}: activation {}: invalid scale/qmin/qmax", file, name);
      set.activations[name] = enc;
    }
    for (const auto& [name, e] : j.at("weights").items()) {
      auto w = std::make_shared<WeightEncoding>();
      w->dtype = dtype_of(e, name);
      w->rows = e.at("rows").get<int64_t>();
      w->cols = e.at("cols").get<int64_t>();
      w->block_size = e.at("block_size").get<int64_t>();
      const uint64_t so = e.at("scales_offset").get<uint64_t>(), sc = e.at("scales_count").get<uint64_t>();
      const uint64_t vo = e.at("values_offset").get<uint64_t>(), vc = e.at("values_count").get<uint64_t>();
      const bool ok_shape = w->rows > 0 && w->cols > 0 && w->rows < (int64_t{1} << 31) && w->cols < (int64_t{1} << 31) &&
                            w->block_size >= 0 && (w->block_size == 0 || w->cols % w->block_size == 0);
      if (!ok_shape) throw_input_error("{}: weight {}: invalid rows/cols/block_size", file, name);
      const uint64_t want_scales = w->is_float() ? 0 : static_cast<uint64_t>(w->rows * w->blocks());
      const uint64_t want_values = w->is_float() ? 0 : static_cast<uint64_t>(w->rows * w->cols);
      if (sc != want_scales || vc != want_values || so > bin.size() || sc > (bin.size() - so) / sizeof(float) ||
          vo > bin.size() || vc > (bin.size() - vo) / sizeof(int16_t))
        throw_input_error("{}: weight {}: scales/values out of the bounds of {}", file, name, bin_name);
      w->scales.resize(sc);
      w->stored_codes.resize(vc);
      if (sc) std::memcpy(w->scales.data(), bin.data() + so, sc * sizeof(float));
      if (vc) std::memcpy(w->stored_codes.data(), bin.data() + vo, vc * sizeof(int16_t));
      for (int16_t q : w->stored_codes)
        if (q < qdtype_min(w->dtype) || q > qdtype_max(w->dtype))
          throw_input_error("{}: weight {}: value {} outside {}", file, name, q, qdtype_name(w->dtype));
      set.weights[name] = std::move(w);
    }
  } catch (const nlohmann::json::exception& e) {
    throw_input_error("{}: missing or mistyped key: {}", file, e.what());
  }
  return set;
}

}  // namespace genai::quant
