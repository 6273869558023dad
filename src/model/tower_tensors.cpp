#include "model/tower_tensors.h"

#include <cstring>

#include "core/error.h"

namespace genai {

Weights read_tower_tensors(const std::filesystem::path& dir, const std::vector<WeightSpec>& specs,
                           const SafetensorsCheckpoint& ckpt, const TowerTensorOf& stored) {
  Weights w;
  w.set_source(dir.string());
  for (const WeightSpec& spec : specs) {
    const TowerTensor s = stored(spec);
    auto loc = ckpt.find(s.name);
    if (!loc.file) loc = ckpt.find("model." + s.name);
    if (!loc.file) throw_input_error("{}: missing tensor {}", dir.string(), s.name);
    check_weight_shape(loc.file->source(), s.name, {spec.name, s.shape}, loc.entry->shape);
    w.add(spec.name, loc.file->tensor_f32(*loc.entry).reshaped(spec.shape));
  }
  return w;
}

std::vector<SafetensorsTensorToWrite> tower_tensors_to_write(std::string_view tower, const std::vector<WeightSpec>& specs,
                                                             const Weights& weights, const TowerTensorOf& stored) {
  std::vector<SafetensorsTensorToWrite> out;
  for (const WeightSpec& spec : specs) {
    const Tensor& t = weights.get(spec.name);
    if (t.shape() != spec.shape)
      throw_failure("{}: tensor {} has shape {}, expected {}", tower, spec.name, shape_to_string(t.shape()),
                    shape_to_string(spec.shape));
    TowerTensor s = stored(spec);
    out.push_back({std::move(s.name), DType::kF32, std::move(s.shape), [t] {
                     std::vector<uint8_t> bytes(static_cast<size_t>(t.numel()) * sizeof(float));
                     std::memcpy(bytes.data(), t.data<float>(), bytes.size());
                     return bytes;
                   }});
  }
  return out;
}

std::filesystem::path tower_processor_config(const std::filesystem::path& dir, std::string_view settings) {
  std::filesystem::path p = dir / "preprocessor_config.json";
  if (!std::filesystem::exists(p)) throw_input_error("{}: no preprocessor_config.json ({})", dir.string(), settings);
  return p;
}

}  // namespace genai
