// Options become settings here, once: the one place (with src/options itself, the CLI's parsing
// and the front door's plan and checks, context_from_options.h / stage_plan.h) that reads the
// option set by key. Each stage gets its own typed struct (pipeline/stage_settings.h) in its input
// config and reads fields, never keys; tests/layering/option_keys_test.cpp holds the stages to it.
//
// Where to add an option a stage needs: the table (options/option_table.cpp), a field in that
// stage's settings struct (pipeline/stage_settings.h, with the table's default), its line in
// resolve_stage_settings (stage_settings.cpp), and the strategy reads the field.
#pragma once

#include "options/option_values.h"
#include "pipeline/stage_settings.h"

namespace genai::orchestrator {

struct StageSettings {
  pipeline::PreparationSettings preparation;
  pipeline::QuantizationSettings quantization;
  pipeline::CompilationSettings compilation;
  pipeline::InferenceSettings inference;
};

// Reads the values only (as given, else the table's defaults of the values' scope): it checks no
// rule and throws for none of a valid option set; the stages check what they always checked.
StageSettings resolve_stage_settings(const options::OptionValues& values);

// The parts, for callers that need one (tests, `genai eval`).
pipeline::GraphShapeSettings graph_shape_settings(const options::OptionValues& values);
pipeline::CalibrationSettings calibration_settings(const options::OptionValues& values);
pipeline::EvalRequestSettings eval_request_settings(const options::OptionValues& values);

}  // namespace genai::orchestrator
