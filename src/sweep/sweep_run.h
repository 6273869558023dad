// Running a sweep's cells: here, a few at a time, or as Ray tasks on a cluster (one task per
// cell, each running `genai sweep --cell` on whatever node Ray packs it onto by its CPUs and
// memory). Cells whose result.json is complete with status "ok" are skipped, so an interrupted
// sweep resumes where it stopped; failed cells run again. The results of every cell then become
// OUT/results.json, OUT/results.csv and OUT/report.html.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sweep/sweep_matrix.h"

namespace genai::sweep {

struct SweepRunOptions {
  std::filesystem::path out;
  std::filesystem::path genai;  // the executable the cells run (absolute)
  int jobs = 1;                 // cells at a time, without Ray
  std::string ray;              // "" = local; "auto" or HOST:PORT = that cluster
  int ray_max_retries = 1;      // a cell whose worker died is run again this many times
};

struct SweepSummary {
  int cells = 0, ran = 0, skipped = 0, failed = 0;
  double seconds = 0;
  nlohmann::json results;  // results.json's content
};

SweepSummary run_sweep(const SweepMatrix& matrix, const SweepRunOptions& options);

// CPUs a cell asks Ray for: its option set's --threads (0: every core of a node, counted as
// this machine's).
int cell_cpus(const SweepCell& cell);

}  // namespace genai::sweep
