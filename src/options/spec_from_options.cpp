#include "options/spec_from_options.h"

#include "core/error.h"
#include "options/validate.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai::options {

SpecOptions spec_options(const OptionValues& v) {
  SpecOptions o;
  o.soc_model = v.get_optional_string("soc_model");
  o.backend = v.get_string("backend");
  o.enable_x86_64 = v.get_flag("enable_x86_64");
  o.use_fp16 = v.get_flag("use_fp16");
  o.online_prepare = v.get_flag("online_prepare");
  o.dump_intermediate_outputs = v.get_flag("dump_intermediate_outputs");
  o.profile_level = v.get_int("profile_level");
  o.htp_performance_mode = v.get_int("htp_performance_mode");
  o.num_sharding = effective_num_sharding(v);
  return o;
}

target::QnnSpecBuilder spec_builder(const SpecOptions& o) {
  if (!o.soc_model) throw_input_error("--soc_model is required to compile; valid choices: {}", target::valid_soc_names());
  target::QnnSpecBuilder b(*o.soc_model, target::resolve_backend_type(o.backend));
  b.x86_emulation(o.enable_x86_64)
      .use_fp16(o.use_fp16)
      .use_multi_contexts(o.num_sharding > 1)
      .use_weight_sharing(true)
      .shared_buffer(true)
      .use_mha2sha(true)
      .online_prepare(o.online_prepare)
      .dump_intermediate_outputs(o.dump_intermediate_outputs)
      .profile_level(static_cast<int>(o.profile_level))
      .htp_performance_mode(static_cast<int>(o.htp_performance_mode));
  // QNN log level stays "error" (upstream's llama flow never passes debug=True).
  return b;
}

target::QnnSpecBuilder spec_builder_from_options(const OptionValues& v) {
  return spec_builder(spec_options(v));
}

}  // namespace genai::options
