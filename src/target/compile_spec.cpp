#include "target/compile_spec.h"

#include <fmt/format.h>

#include "target/enum_names.h"

namespace genai::target {
namespace {

using nlohmann::json;

// flatc names carry the enum's prefix; an id outside the enum prints as unknown(<id>).
template <typename E>
std::string name_of(E value, const char* flatc_name, std::initializer_list<std::string_view> prefixes) {
  if (!flatc_name || !*flatc_name) return fmt::format("unknown({})", static_cast<int>(value));
  return snake_enum_name(flatc_name, prefixes);
}

json optional_string(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

}  // namespace

std::optional<QnnOptions> options_from_specs(const std::vector<CompileSpec>& specs) {
  for (const auto& spec : specs) {
    if (spec.key == kQnnCompileSpecKey) return decode_qnn_options(spec.value, kQnnCompileSpecKey);
  }
  return std::nullopt;
}

json qnn_options_to_json(const QnnOptions& o) {
  json j;
  const char* soc = fb::EnumNameQcomChipset(o.soc_model);
  j["soc_model"] = (soc && *soc) ? std::string(soc) : fmt::format("unknown({})", static_cast<int>(o.soc_model));
  j["htp_arch"] = htp_arch_name(o.htp_arch);
  j["vtcm_mb"] = o.vtcm_size_in_mb;
  j["lpai_hardware_version"] = o.lpai_hardware_version ? json(lpai_version_name(*o.lpai_hardware_version)) : json(nullptr);
  j["backend_type"] = backend_type_name(o.backend_type);

  // The HTP fields are flattened (what `genai inspect` shows first); absent HTP options print null.
  const auto& h = o.htp_options;
  j["htp_precision"] = h ? json(name_of(h->precision, fb::EnumNameQnnExecuTorchHtpPrecision(h->precision), {"kHtp"}))
                         : json(nullptr);
  j["htp_performance_mode"] =
      h ? json(name_of(h->performance_mode, fb::EnumNameQnnExecuTorchHtpPerformanceMode(h->performance_mode), {"kHtp"}))
        : json(nullptr);
  j["htp_pd_session"] =
      h ? json(name_of(h->pd_session, fb::EnumNameQnnExecuTorchHtpPdSession(h->pd_session), {"kHtp"})) : json(nullptr);
  j["htp_max_sf_buf_size"] = h ? json(h->max_sf_buf_size) : json(nullptr);
  j["use_conv_hmx"] = h ? json(h->use_conv_hmx) : json(nullptr);
  j["use_dlbc"] = h ? json(h->use_dlbc) : json(nullptr);
  j["use_fold_relu"] = h ? json(h->use_fold_relu) : json(nullptr);
  j["use_multi_contexts"] = h ? json(h->use_multi_contexts) : json(false);
  j["use_slc_allocator"] = h ? json(h->use_slc_allocator) : json(nullptr);
  // Weight sharing exists on HTP and GPU.
  j["use_weight_sharing"] = h ? h->use_weight_sharing : (o.gpu_options ? o.gpu_options->use_weight_sharing : false);

  if (const auto& g = o.gpu_options) {
    j["gpu_options"] = {
        {"performance_mode",
         name_of(g->performance_mode, fb::EnumNameQnnExecuTorchGpuPerformanceMode(g->performance_mode), {"kGpuPerfHint"})},
        {"precision", name_of(g->precision, fb::EnumNameQnnExecuTorchGpuPrecision(g->precision), {"kGpuPrecision"})},
        {"use_memory_optimizations", g->use_memory_optimizations},
        {"use_node_optimizations", g->use_node_optimizations},
        {"use_queue_recording", g->use_queue_recording},
        {"use_weight_sharing", g->use_weight_sharing}};
  } else {
    j["gpu_options"] = nullptr;
  }
  if (const auto& l = o.lpai_options) {
    j["lpai_options"] = {
        {"fps", l->fps},
        {"ftrt_ratio", l->ftrt_ratio},
        {"client_perf_type", name_of(l->client_perf_type, fb::EnumNameQnnExecuTorchLpaiClientPerf(l->client_perf_type), {"k"})},
        {"affinity", name_of(l->affinity, fb::EnumNameQnnExecuTorchLpaiCoreAffinity(l->affinity), {"k"})},
        {"core_selection", l->core_selection},
        {"target_env", name_of(l->target_env, fb::EnumNameQnnExecuTorchLpaiTargetEnv(l->target_env), {"k"})}};
  } else {
    j["lpai_options"] = nullptr;
  }

  j["shared_buffer"] = o.shared_buffer;
  j["online_prepare"] = o.online_prepare;
  j["log_level"] = name_of(o.log_level, fb::EnumNameQnnExecuTorchLogLevel(o.log_level), {"kLogLevel", "kLog"});
  j["profile_level"] = name_of(o.profile_level, fb::EnumNameQnnExecuTorchProfileLevel(o.profile_level), {"kProfile"});
  j["dump_intermediate_outputs"] = o.dump_intermediate_outputs;
  j["is_from_context_binary"] = o.is_from_context_binary;
  j["saver"] = o.saver;
  j["saver_output_dir"] = optional_string(o.saver_output_dir);
  j["library_path"] = optional_string(o.library_path);
  j["use_mha2sha"] = o.use_mha2sha;
  if (o.op_package_infos) {
    json infos = json::array();
    for (const auto& i : *o.op_package_infos) {
      infos.push_back({{"op_package_name", i.op_package_name},
                       {"op_package_path", i.op_package_path},
                       {"interface_provider", i.interface_provider},
                       {"target", name_of(i.target, fb::EnumNameQnnExecuTorchOpPackageTarget(i.target), {})},
                       {"custom_op_name", i.custom_op_name},
                       {"qnn_op_type_name", i.qnn_op_type_name},
                       {"platform", name_of(i.platform, fb::EnumNameQnnExecuTorchOpPackagePlatform(i.platform), {})}});
    }
    j["op_package_infos"] = std::move(infos);
  } else {
    j["op_package_infos"] = nullptr;
  }
  return j;
}

std::optional<nlohmann::json> qnn_options_json_from_specs(const std::vector<CompileSpec>& specs) {
  auto options = options_from_specs(specs);
  if (!options) return std::nullopt;
  return qnn_options_to_json(*options);
}

}  // namespace genai::target
