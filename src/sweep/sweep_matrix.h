// A sweep's matrix: lists of models, SoCs, lowerings, recipes and technique sets, and what each
// cell measures. Every combination is one cell: one compile (with the pipeline's evaluation on
// the compiled program) and one benchmark, run as `genai` child processes with the cell's option
// set as their --config_file. The option sets go through the option table's checks when the
// matrix is read, so a misspelt option or value fails before any cell runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace genai::sweep {

// What `genai bench` measures on each cell's program.
struct BenchSettings {
  int64_t pp = 32;       // prompt tokens of the prefill test (0: none)
  int64_t tg = 32;       // generated tokens of the decode test (0: none)
  int64_t reps = 1;
  int64_t threads = 1;   // also the CPUs a cell asks Ray for
};

struct SweepCell {
  std::string name;   // OUT/<name>/: [A-Za-z0-9._-] only, unique in the matrix
  nlohmann::json axes;     // {"model", "soc_model", "lowering", "quant_recipe", "techniques"}
  nlohmann::json options;  // the option set (a --config_file object) of its compile
  std::filesystem::path checkpoint;  // absolute
  uint64_t checkpoint_bytes = 0;     // for the memory a cell asks Ray for
};

struct SweepMatrix {
  std::filesystem::path file;
  std::vector<SweepCell> cells;  // in matrix order: models, then SoCs, lowerings, recipes, techniques
  std::optional<BenchSettings> bench = BenchSettings{};  // nullopt: no benchmark ("bench": false)
};

// Reads and checks a matrix file (format: docs/sweep.md). InputError naming the file, the key
// and, for an option, the cell and the valid choices.
SweepMatrix read_sweep_matrix(const std::filesystem::path& file);
SweepMatrix sweep_matrix_from_json(const nlohmann::json& matrix, const std::filesystem::path& origin);

// Bytes of memory a cell is expected to need at its peak (compile of an f16 checkpoint: about
// 1.1 times the file, plus the runtime's working set), what the Ray scheduler packs cells by.
uint64_t estimated_cell_memory(const SweepCell& cell);

}  // namespace genai::sweep
