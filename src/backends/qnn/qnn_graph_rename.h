// Naming the graphs of a QNN context binary after the methods that run them.
//
// ExecuTorch's QnnBackend finds a method's graph by the method's name (upstream's programs name
// their graphs kv_forward, prefill_forward, ...), but ONNX Runtime's QNN EP, which builds our
// binaries, names each graph itself ("QNNExecutionProvider_QNNExecutionProvider_<hash>_1_0") and
// offers no option to choose it. So compilation renames the graphs in the binary it gets back.
//
// How a binary stores a graph's name (QNN 2.51, observed; docs/qnn.md): every copy is a
// flatbuffer-style string, a uint32 LE length, the bytes, then a NUL, sometimes behind a short
// printable prefix inside the same string ("PICKLE/256/<name>"). Nothing else in the binary
// refers to a string's length or contents (QNN's own libraries load and run a binary whose
// strings were rewritten in place), so a name is replaced where it stands: the new name, the
// new length, NULs over the rest of the old bytes. Section sizes and every offset stay as they
// were, which is why a new name may not be longer than the old one (ours are far shorter).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace genai::backends::qnn {

struct QnnGraphRename {
  std::string from;  // the graph's name in the binary
  std::string to;    // the name it gets (the method's)
};

// A copy of `binary` with each graph renamed. Failure when a name occurs in a form this code does
// not know how to rewrite (the QNN compiler's output is then not what this code was written
// against), when `from` does not occur as a stored string, or when `to` is longer than `from`,
// empty, or already names a string of the binary: the binary is never left half-renamed.
std::vector<uint8_t> rename_qnn_graphs(std::span<const uint8_t> binary, std::span<const QnnGraphRename> renames);

// How many stored strings of `binary` (uint32 LE length + bytes + NUL, optionally behind a
// printable prefix ending in '/') hold exactly `name`: 0 when the binary does not name it.
size_t count_qnn_name_records(std::span<const uint8_t> binary, std::string_view name);

}  // namespace genai::backends::qnn
