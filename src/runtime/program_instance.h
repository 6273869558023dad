// A loaded .pte ready to execute: the file is memory-mapped (weights and payloads used in place),
// every delegated method is initialised through the backend registry, constant methods are
// readable by name, and one scratch arena (the largest any method needs) is shared by the
// methods, which never run concurrently. With load verification on (runtime/load_verification.h)
// the content is checked first: against `expected` (what manifest.json records) when given, else
// every named-data blob against the content hash its key carries; a mismatch is InputError
// naming the file and, where it can be found, the blob.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pte/program.h"
#include "runtime/backend_executor.h"
#include "runtime/load_verification.h"

namespace genai::runtime {

class ProgramInstance {
 public:
  // InputError naming the file for a malformed program, and naming the delegate id when no
  // registered backend handles one of its delegates.
  static std::unique_ptr<ProgramInstance> load(const std::filesystem::path& path,
                                               const FileChecksum* expected = nullptr);

  const std::filesystem::path& path() const { return path_; }
  double load_ms() const { return load_ms_; }
  std::vector<std::string> method_names() const;   // executable (delegated) methods
  bool has_method(std::string_view name) const;
  const std::vector<IoDesc>& inputs(std::string_view method) const;   // InputError naming valid ones
  const std::vector<IoDesc>& outputs(std::string_view method) const;
  void execute(std::string_view method, std::span<const BufferRef> inputs, std::span<const BufferRef> outputs);

  // Value of a constant method (get_max_seq_len ...): nullopt when the program has none by that name.
  std::optional<pte::Value> constant(std::string_view name) const;
  std::optional<int64_t> constant_int(std::string_view name) const;    // Int or Bool
  std::optional<double> constant_double(std::string_view name) const;  // Double or Int
  std::optional<std::string> constant_string(std::string_view name) const;
  // Every output of a constant method (a list method has several); empty when absent.
  std::vector<pte::Value> constant_list(std::string_view name) const;

  // Size of the shared scratch arena and of the mapped file (bench reports).
  uint64_t scratch_bytes() const { return scratch_.size(); }
  uint64_t file_bytes() const { return file_bytes_; }
  const pte::Program& program() const { return *program_; }

 private:
  // Where one argument of a delegate call lives while a chain of calls runs: a method input or
  // output (by index), or a value passed between calls, at its planned offset in the scratch arena.
  struct ArgRef {
    enum class Kind : uint8_t { kInput, kOutput, kScratch } kind = Kind::kInput;
    size_t index = 0;
    uint64_t offset = 0;
    size_t bytes = 0;
  };
  // One delegate call of a method that makes several (a sharded decoder: one per shard, in order).
  struct ChainCall {
    std::unique_ptr<DelegateMethod> method;
    std::vector<ArgRef> inputs, outputs;
  };
  struct MethodSlot {
    std::unique_ptr<DelegateMethod> method;
    // A method of several delegate calls runs these instead of `method` (null then).
    std::vector<ChainCall> chain;
    // The signature in the method's own order, and what execute() checks the buffers against.
    std::vector<IoDesc> inputs, outputs;
    std::vector<size_t> input_bytes, output_bytes;
    // The delegate call may list the method's tensors in another order (upstream's programs list
    // them in the QNN graph's order): the delegate's input k is the method's input input_order[k].
    // Empty when the orders are the same.
    std::vector<size_t> input_order, output_order;
  };
  ProgramInstance() = default;
  const MethodSlot& slot(std::string_view method) const;
  // The slot of a method of several delegate calls, or nullopt with the reason it cannot run here.
  static std::optional<MethodSlot> load_chain(const pte::Method& m, const std::string& label,
                                              const NamedDataLookup& lookup, uint64_t planned, std::string* why);

  std::filesystem::path path_;
  double load_ms_ = 0.0;
  uint64_t file_bytes_ = 0;
  std::shared_ptr<const pte::Program> program_;
  std::map<std::string, MethodSlot, std::less<>> methods_;
  // Methods present in the file that this runtime cannot execute, with the reason.
  std::map<std::string, std::string, std::less<>> unsupported_;
  // Anonymous mapping: page aligned (so 64-byte aligned), zero, and committed only where touched.
  std::shared_ptr<uint8_t> scratch_storage_;
  std::span<uint8_t> scratch_;
};

}  // namespace genai::runtime
