// --lowering qnn: the htp graphs as real QNN HTP context binaries (ONNX QDQ export ->
// ONNX Runtime's QNN EP through the bridge), delegate "QnnBackend", and the executor that runs
// them on the HTP simulator. A device build (weight sharing on, as the specs say) puts every
// graph of a program in one shared context, one payload for all its methods; --enable_x86_64
// turns weight sharing off and gives one context per graph, which the x86 simulator can load.
// docs/compile.md describes the payload and the method -> graph record.
#pragma once

#include <cstdint>
#include <memory>

#include "compile/backend.h"
#include "runtime/backend_executor.h"

namespace genai::backends {

std::unique_ptr<compile::Backend> make_qnn_lowering_backend();  // name "qnn", backend type htp
std::unique_ptr<runtime::BackendExecutor> make_qnn_executor();

// The bytes of context binaries the x86 HTP simulator keeps loaded at once in one process. It
// holds about 3.3 GiB of them (its HTP's 32-bit address space, less each context's own memory):
// the two 1.77 GB contexts of a llama3.2-1b program (3.30 GiB) load; phi-4-mini's kv_forward
// (8 contexts, 4.33 GB) failed with QNN_COMMON_ERROR_MEM_ALLOC at its eighth, the head's, both
// with seven others loaded (3.17 GiB) and with five (2.59 GiB, 3.46 GiB with the head), while each
// loads alone. The limit is per process, so the executor runs several simulator processes (at most
// kQnnSimulatorProcesses) and spreads a method's contexts over them, each holding at most the
// budget of one method's; past that, a process closes contexts and loads them again when they
// next run (slower, never refused).
inline constexpr uint64_t kQnnSimulatorResidentBytes = uint64_t{3} << 30;
// phi-4-mini's 8-shard program (a method's contexts: 3.86 GB, one of them 1.48 GB) takes two;
// four leave room for a method twice that size within this 23 GiB machine.
inline constexpr size_t kQnnSimulatorProcesses = 4;
// Sets the budget for this process; returns the previous one. Tests make it small to swap
// contexts on tiny programs.
uint64_t set_qnn_simulator_budget(uint64_t bytes);
// Sets the most simulator processes this process starts; returns the previous limit. 1 gives the
// single process whose swaps the budget test watches.
size_t set_qnn_simulator_processes(size_t processes);
// Contexts loaded onto the simulator in this process so far (each reload counts).
uint64_t qnn_simulator_context_loads();
// Bytes of context binaries loaded in this process's simulator processes now.
uint64_t qnn_simulator_resident_bytes();

}  // namespace genai::backends
