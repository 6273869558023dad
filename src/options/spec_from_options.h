// The QNN compile-spec builder configured from the option set, as llama.py configures the decoder's
// spec: fp16 precision from --use_fp16, weight sharing and shared buffers off under
// --enable_x86_64, use_mha2sha on, performance mode, profiling, online prepare and dumps copied.
//
// Note the shared-buffer defaults: the option set's --shared_buffer defaults OFF (upstream CLI),
// the builder defaults ON (upstream's decoder path passes shared_buffer = not x86). Here the
// decoder rule applies: shared buffers are on unless emulating x86; --shared_buffer can only
// confirm it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "options/option_values.h"
#include "target/qnn_spec_builder.h"

namespace genai::options {

// The options the spec builder reads, as values (pipeline::CompilationSettings carries them).
struct SpecOptions {
  std::optional<std::string> soc_model;
  std::string backend = "htp";
  bool enable_x86_64 = false;
  bool use_fp16 = false;
  bool online_prepare = false;
  bool dump_intermediate_outputs = false;
  int64_t profile_level = 0;
  int64_t htp_performance_mode = 2;
  // --num_sharding: the decoder's layers in this many delegates (QNN contexts); above 1 the spec
  // says use_multi_contexts, and compilation cuts the decoder (compile/layer_sharding.h).
  int64_t num_sharding = 1;
};

SpecOptions spec_options(const OptionValues& values);
// The builder those values configure; the same checks as spec_builder_from_options.
target::QnnSpecBuilder spec_builder(const SpecOptions& options);

// Needs --soc_model (InputError listing the SoCs otherwise). --num_sharding above 1 sets
// use_multi_contexts.
target::QnnSpecBuilder spec_builder_from_options(const OptionValues& values);

}  // namespace genai::options
