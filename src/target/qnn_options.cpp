#include "target/qnn_options.h"

#include <flatbuffers/flatbuffers.h>

#include "core/error.h"

namespace genai::target {
namespace {

flatbuffers::Offset<flatbuffers::String> maybe_string(flatbuffers::FlatBufferBuilder& fbb,
                                                      const std::optional<std::string>& s) {
  return s ? fbb.CreateString(*s) : flatbuffers::Offset<flatbuffers::String>(0);
}

// Flatbuffers strings must be UTF-8, and the JSON view (genai inspect) needs them to be; the
// Verifier does not check the encoding, so strings are checked here.
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

std::optional<std::string> read_string(const flatbuffers::String* s, std::string_view what, std::string_view field) {
  if (!s) return std::nullopt;
  std::string value = s->str();
  if (!valid_utf8(value)) throw_input_error("{}: string field {} is not valid UTF-8", what, field);
  return value;
}

}  // namespace

std::vector<uint8_t> encode_qnn_options(const QnnOptions& o) {
  // force_defaults stays off: fields equal to the schema default are omitted, as flatc does.
  flatbuffers::FlatBufferBuilder fbb(1024);

  auto htp_info = fb::CreateHtpInfo(fbb, o.htp_arch, o.vtcm_size_in_mb);
  flatbuffers::Offset<fb::LpaiInfo> lpai_info = 0;
  if (o.lpai_hardware_version) lpai_info = fb::CreateLpaiInfo(fbb, *o.lpai_hardware_version);
  auto soc_info = fb::CreateSocInfo(fbb, o.soc_model, htp_info, lpai_info);

  flatbuffers::Offset<fb::QnnExecuTorchHtpBackendOptions> htp = 0;
  if (const auto& h = o.htp_options) {
    htp = fb::CreateQnnExecuTorchHtpBackendOptions(fbb, h->max_sf_buf_size, h->performance_mode, h->precision,
                                                   h->pd_session, h->use_conv_hmx, h->use_dlbc, h->use_fold_relu,
                                                   h->use_multi_contexts, h->use_weight_sharing,
                                                   h->use_slc_allocator);
  }
  flatbuffers::Offset<fb::QnnExecuTorchGpuBackendOptions> gpu = 0;
  if (const auto& g = o.gpu_options) {
    gpu = fb::CreateQnnExecuTorchGpuBackendOptions(fbb, g->performance_mode, g->precision,
                                                   g->use_memory_optimizations, g->use_node_optimizations,
                                                   g->use_queue_recording, g->use_weight_sharing);
  }
  flatbuffers::Offset<fb::QnnExecuTorchLpaiBackendOptions> lpai = 0;
  if (const auto& l = o.lpai_options) {
    lpai = fb::CreateQnnExecuTorchLpaiBackendOptions(fbb, l->fps, l->ftrt_ratio, l->client_perf_type, l->affinity,
                                                     l->core_selection, l->target_env);
  }
  auto backend = fb::CreateQnnExecuTorchBackendOptions(fbb, o.backend_type, htp, gpu, lpai);

  auto library_path = maybe_string(fbb, o.library_path);
  auto saver_output_dir = maybe_string(fbb, o.saver_output_dir);
  flatbuffers::Offset<fb::QnnExecuTorchOpPackageOptions> op_packages = 0;
  if (o.op_package_infos) {
    std::vector<flatbuffers::Offset<fb::QnnExecuTorchOpPackageInfo>> infos;
    for (const auto& i : *o.op_package_infos) {
      auto name = fbb.CreateString(i.op_package_name);
      auto path = fbb.CreateString(i.op_package_path);
      auto provider = fbb.CreateString(i.interface_provider);
      auto custom = fbb.CreateString(i.custom_op_name);
      auto qnn_type = fbb.CreateString(i.qnn_op_type_name);
      infos.push_back(
          fb::CreateQnnExecuTorchOpPackageInfo(fbb, name, path, provider, i.target, custom, qnn_type, i.platform));
    }
    op_packages = fb::CreateQnnExecuTorchOpPackageOptions(fbb, fbb.CreateVector(infos));
  }
  auto root = fb::CreateQnnExecuTorchOptions(fbb, soc_info, backend, library_path, o.log_level, o.online_prepare,
                                             o.dump_intermediate_outputs, o.profile_level, o.shared_buffer,
                                             o.is_from_context_binary, o.saver, saver_output_dir, op_packages,
                                             o.use_mha2sha);
  fbb.Finish(root);  // no file identifier: upstream's schema declares none
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

QnnOptions decode_qnn_options(std::span<const uint8_t> bytes, std::string_view what) {
  if (bytes.size() < 8 || bytes.size() > FLATBUFFERS_MAX_BUFFER_SIZE) {
    throw_input_error("{}: {} bytes is not a QnnExecuTorchOptions flatbuffer", what, bytes.size());
  }
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!fb::VerifyQnnExecuTorchOptionsBuffer(verifier)) {
    throw_input_error("{}: malformed QnnExecuTorchOptions flatbuffer ({} bytes fail verification)", what,
                      bytes.size());
  }
  const fb::QnnExecuTorchOptions* root = fb::GetQnnExecuTorchOptions(bytes.data());
  const fb::SocInfo* soc = root->soc_info();
  if (!soc) throw_input_error("{}: QnnExecuTorchOptions has no soc_info", what);
  const fb::QnnExecuTorchBackendOptions* backend = root->backend_options();
  if (!backend) throw_input_error("{}: QnnExecuTorchOptions has no backend_options", what);

  QnnOptions o;
  o.soc_model = soc->soc_model();
  o.htp_arch = soc->htp_info() ? soc->htp_info()->htp_arch() : HtpArch::NONE;
  o.vtcm_size_in_mb = soc->htp_info() ? soc->htp_info()->vtcm_size_in_mb() : 0;
  if (soc->lpai_info()) o.lpai_hardware_version = soc->lpai_info()->lpai_hardware_version();

  o.backend_type = backend->backend_type();
  if (const auto* h = backend->htp_options()) {
    HtpBackendOptions v;
    v.max_sf_buf_size = h->max_sf_buf_size();
    v.performance_mode = h->performance_mode();
    v.precision = h->precision();
    v.pd_session = h->pd_session();
    v.use_conv_hmx = h->use_conv_hmx();
    v.use_dlbc = h->use_dlbc();
    v.use_fold_relu = h->use_fold_relu();
    v.use_multi_contexts = h->use_multi_contexts();
    v.use_weight_sharing = h->use_weight_sharing();
    v.use_slc_allocator = h->use_slc_allocator();
    o.htp_options = v;
  }
  if (const auto* g = backend->gpu_options()) {
    GpuBackendOptions v;
    v.performance_mode = g->performance_mode();
    v.precision = g->precision();
    v.use_memory_optimizations = g->use_memory_optimizations();
    v.use_node_optimizations = g->use_node_optimizations();
    v.use_queue_recording = g->use_queue_recording();
    v.use_weight_sharing = g->use_weight_sharing();
    o.gpu_options = v;
  }
  if (const auto* l = backend->lpai_options()) {
    LpaiBackendOptions v;
    v.fps = l->fps();
    v.ftrt_ratio = l->ftrt_ratio();
    v.client_perf_type = l->client_perf_type();
    v.affinity = l->affinity();
    v.core_selection = l->core_selection();
    v.target_env = l->target_env();
    o.lpai_options = v;
  }

  o.library_path = read_string(root->library_path(), what, "library_path");
  o.log_level = root->log_level();
  o.online_prepare = root->online_prepare();
  o.dump_intermediate_outputs = root->dump_intermediate_outputs();
  o.profile_level = root->profile_level();
  o.shared_buffer = root->shared_buffer();
  o.is_from_context_binary = root->is_from_context_binary();
  o.saver = root->saver();
  o.saver_output_dir = read_string(root->saver_output_dir(), what, "saver_output_dir");
  if (const auto* p = root->op_package_options()) {
    std::vector<OpPackageInfo> infos;
    if (const auto* vec = p->op_package_infos()) {
      for (const auto* i : *vec) {
        if (!i) continue;
        OpPackageInfo v;
        v.op_package_name = read_string(i->op_package_name(), what, "op_package_name").value_or("");
        v.op_package_path = read_string(i->op_package_path(), what, "op_package_path").value_or("");
        v.interface_provider = read_string(i->interface_provider(), what, "interface_provider").value_or("");
        v.target = i->target();
        v.custom_op_name = read_string(i->custom_op_name(), what, "custom_op_name").value_or("");
        v.qnn_op_type_name = read_string(i->qnn_op_type_name(), what, "qnn_op_type_name").value_or("");
        v.platform = i->platform();
        infos.push_back(std::move(v));
      }
    }
    o.op_package_infos = std::move(infos);
  } else {
    o.op_package_infos = std::nullopt;
  }
  o.use_mha2sha = root->use_mha2sha();
  return o;
}

}  // namespace genai::target
