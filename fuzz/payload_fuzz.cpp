// libFuzzer target: our backends' delegate payload (the GNPL flatbuffer, docs/payload.md) decoded
// and verified into a method plan (backends/exec/decode.cpp). Two input forms:
//  - a raw payload (identifier "GNPL" at byte 4): named data is served as the payload's tensors
//    declare it (zero bytes of the size each key's first use implies), so verification gets past
//    the weights and into the ops;
//  - a .pte program: every GNPL delegate is decoded against the program's named data, as at load.
// Malformed input must end in InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "backends/exec/method_plan.h"
#include "backends/payload/payload_format.h"
#include "core/error.h"
#include "kernels/packed_linear.h"
#include "pte/program_reader.h"

namespace {

namespace fb = genai::backends::fb;
using genai::backends::exec::decode_method;

constexpr uint64_t kMaxServed = uint64_t{1} << 24;  // bigger named data is not served (the run stays fast)

// Bytes per named-data key as the payload's tensors declare them; sizes the decoder would reject
// anyway (negative dims, overflow) are left out.
std::map<std::string, uint64_t> declared_named_data(const fb::Method* m) {
  std::map<std::string, uint64_t> sizes;
  if (!m->tensors()) return sizes;
  for (const fb::Tensor* t : *m->tensors()) {
    if (!t || !t->weight() || t->storage() != fb::Storage::Data) continue;
    uint64_t numel = 1;
    std::vector<int64_t> shape;
    bool ok = true;
    // As the decoder does: the Verifier lets an int64 vector sit at a 4-byte-aligned address, where
    // reading its elements is undefined; the decoder refuses such a shape, so nothing is served.
    if (t->shape() && reinterpret_cast<uintptr_t>(t->shape()->Data()) % alignof(int64_t) != 0) continue;
    if (t->shape())
      for (int64_t d : *t->shape()) {
        if (d < 0 || d > (int64_t{1} << 24) || (d != 0 && numel > kMaxServed / static_cast<uint64_t>(d))) ok = false;
        if (!ok) break;
        numel *= static_cast<uint64_t>(d);
        shape.push_back(d);
      }
    if (!ok) continue;
    const fb::WeightData* w = t->weight();
    auto serve = [&](const flatbuffers::String* key, uint64_t bytes) {
      if (key && bytes <= kMaxServed) sizes.emplace(key->str(), bytes);
    };
    const uint64_t esize = genai::backends::element_size(t->type());
    if (w->format() == fb::DataFormat::Plain || shape.size() != 2) {
      serve(w->data(), numel * esize);
      continue;
    }
    const int64_t rows = shape[0], cols = shape[1], bs = w->block_size();
    if (bs < 0 || (bs > 0 && cols % bs != 0)) continue;
    const uint64_t per_row = static_cast<uint64_t>(rows) * static_cast<uint64_t>(bs > 0 ? cols / bs : 1) * 4;
    serve(w->scales(), per_row);
    switch (w->format()) {
      case fb::DataFormat::PackedInt8:
      case fb::DataFormat::PackedInt4:
      case fb::DataFormat::PackedInt16: {
        const int bits = w->format() == fb::DataFormat::PackedInt4 ? 4 : w->format() == fb::DataFormat::PackedInt8 ? 8 : 16;
        serve(w->data(), genai::kernels::packed_linear_bytes(rows, cols, bits));
        serve(w->block_sums(), per_row);
        if (bs > 0) serve(w->block_meta(), genai::kernels::block_meta_bytes(rows, cols, bs));
        break;
      }
      default:
        serve(w->data(), numel * esize);
    }
  }
  return sizes;
}

void decode_raw(std::span<const uint8_t> payload) {
  // The declared sizes come from a verified copy; the decoder verifies the payload itself again.
  std::vector<uint64_t> aligned((payload.size() + 7) / 8);
  std::memcpy(aligned.data(), payload.data(), payload.size());
  const auto* buf = reinterpret_cast<const uint8_t*>(aligned.data());
  std::map<std::string, uint64_t> sizes;
  flatbuffers::Verifier verifier(buf, payload.size(), 64, 10'000'000);
  if (fb::VerifyMethodBuffer(verifier)) sizes = declared_named_data(fb::GetMethod(buf));
  static std::vector<uint64_t> zeros(kMaxServed / 8);
  const auto lookup = [&](std::string_view key) -> std::span<const uint8_t> {
    auto it = sizes.find(std::string(key));
    if (it == sizes.end()) return {};
    return {reinterpret_cast<const uint8_t*>(zeros.data()), it->second};
  };
  (void)decode_method(payload, lookup, "fuzz.gnpl");
}

void decode_program(std::span<const uint8_t> bytes) {
  const genai::pte::LoadedProgram p = genai::pte::read_program_bytes(bytes, "fuzz.pte");
  const auto lookup = [&](std::string_view key) -> std::span<const uint8_t> {
    for (const auto& n : p.program.named_data)
      if (n.key == key) return n.data.bytes();
    return {};
  };
  for (const auto& m : p.program.methods)
    for (const auto& d : m.delegates)
      if (d.id == genai::backends::kHtpDelegateId || d.id == genai::backends::kGpuDelegateId) {
        try {
          (void)decode_method(d.processed.bytes(), lookup, m.name);
        } catch (const genai::InputError&) {
        }
      }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  try {
    if (size >= 8 && std::memcmp(data + 4, genai::backends::kPayloadIdentifier.data(), 4) == 0)
      decode_raw(input);
    else
      decode_program(input);
  } catch (const genai::InputError& e) {
    // GENAI_FUZZ_VERBOSE=1 shows why an input is rejected (to check that the seeds decode).
    static const bool verbose = std::getenv("GENAI_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "rejected: %s\n", e.what());
  }
  return 0;
}
