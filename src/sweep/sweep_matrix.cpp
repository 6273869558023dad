#include "sweep/sweep_matrix.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "core/error.h"
#include "core/whole_file.h"
#include "options/option_values.h"
#include "options/validate.h"

namespace genai::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::array<std::string_view, 8> kKeys = {"models",     "soc_models", "lowerings", "quant_recipes",
                                                   "techniques", "options",    "bench",     "comment"};
// Options a cell's axes or the sweep itself set: a matrix naming one elsewhere would be ambiguous.
constexpr std::array<std::string_view, 9> kReserved = {"checkpoint", "soc_model",    "lowering",    "quant_recipe", "artifact",
                                                       "config_file", "compile_only", "json", "prompt"};
// File options whose relative paths mean the matrix file's folder (cells run wherever Ray puts
// them, so each path is made absolute).
constexpr std::array<std::string_view, 6> kPathOptions = {"tokenizer", "tokenizer_model",   "tokenizer_bin",
                                                          "eval_text", "quant_recipe_file", "calib_samples"};

std::string cell_part(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == '-';
    out += ok ? c : '_';
  }
  return out;
}

// A list of strings under `key`, or InputError naming the file and the key.
std::vector<std::string> string_list(const json& m, std::string_view key, const fs::path& origin,
                                     std::vector<std::string> fallback) {
  auto it = m.find(key);
  if (it == m.end()) return fallback;
  if (!it->is_array() || it->empty())
    throw_input_error("sweep matrix {}: '{}' must be a non-empty list of strings", origin.string(), key);
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string() || v.get<std::string>().empty())
      throw_input_error("sweep matrix {}: '{}' must be a non-empty list of strings, got {}", origin.string(), key, v.dump());
    out.push_back(v.get<std::string>());
  }
  return out;
}

fs::path absolute_from(const fs::path& base, const std::string& p) {
  const fs::path path(p);
  return fs::weakly_canonical(path.is_absolute() ? path : base / path);
}

// The options object under `where` (one of the matrix's "options" objects), its paths made absolute.
json option_object(const json& v, std::string_view where, const fs::path& origin, const fs::path& base) {
  if (!v.is_object()) throw_input_error("sweep matrix {}: {} must be an object of option values", origin.string(), where);
  json out = v;
  for (const auto& [key, value] : v.items()) {
    if (std::find(kReserved.begin(), kReserved.end(), key) != kReserved.end())
      throw_input_error("sweep matrix {}: {} sets '{}', which the sweep sets itself (from its axes or for each cell)",
                        origin.string(), where, key);
    if (std::find(kPathOptions.begin(), kPathOptions.end(), key) == kPathOptions.end()) continue;
    if (value.is_string()) {
      out[key] = absolute_from(base, value.get<std::string>()).string();
    } else if (value.is_array()) {
      for (auto& item : out[key])
        if (item.is_string()) item = absolute_from(base, item.get<std::string>()).string();
    }
  }
  return out;
}

struct Model {
  std::string name;
  fs::path checkpoint;
  json options = json::object();
};

std::vector<Model> models_of(const json& m, const fs::path& origin, const fs::path& base) {
  auto it = m.find("models");
  if (it == m.end() || !it->is_array() || it->empty())
    throw_input_error("sweep matrix {}: 'models' must be a non-empty list (a checkpoint path, or "
                      "{{\"name\", \"checkpoint\", \"options\"}})",
                      origin.string());
  std::vector<Model> out;
  for (const auto& v : *it) {
    Model model;
    if (v.is_string()) {
      model.checkpoint = absolute_from(base, v.get<std::string>());
    } else if (v.is_object() && v.contains("checkpoint") && v["checkpoint"].is_string()) {
      for (const auto& [key, _] : v.items())
        if (key != "name" && key != "checkpoint" && key != "options")
          throw_input_error("sweep matrix {}: a model has unknown key '{}' (valid: name, checkpoint, options)",
                            origin.string(), key);
      model.checkpoint = absolute_from(base, v["checkpoint"].get<std::string>());
      if (v.contains("name")) {
        if (!v["name"].is_string() || v["name"].get<std::string>().empty())
          throw_input_error("sweep matrix {}: a model's 'name' must be a non-empty string", origin.string());
        model.name = v["name"].get<std::string>();
      }
      if (v.contains("options")) model.options = option_object(v["options"], "a model's 'options'", origin, base);
    } else {
      throw_input_error("sweep matrix {}: each of 'models' is a checkpoint path or an object with 'checkpoint', got {}",
                        origin.string(), v.dump());
    }
    std::error_code ec;
    if (!fs::exists(model.checkpoint, ec))
      throw_input_error("sweep matrix {}: checkpoint {} does not exist", origin.string(), model.checkpoint.string());
    if (model.name.empty()) model.name = model.checkpoint.stem().string();
    out.push_back(std::move(model));
  }
  return out;
}

struct Technique {
  std::string name;
  json options = json::object();
};

std::vector<Technique> techniques_of(const json& m, const fs::path& origin, const fs::path& base) {
  auto it = m.find("techniques");
  if (it == m.end()) return {Technique{"plain", json::object()}};
  if (!it->is_array() || it->empty())
    throw_input_error("sweep matrix {}: 'techniques' must be a non-empty list of {{\"name\", \"options\"}}", origin.string());
  std::vector<Technique> out;
  for (const auto& v : *it) {
    if (!v.is_object() || !v.contains("name") || !v["name"].is_string() || v["name"].get<std::string>().empty())
      throw_input_error("sweep matrix {}: each technique set is {{\"name\": ..., \"options\": {{...}}}}, got {}",
                        origin.string(), v.dump());
    for (const auto& [key, _] : v.items())
      if (key != "name" && key != "options")
        throw_input_error("sweep matrix {}: technique set '{}' has unknown key '{}' (valid: name, options)", origin.string(),
                          v["name"].get<std::string>(), key);
    Technique t{v["name"].get<std::string>(), json::object()};
    if (v.contains("options")) t.options = option_object(v["options"], fmt::format("technique set '{}'", t.name), origin, base);
    out.push_back(std::move(t));
  }
  return out;
}

