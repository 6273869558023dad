#include "options/spec_from_options.h"

#include "core/error.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai::options {

target::QnnSpecBuilder spec_builder_from_options(const OptionValues& v, int num_sharding) {
  auto soc = v.get_optional_string("soc_model");
  if (!soc) throw_input_error("--soc_model is required to compile; valid choices: {}", target::valid_soc_names());
  target::QnnSpecBuilder b(*soc, target::resolve_backend_type(v.get_string("backend")));
  b.x86_emulation(v.get_flag("enable_x86_64"))
      .use_fp16(v.get_flag("use_fp16"))
      .use_multi_contexts(num_sharding > 1)
      .use_weight_sharing(true)
      .shared_buffer(true)
      .use_mha2sha(true)
      .online_prepare(v.get_flag("online_prepare"))
      .dump_intermediate_outputs(v.get_flag("dump_intermediate_outputs"))
      .profile_level(static_cast<int>(v.get_int("profile_level")))
      .htp_performance_mode(static_cast<int>(v.get_int("htp_performance_mode")));
  // QNN log level stays "error" (upstream's llama flow never passes debug=True).
  return b;
}

}  // namespace genai::options
