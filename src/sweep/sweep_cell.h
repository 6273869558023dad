// One cell of a sweep, run wherever it is scheduled: in this process (a local sweep) or in a Ray
// task (`genai sweep --cell`, the same function). A cell runs `genai pipeline --compile_only`
// with its option set (the program and the pipeline's evaluation on it) and `genai bench` on the
// program, each a child process, and writes OUT/<cell>/:
//   options.json      the option set (the children's --config_file)
//   program/          the compiled artifacts
//   compile.json/.log the pipeline's --json output and its log; bench.json/.log the same for bench
//   result.json       written last: the cell's figures, or the step that failed with its exit code
//                     and message. A cell folder without it is unfinished (a killed run) and a
//                     resumed sweep runs the cell again.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sweep/sweep_matrix.h"

namespace genai::sweep {

inline constexpr const char* kCellResultFile = "result.json";

// What a cell needs to run anywhere: the cell, what it measures, the genai executable.
struct CellJob {
  SweepCell cell;
  std::optional<BenchSettings> bench;  // nullopt: no benchmark
  std::filesystem::path out;    // the sweep's folder; the cell writes out/<cell.name>/
  std::filesystem::path genai;  // the executable the steps run (absolute)
};

nlohmann::json cell_job_to_json(const CellJob& job);
// InputError naming `origin` when a field is missing or of the wrong type.
CellJob cell_job_from_json(const nlohmann::json& j, const std::string& origin);

// Runs the cell's steps and writes its folder; returns result.json's content. Failures of a step
// are recorded in the result (status "failed"), not thrown.
nlohmann::json run_cell(const CellJob& job);

// result.json of out/<name>/ when it is complete (parses, names the cell and has a status), else
// null: the cell still has to run.
nlohmann::json completed_cell_result(const std::filesystem::path& out, const std::string& name);

// The result a cell gets when it never wrote one (its process was killed and not retried).
nlohmann::json failed_cell_result(const SweepCell& cell, const std::string& step, int exit_code, const std::string& error);

// Writes `result` as out/<name>/result.json (atomically).
void write_cell_result(const std::filesystem::path& out, const std::string& name, const nlohmann::json& result);

}  // namespace genai::sweep
