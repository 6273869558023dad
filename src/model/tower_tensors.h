// An encoder tower's tensors (the vision and speech towers) between our canonical names and shapes
// (what the graph builders read) and the checkpoint's: reading them all, writing them all, and the
// processor settings every tower's folder carries.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/safetensors_file.h"
#include "model/weight_layout.h"
#include "model/weights.h"

namespace genai {

// Where the checkpoint keeps a canonical tensor, and in which shape.
struct TowerTensor {
  std::string name;
  Shape shape;
};
using TowerTensorOf = std::function<TowerTensor(const WeightSpec&)>;

// Each tensor of `specs` from `ckpt`, under its stored name or "model." + it (the module layout
// of newer checkpoints), its stored shape checked, reshaped to the canonical shape. InputError
// naming `dir` for a missing tensor, and the file for another shape.
Weights read_tower_tensors(const std::filesystem::path& dir, const std::vector<WeightSpec>& specs,
                           const SafetensorsCheckpoint& ckpt, const TowerTensorOf& stored);
// The tensors to write under their stored names and shapes; Failure naming `tower` for a tensor
// whose shape is not its spec's.
std::vector<SafetensorsTensorToWrite> tower_tensors_to_write(std::string_view tower, const std::vector<WeightSpec>& specs,
                                                             const Weights& weights, const TowerTensorOf& stored);
// dir/preprocessor_config.json; InputError naming `dir` and `settings` (whose settings it holds)
// when absent.
std::filesystem::path tower_processor_config(const std::filesystem::path& dir, std::string_view settings);

}  // namespace genai
