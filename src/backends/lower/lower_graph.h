// Lowering one graph (GraphBundle) to our payload (schema/genai_payload.fbs): typed tensors with
// their encodings, the op list, weights packed for the kernels and stored as content-addressed
// named data, and a memory plan of every activation and float temporary. Shared by the htp and
// gpu backends; they differ in which program they ask for and in what they support.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "backends/payload/payload_format.h"
#include "compile/backend.h"
#include "pte/program.h"

namespace genai::backends {

enum class ProgramPrecision {
  kQuantized,  // integer activations from the bundle's encodings (htp)
  kFloat16,    // float32 tensors holding float16-rounded values, float16 weights (htp fp16, gpu)
};

// The weight tensors of one program's methods, lowered once: a decoder's kv_forward and
// prefill_forward read every weight the same way, so the second method takes the first one's
// payload tensors and named data (the same bytes, held once) instead of rounding and packing
// every weight again and holding a second copy until the program is written.
class SharedWeightData {
 public:
  struct Entry {
    payload_fb::TensorT tensor;         // the payload tensor, with its named-data keys
    std::vector<pte::NamedData> data;   // the named data it refers to
  };
  const Entry* find(const std::string& key) const;
  void insert(const std::string& key, Entry entry);

 private:
  std::map<std::string, Entry> entries_;
};

// Lowers `bundle` as method `method_name` for `delegate_id`. kQuantized needs a quantized bundle
// with integer encodings (check_support runs first; anything else is a Failure). `shared`: the
// weight tensors of the program's methods lowered before this one (null: none shared).
compile::LoweredMethod lower_graph(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                   const compile::LoweringTarget& target, std::string_view delegate_id,
                                   ProgramPrecision precision, SharedWeightData* shared = nullptr);

}  // namespace genai::backends
