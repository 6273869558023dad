#include "llm/compiled_session.h"

#include <set>

#include "core/error.h"

namespace genai {

std::unique_ptr<DecoderScheduler> make_program_session(std::unique_ptr<runtime::ProgramInstance> program) {
  return std::make_unique<DecoderScheduler>(std::make_unique<ProgramMethodRunner>(std::move(program)));
}

std::unique_ptr<DecoderSession> make_compiled_session(const runtime::ArtifactDir& artifacts, CompiledSessionInfo* info) {
  auto it = artifacts.artifacts.find(pipeline::ArtifactKey::kTextDecoder);
  if (it == artifacts.artifacts.end())
    throw_input_error("{}: the manifest names no text_decoder artifact", (artifacts.dir / "manifest.json").string());
  auto runner = std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(it->second, artifacts.checksum_of(it->second)));
  // The token embedding as its own artifact (a decoder taking inputs_embeds): its methods join.
  if (auto emb = artifacts.artifacts.find(pipeline::ArtifactKey::kTokEmbedding); emb != artifacts.artifacts.end())
    runner->add_program(runtime::ProgramInstance::load(emb->second, artifacts.checksum_of(emb->second)));
  const runtime::ProgramInstance& program = runner->program();  // owned by the session from here on
  auto session = std::make_unique<DecoderScheduler>(std::move(runner));
  if (info) {
    info->load_ms = program.load_ms();
    info->max_context_len = session->max_context();
    info->prefill_ar_len = session->prefill_ar_len();
    info->kv_io_dtype = std::string(dtype_name(session->kv_dtype()));
    info->max_seq_len = program.constant_int("get_max_seq_len").value_or(0);
    std::set<std::string> ids;
    for (const auto& m : program.program().methods)
      for (const auto& d : m.delegates) ids.insert(d.id);
    info->delegate_ids.assign(ids.begin(), ids.end());
  }
  return session;
}

}  // namespace genai
