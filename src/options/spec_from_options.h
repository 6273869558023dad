// The QNN compile-spec builder configured from the option set, as llama.py configures the decoder's
// spec: fp16 precision from --use_fp16, weight sharing and shared buffers off under
// --enable_x86_64, use_mha2sha on, performance mode, profiling, online prepare and dumps copied.
//
// Note the shared-buffer defaults: the option set's --shared_buffer defaults OFF (upstream CLI),
// the builder defaults ON (upstream's decoder path passes shared_buffer = not x86). Here the
// decoder rule applies: shared buffers are on unless emulating x86; --shared_buffer can only
// confirm it.
#pragma once

#include "options/option_values.h"
#include "target/qnn_spec_builder.h"

namespace genai::options {

// Needs --soc_model (InputError listing the SoCs otherwise). num_sharding > 1 sets
// use_multi_contexts.
target::QnnSpecBuilder spec_builder_from_options(const OptionValues& values, int num_sharding = 1);

}  // namespace genai::options
