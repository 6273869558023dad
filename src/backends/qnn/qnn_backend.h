// --lowering qnn: the htp graphs as real QNN HTP context binaries (ONNX QDQ export ->
// ONNX Runtime's QNN EP through the bridge), delegate "QnnBackend", and the executor that runs
// them on the HTP simulator. A device build (weight sharing on, as the specs say) puts every
// graph of a program in one shared context, one payload for all its methods; --enable_x86_64
// turns weight sharing off and gives one context per graph, which the x86 simulator can load.
// docs/compile.md describes the payload and the method -> graph record.
#pragma once

#include <memory>

#include "compile/backend.h"
#include "runtime/backend_executor.h"

namespace genai::backends {

std::unique_ptr<compile::Backend> make_qnn_lowering_backend();  // name "qnn", backend type htp
std::unique_ptr<runtime::BackendExecutor> make_qnn_executor();

}  // namespace genai::backends
