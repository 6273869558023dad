// A compiled program run without its artifact dir (`genai run --pte FILE`), as upstream's llama
// runner runs a .pte: no manifest.json, so what the runner needs comes from the program itself
// (the kv_forward / prefill_forward signatures and the constant methods), the SoC and backend
// from its delegates' compile specs, and the tokenizer from the caller. Nothing records the
// file's checksum: the load checks its structure and the hashes its named-data keys carry.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/artifact_dir.h"

namespace genai::runtime {

// The constant methods a lone program must carry (the artifact dir's runs read them too, but do
// without get_max_seq_len): get_max_seq_len, get_max_context_len, get_vocab_size, get_n_layers.
const std::vector<std::string>& lone_program_constants();

// The program as an ArtifactDir without manifest: artifacts = {text_decoder: the file},
// has_manifest false, no tokenizer or checksums, soc_model / backend from the first QNN compile
// spec (empty when none names a known SoC). InputError naming the file (and `option`, the flag
// that gave it) when it is missing, not a readable program, or lacks the kv_forward method or a
// constant of lone_program_constants() (all that is missing, at once).
ArtifactDir open_lone_program(const std::filesystem::path& pte, std::string_view option = "--pte");

}  // namespace genai::runtime
