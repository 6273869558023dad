// libFuzzer target: the .pte reader on arbitrary bytes. A malformed program must end in
// InputError (never a crash, a sanitizer report, or another exception type); an accepted one must
// be consistent and re-serialise, and its blobs must lie inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"

using namespace genai::pte;

namespace {

void check_inside(const Blob& b, std::span<const uint8_t> input) {
  if (b.empty()) return;
  const uint8_t* lo = input.data();
  const uint8_t* hi = input.data() + input.size();
  if (b.data() < lo || b.data() + b.size() > hi) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  LoadedProgram p;
  try {
    p = read_program_bytes(input, "fuzz.pte");
  } catch (const genai::InputError&) {
    return 0;
  }
  if (find_program_problem(p.program)) std::abort();
  // Blobs view the input (no copies), and lie within it.
  if (reinterpret_cast<uintptr_t>(data) % alignof(std::max_align_t) == 0) {
    for (const auto& m : p.program.methods) {
      for (const auto& d : m.delegates) check_inside(d.processed, input);
      for (const auto& v : m.values)
        if (const auto* t = std::get_if<TensorValue>(&v); t && t->data) check_inside(*t->data, input);
    }
    for (const auto& n : p.program.named_data) check_inside(n.data, input);
  }
  // Whatever the reader accepts, the writer can write and the reader reads back equal.
  const auto bytes = serialize_program(p.program);
  if (!(read_program_bytes(bytes, "rewritten").program == p.program)) {
    // NaN doubles compare unequal to themselves; anything else is a real mismatch.
    bool has_nan = false;
    for (const auto& m : p.program.methods)
      for (const auto& v : m.values) {
        if (const auto* d = std::get_if<Double>(&v); d && d->value != d->value) has_nan = true;
        if (const auto* l = std::get_if<DoubleList>(&v))
          for (double x : l->items) has_nan |= x != x;
      }
    if (!has_nan) std::abort();
  }
  return 0;
}