int64_t bench_int(const json& b, std::string_view key, int64_t fallback, int64_t min, const fs::path& origin) {
  auto it = b.find(key);
  if (it == b.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < min)
    throw_input_error("sweep matrix {}: bench '{}' must be an integer of at least {}, got {}", origin.string(), key, min,
                      it->dump());
  return it->get<int64_t>();
}

}  // namespace

SweepMatrix sweep_matrix_from_json(const json& m, const fs::path& origin) {
  if (!m.is_object()) throw_input_error("sweep matrix {}: expected a JSON object", origin.string());
  for (const auto& [key, _] : m.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      std::string valid;
      for (auto k : kKeys) valid += (valid.empty() ? "" : ", ") + std::string(k);
      throw_input_error("sweep matrix {}: unknown key '{}' (valid: {})", origin.string(), key, valid);
    }
  }
  const fs::path base = fs::absolute(origin).parent_path();
  SweepMatrix out;
  out.file = origin;
  const std::vector<Model> models = models_of(m, origin, base);
  const auto socs = string_list(m, "soc_models", origin, {"SM8650"});
  const auto lowerings = string_list(m, "lowerings", origin, {"genai"});
  const auto recipes = string_list(m, "quant_recipes", origin, {"16a8w"});
  const std::vector<Technique> techniques = techniques_of(m, origin, base);
  const json common = m.contains("options") ? option_object(m["options"], "'options'", origin, base) : json::object();
  if (auto b = m.find("bench"); b != m.end()) {
    if (b->is_boolean()) {
      if (!b->get<bool>()) out.bench.reset();
    } else if (b->is_object()) {
      for (const auto& [key, _] : b->items())
        if (key != "pp" && key != "tg" && key != "reps" && key != "threads")
          throw_input_error("sweep matrix {}: bench has unknown key '{}' (valid: pp, tg, reps, threads)", origin.string(), key);
      BenchSettings& s = *out.bench;
      s.pp = bench_int(*b, "pp", s.pp, 0, origin);
      s.tg = bench_int(*b, "tg", s.tg, 0, origin);
      s.reps = bench_int(*b, "reps", s.reps, 1, origin);
      s.threads = bench_int(*b, "threads", s.threads, 1, origin);
    } else {
      throw_input_error("sweep matrix {}: 'bench' must be false or an object {{pp, tg, reps, threads}}", origin.string());
    }
  }

  std::set<std::string> names;
  for (const Model& model : models) {
    for (const std::string& soc : socs) {
      for (const std::string& lowering : lowerings) {
        for (const std::string& recipe : recipes) {
          for (const Technique& t : techniques) {
            SweepCell c;
            c.name = fmt::format("{}-{}-{}-{}-{}", cell_part(model.name), cell_part(soc), cell_part(lowering),
                                 cell_part(recipe), cell_part(t.name));
            if (!names.insert(c.name).second)
              throw_input_error("sweep matrix {}: two cells are named '{}'; give the models or technique sets distinct names",
                                origin.string(), c.name);
            c.axes = {{"model", model.name}, {"soc_model", soc}, {"lowering", lowering}, {"quant_recipe", recipe},
                      {"techniques", t.name}};
            json o = common;
            o.update(model.options);
            o.update(t.options);
            // A cell computes on as many threads as it asks the scheduler for.
            if (!o.contains("threads")) o["threads"] = out.bench ? out.bench->threads : 1;
            o["checkpoint"] = model.checkpoint.string();
            o["soc_model"] = soc;
            o["lowering"] = lowering;
            o["quant_recipe"] = recipe;
            options::OptionValues values(options::kPipelineScope);
            try {
              values.load_config_json(o, fmt::format("cell {}", c.name));
              options::validate(values);
            } catch (const InputError& e) {
              throw_input_error("sweep matrix {}: {}", origin.string(), e.what());
            }
            c.options = std::move(o);
            c.checkpoint = model.checkpoint;
            std::error_code ec;
            c.checkpoint_bytes = fs::is_regular_file(model.checkpoint, ec) ? fs::file_size(model.checkpoint, ec) : 0;
            out.cells.push_back(std::move(c));
          }
        }
      }
    }
  }
  return out;
}

SweepMatrix read_sweep_matrix(const fs::path& file) {
  const std::optional<std::string> text = read_whole_file(file);
  if (!text) throw_input_error("sweep matrix {}: cannot read the file", file.string());
  json m;
  try {
    m = json::parse(*text);
  } catch (const json::parse_error& e) {
    throw_input_error("sweep matrix {}: not valid JSON: {}", file.string(), e.what());
  }
  return sweep_matrix_from_json(m, file);
}

uint64_t estimated_cell_memory(const SweepCell& cell) {
  // A folder checkpoint (Hugging Face) counts its files.
  uint64_t bytes = cell.checkpoint_bytes;
  std::error_code ec;
  if (fs::is_directory(cell.checkpoint, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(cell.checkpoint, ec))
      if (e.is_regular_file(ec)) bytes += e.file_size(ec);
  }
  return bytes + bytes / 8 + (uint64_t{512} << 20);
}

}  // namespace genai::sweep
