#include "runtime/program_instance.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/chunked_digest.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "core/sha256.h"
#include "core/thread_pool.h"
#include "pte/payload_digests.h"
#include "pte/program_reader.h"
#include "pte/scalar_type.h"

namespace genai::runtime {
namespace {

// A planned buffer larger than this is not a program we can run on any host; refusing it keeps a
// hostile size from turning into an allocation attempt of that size.
constexpr uint64_t kMaxScratchBytes = uint64_t{64} << 30;

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s.empty() ? "none" : s;
}

size_t io_bytes(const IoDesc& d) { return static_cast<size_t>(shape_numel(d.shape)) * dtype_size(d.dtype); }

std::string describe(const IoDesc& d) { return fmt::format("{} {}{}", d.name, dtype_name(d.dtype), shape_to_string(d.shape)); }

// The method's signature as the .pte declares it: each of `indices` a tensor of a type this
// runtime has.
std::vector<IoDesc> declared_signature(const std::string& label, std::string_view what, const pte::Method& m,
                                       const std::vector<int32_t>& indices) {
  std::vector<IoDesc> descs;
  for (size_t i = 0; i < indices.size(); ++i) {
    const auto* t = std::get_if<pte::TensorValue>(&m.values.at(static_cast<size_t>(indices[i])));
    if (!t) throw_input_error("{}: {} {} is not a tensor", label, what, i);
    const Shape shape(t->sizes.begin(), t->sizes.end());
    const auto dtype = pte::dtype_from_scalar_type(t->scalar_type);
    if (!dtype)
      throw_input_error("{}: {} {} is {}{}, a type this runtime does not run", label, what, i,
                        pte::scalar_type_name(t->scalar_type), shape_to_string(shape));
    descs.push_back({t->extra ? t->extra->fully_qualified_name : std::string(), *dtype, shape});
  }
  return descs;
}

// Where each argument of `call` stands in the method's inputs, then outputs: the call must list
// every input once, then every output once, in any order within each. Empty orders when the
// call's order is the method's; nullopt when the call is over anything else.
std::optional<std::pair<std::vector<size_t>, std::vector<size_t>>> delegate_call_order(const pte::Method& m,
                                                                                        const pte::DelegateCall& call) {
  if (call.args.size() != m.inputs.size() + m.outputs.size()) return std::nullopt;
  auto order_of = [](std::span<const int32_t> args, const std::vector<int32_t>& sig) -> std::optional<std::vector<size_t>> {
    std::vector<size_t> order;
    std::vector<bool> used(sig.size(), false);
    bool identity = true;
    for (size_t k = 0; k < args.size(); ++k) {
      const auto it = std::find(sig.begin(), sig.end(), args[k]);
      if (it == sig.end()) return std::nullopt;
      const auto i = static_cast<size_t>(it - sig.begin());
      if (used[i]) return std::nullopt;
      used[i] = true;
      identity = identity && i == k;
      order.push_back(i);
    }
    if (identity) order.clear();
    return order;
  };
  const std::span<const int32_t> args(call.args);
  auto in = order_of(args.first(m.inputs.size()), m.inputs);
  auto out = order_of(args.subspan(m.inputs.size()), m.outputs);
  if (!in || !out) return std::nullopt;
  return std::make_pair(std::move(*in), std::move(*out));
}

// A delegate's signature (in its call's order) in the method's order.
std::vector<IoDesc> in_method_order(const std::vector<IoDesc>& delegate_order, const std::vector<size_t>& order) {
  if (order.empty()) return delegate_order;
  std::vector<IoDesc> out(delegate_order.size());
  for (size_t k = 0; k < order.size(); ++k) out[order[k]] = delegate_order[k];
  return out;
}

// The method's caller-supplied tensors must be exactly what the delegate says it reads/writes.
void check_signature(const std::string& label, std::string_view what, const std::vector<IoDesc>& declared,
                     const std::vector<IoDesc>& descs) {
  if (declared.size() != descs.size())
    throw_input_error("{}: the method has {} {} but its delegate has {}", label, declared.size(), what, descs.size());
  for (size_t i = 0; i < declared.size(); ++i)
    if (declared[i].dtype != descs[i].dtype || declared[i].shape != descs[i].shape)
      throw_input_error("{}: {} {} is {}{} in the method but {} in its delegate", label, what, i,
                        dtype_name(declared[i].dtype), shape_to_string(declared[i].shape), describe(descs[i]));
}

// The delegate a call runs, initialised for the method `desc` describes, reading and writing what
// the method declares (InputError naming desc.label otherwise).
std::unique_ptr<DelegateMethod> init_delegate(const pte::Delegate& delegate, const NamedDataLookup& lookup,
                                              const MethodDesc& desc) {
  const BackendExecutor* executor = find_backend_executor(delegate.id);
  if (!executor)
    throw_input_error("{} uses delegate '{}', but no registered backend handles it (registered: {})", desc.label,
                      delegate.id, join(backend_executor_ids()));
  std::unique_ptr<DelegateMethod> method;
  try {
    method = executor->init(delegate.processed, delegate.compile_specs, lookup, desc);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw_input_error("{}: delegate '{}' needs more memory than is available", desc.label, delegate.id);
  } catch (const std::exception& e) {
    throw_input_error("{}: delegate '{}' rejected its payload: {}", desc.label, delegate.id, e.what());
  }
  if (!method) throw_failure("{}: delegate '{}' returned no method", desc.label, delegate.id);
  check_signature(desc.label, "input", desc.inputs, method->inputs());
  check_signature(desc.label, "output", desc.outputs, method->outputs());
  return method;
}

// The content hash a named-data key carries: compilation names a blob "<name>.<tag>.<first 16
// hex digits of its SHA-256>" (backends/lower/lower_graph.cpp); empty for a key without one.
std::string_view key_hash(std::string_view key) {
  const size_t dot = key.rfind('.');
  if (dot == std::string_view::npos || key.size() - dot - 1 != 16) return {};
  const std::string_view h = key.substr(dot + 1);
  for (char c : h)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
  return h;
}

// The named-data blobs whose bytes do not match their key's hash, in key order; the blobs are
// hashed in parallel (one task each: a blob is one SHA-256 stream).
std::vector<std::string> mismatched_named_data(const pte::Program& program) {
  std::vector<char> bad(program.named_data.size(), 0);
  ThreadPool::global().parallel_for(static_cast<int64_t>(program.named_data.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const pte::NamedData& d = program.named_data[static_cast<size_t>(i)];
      const std::string_view want = key_hash(d.key);
      if (!want.empty() && sha256_hex(d.data.bytes()).compare(0, want.size(), want) != 0) bad[static_cast<size_t>(i)] = 1;
    }
  });
  std::vector<std::string> keys;
  for (size_t i = 0; i < bad.size(); ++i)
    if (bad[i]) keys.push_back(program.named_data[i].key);
  return keys;
}

[[noreturn]] void throw_named_data_mismatch(const std::string& file, const std::vector<std::string>& keys) {
  throw_input_error("{}: named data {} does not match the content hash in its key{} (the file is corrupted; "
                    "recompile with `genai compile`, or pass --no_verify to skip the check)",
                    file, keys.front(), keys.size() > 1 ? fmt::format(" (and {} more blobs)", keys.size() - 1) : "");
}

// Checks the file's bytes against what manifest.json records, in one parallel pass; on a
// mismatch, finds the blob to name.
void check_against_manifest(const std::shared_ptr<const MappedFile>& mapped, const std::string& file,
                            const FileChecksum& expected) {
  if (mapped->size() != expected.size)
    throw_input_error("{}: is {} bytes, but its artifact dir's manifest.json records {} (truncated or replaced)", file,
                      mapped->size(), expected.size);
  if (chunked_digest_hex(mapped->bytes(), expected.kind) == expected.digest) return;
  std::string where = "outside its named data and delegate payloads (the program's methods)";
  std::vector<std::string> keys;
  std::string bad_payload;  // the method whose delegate payload differs from the recorded digest
  try {
    const pte::Program program = pte::read_program_bytes(mapped->bytes(), file, mapped).program;
    keys = mismatched_named_data(program);
    if (keys.empty() && !expected.payloads.empty())
      for (const auto& [method, digest] : pte::delegate_payload_digests(program)) {
        auto want = expected.payloads.find(method);
        if (want != expected.payloads.end() && want->second != digest) {
          bad_payload = method;
          break;
        }
      }
  } catch (const InputError& e) {
    where = fmt::format("and it does not read as a program: {}", e.what());
  }
  if (!keys.empty()) throw_named_data_mismatch(file, keys);
  if (!bad_payload.empty())
    throw_input_error("{}: the delegate payload of method {} does not match the digest its artifact dir's manifest.json "
                      "records (corrupted; recompile with `genai compile`, or pass --no_verify to skip the check)",
                      file, bad_payload);
  throw_input_error("{}: its content does not match the checksum its artifact dir's manifest.json records, {} "
                    "(corrupted or replaced; recompile with `genai compile`, or pass --no_verify to skip the check)",
                    file, where);
}

}  // namespace

std::unique_ptr<ProgramInstance> ProgramInstance::load(const std::filesystem::path& path, const FileChecksum* expected) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<ProgramInstance> inst(new ProgramInstance());
  inst->path_ = path;
  {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    inst->file_bytes_ = ec ? 0 : static_cast<uint64_t>(size);
  }
  const bool verify = load_verification();
  // One mapping for the check and the program, so the pages the hash faulted in serve the weights.
  const auto mapped = MappedFile::open(path);  // InputError naming the file
  if (verify && expected) check_against_manifest(mapped, path.string(), *expected);  // every byte of the file
  auto loaded = pte::read_program_bytes(mapped->bytes(), path.string(), mapped);  // InputError naming the file
  inst->program_ = std::make_shared<const pte::Program>(std::move(loaded.program));
  const pte::Program& program = *inst->program_;
  if (verify && !expected) {
    const auto keys = mismatched_named_data(program);
    if (!keys.empty()) throw_named_data_mismatch(path.string(), keys);
  }

  // Key -> bytes once, so backends resolve their weights without scanning the list.
  auto index = std::make_shared<std::unordered_map<std::string_view, std::span<const uint8_t>>>();
  for (const auto& d : program.named_data) index->emplace(d.key, d.data.bytes());
  const NamedDataLookup lookup = [index, keep = inst->program_](std::string_view key) -> std::span<const uint8_t> {
    auto it = index->find(key);
    return it == index->end() ? std::span<const uint8_t>{} : it->second;
  };

  uint64_t scratch = 0;
  const std::string file = path.string();
  for (const pte::Method& m : program.methods) {
    const auto kind = pte::method_kind(m);
    if (kind == pte::MethodKind::kConstant) continue;
    const std::string label = fmt::format("{}: method {}", file, m.name);
    if (kind == pte::MethodKind::kKernels) {
      inst->unsupported_[m.name] = "it runs portable kernel operators, which this runtime does not execute";
      continue;
    }
    // What compilation writes: one chain holding one delegate call over the method's inputs then
    // outputs. Anything else (mixed kernels and delegates) is not a program of ours.
    const pte::DelegateCall* call = nullptr;
    if (m.chains.size() == 1 && m.chains[0].instructions.size() == 1)
      call = std::get_if<pte::DelegateCall>(&m.chains[0].instructions[0]);
    uint64_t planned = 0;
    if (m.non_const_buffer_sizes.size() > 1) {
      if (m.non_const_buffer_sizes[1] < 0) throw_input_error("{}: negative planned buffer size", label);
      planned = static_cast<uint64_t>(m.non_const_buffer_sizes[1]);
    }
    if (m.chains.size() == 1 && m.chains[0].instructions.size() > 1) {
      std::string why;
      std::optional<MethodSlot> chained = load_chain(m, label, lookup, planned, &why);
      if (!chained) {
        inst->unsupported_[m.name] = why;
        continue;
      }
      scratch = std::max(scratch, planned);
      for (const ChainCall& c : chained->chain) scratch = std::max(scratch, c.method->scratch_bytes());
      inst->methods_.emplace(m.name, std::move(*chained));
      continue;
    }
    const auto order = call ? delegate_call_order(m, *call) : std::nullopt;
    if (!order) {
      inst->unsupported_[m.name] = "it is not a single delegate call over the method's inputs and outputs";
      continue;
    }
    const std::vector<int32_t> call_inputs(call->args.begin(), call->args.begin() + static_cast<long>(m.inputs.size()));
    const std::vector<int32_t> call_outputs(call->args.begin() + static_cast<long>(m.inputs.size()), call->args.end());
    MethodDesc desc;
    desc.name = m.name;
    desc.label = label;
    desc.method_label = label;
    // The delegate sees its arguments in the call's order.
    desc.inputs = declared_signature(label, "input", m, call_inputs);
    desc.outputs = declared_signature(label, "output", m, call_outputs);
    std::unique_ptr<DelegateMethod> method =
        init_delegate(m.delegates.at(static_cast<size_t>(call->delegate_index)), lookup, desc);
    MethodSlot slot;
    slot.input_order = order->first;
    slot.output_order = order->second;
    slot.inputs = in_method_order(method->inputs(), slot.input_order);
    slot.outputs = in_method_order(method->outputs(), slot.output_order);
    for (const auto& d : slot.inputs) slot.input_bytes.push_back(io_bytes(d));
    for (const auto& d : slot.outputs) slot.output_bytes.push_back(io_bytes(d));
    scratch = std::max({scratch, planned, method->scratch_bytes()});
    slot.method = std::move(method);
    inst->methods_.emplace(m.name, std::move(slot));
  }
  if (scratch > kMaxScratchBytes)
    throw_input_error("{}: the program asks for a scratch arena of {} bytes (more than {} GiB)", file, scratch,
                      kMaxScratchBytes >> 30);
  if (scratch > 0) {
    const size_t bytes = static_cast<size_t>(scratch);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw_input_error("{}: cannot reserve the scratch arena of {} bytes the program asks for", file, bytes);
    inst->scratch_storage_ = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [bytes](uint8_t* q) { munmap(q, bytes); });
    inst->scratch_ = std::span<uint8_t>(static_cast<uint8_t*>(p), bytes);
  }
  inst->load_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return inst;
}

std::vector<std::string> ProgramInstance::method_names() const {
  std::vector<std::string> names;
  for (const auto& [n, s] : methods_) names.push_back(n);
  return names;
}

bool ProgramInstance::has_method(std::string_view name) const { return methods_.find(name) != methods_.end(); }

const ProgramInstance::MethodSlot& ProgramInstance::slot(std::string_view method) const {
  auto it = methods_.find(method);
  if (it != methods_.end()) return it->second;
  auto bad = unsupported_.find(method);
  if (bad != unsupported_.end())
    throw_input_error("{}: method {} cannot run here: {}", path_.string(), method, bad->second);
  throw_input_error("{}: no executable method '{}' (methods: {})", path_.string(), method, join(method_names()));
}

const std::vector<IoDesc>& ProgramInstance::inputs(std::string_view method) const { return slot(method).inputs; }

const std::vector<IoDesc>& ProgramInstance::outputs(std::string_view method) const { return slot(method).outputs; }

void ProgramInstance::execute(std::string_view method, std::span<const BufferRef> inputs,
                              std::span<const BufferRef> outputs) {
  const MethodSlot& s = slot(method);
  auto check = [&](std::string_view what, std::span<const BufferRef> given, const std::vector<size_t>& want,
                   const std::vector<IoDesc>& descs) {
    if (given.size() != want.size())
      throw_failure("{}: method {} takes {} {}s, {} given", path_.string(), method, want.size(), what, given.size());
    for (size_t i = 0; i < want.size(); ++i)
      if (given[i].bytes != want[i] || (want[i] > 0 && !given[i].data))
        throw_failure("{}: method {}: {} {} ({}) needs a buffer of {} bytes, got {}", path_.string(), method, what, i,
                      describe(descs[i]), want[i], given[i].bytes);
  };
  check("input", inputs, s.input_bytes, s.inputs);
  check("output", outputs, s.output_bytes, s.outputs);
  if (!s.chain.empty()) {
    auto bind = [&](const std::vector<ArgRef>& args) {
      std::vector<BufferRef> refs;
      refs.reserve(args.size());
      for (const ArgRef& a : args) {
        switch (a.kind) {
          case ArgRef::Kind::kInput: refs.push_back(inputs[a.index]); break;
          case ArgRef::Kind::kOutput: refs.push_back(outputs[a.index]); break;
          case ArgRef::Kind::kScratch: refs.push_back({scratch_.data() + a.offset, a.bytes}); break;
        }
      }
      return refs;
    };
    for (const ChainCall& c : s.chain) c.method->execute(bind(c.inputs), bind(c.outputs), scratch_);
    return;
  }
  if (s.input_order.empty() && s.output_order.empty()) {
    s.method->execute(inputs, outputs, scratch_);
    return;
  }
  auto in_call_order = [](std::span<const BufferRef> given, const std::vector<size_t>& order) {
    if (order.empty()) return std::vector<BufferRef>(given.begin(), given.end());
    std::vector<BufferRef> out;
    out.reserve(order.size());
    for (size_t k : order) out.push_back(given[k]);
    return out;
  };
  const auto in = in_call_order(inputs, s.input_order);
  const auto out = in_call_order(outputs, s.output_order);
  s.method->execute(in, out, scratch_);
}

std::optional<ProgramInstance::MethodSlot> ProgramInstance::load_chain(const pte::Method& m, const std::string& label,
                                                                      const NamedDataLookup& lookup, uint64_t planned,
                                                                      std::string* why) {
  auto refuse = [&](std::string reason) -> std::optional<MethodSlot> {
    *why = std::move(reason);
    return std::nullopt;
  };
  const size_t n_values = m.values.size();
  auto valid = [&](int32_t v) { return v >= 0 && static_cast<size_t>(v) < n_values; };
  std::map<int32_t, size_t> input_index, output_index;
  for (size_t i = 0; i < m.inputs.size(); ++i) input_index.emplace(m.inputs[i], i);
  for (size_t i = 0; i < m.outputs.size(); ++i) output_index.emplace(m.outputs[i], i);
  std::vector<bool> defined(n_values, false);
  for (int32_t v : m.inputs)
    if (valid(v)) defined[static_cast<size_t>(v)] = true;
  MethodSlot slot;
  uint64_t arenas = 0;  // the largest arena of the chain's delegates: passed values must lie past it
  for (size_t k = 0; k < m.chains[0].instructions.size(); ++k) {
    const auto* call = std::get_if<pte::DelegateCall>(&m.chains[0].instructions[k]);
    if (!call) return refuse("it mixes delegate calls with other instructions");
    // A call lists its inputs, then its outputs: its inputs are the values already defined.
    size_t split = 0;
    while (split < call->args.size() && valid(call->args[split]) && defined[static_cast<size_t>(call->args[split])]) ++split;
    const std::vector<int32_t> ins(call->args.begin(), call->args.begin() + static_cast<long>(split));
    const std::vector<int32_t> outs(call->args.begin() + static_cast<long>(split), call->args.end());
    ChainCall c;
    auto ref = [&](int32_t v) -> std::optional<ArgRef> {
      if (!valid(v)) return std::nullopt;
      if (auto it = input_index.find(v); it != input_index.end()) return ArgRef{ArgRef::Kind::kInput, it->second, 0, 0};
      if (auto it = output_index.find(v); it != output_index.end()) return ArgRef{ArgRef::Kind::kOutput, it->second, 0, 0};
      const auto* t = std::get_if<pte::TensorValue>(&m.values[static_cast<size_t>(v)]);
      const auto bytes = t ? pte::tensor_nbytes(*t) : std::nullopt;
      if (!t || !t->allocation || t->allocation->memory_id != 1 || !bytes || t->allocation->offset > planned ||
          *bytes > planned - t->allocation->offset)
        return std::nullopt;
      return ArgRef{ArgRef::Kind::kScratch, 0, t->allocation->offset, static_cast<size_t>(*bytes)};
    };
    for (int32_t v : outs) {
      if (!valid(v) || defined[static_cast<size_t>(v)])
        return refuse(fmt::format("delegate call {} writes value {}, which is not a new value", k, v));
      defined[static_cast<size_t>(v)] = true;
    }
    for (const auto* side : {&ins, &outs})
      for (int32_t v : *side) {
        auto r = ref(v);
        if (!r) return refuse(fmt::format("delegate call {} passes value {}, which has no place in the planned buffer", k, v));
        (side == &ins ? c.inputs : c.outputs).push_back(*r);
      }
    MethodDesc desc;
    desc.name = m.name;
    desc.label = fmt::format("{} (delegate call {})", label, k);
    desc.method_label = label;
    desc.shard = static_cast<int64_t>(k);
    desc.inputs = declared_signature(desc.label, "input", m, ins);
    desc.outputs = declared_signature(desc.label, "output", m, outs);
    c.method = init_delegate(m.delegates.at(static_cast<size_t>(call->delegate_index)), lookup, desc);
    arenas = std::max(arenas, c.method->scratch_bytes());
    slot.chain.push_back(std::move(c));
  }
  for (const ChainCall& c : slot.chain)
    for (const auto* side : {&c.inputs, &c.outputs})
      for (const ArgRef& a : *side)
        if (a.kind == ArgRef::Kind::kScratch && a.offset < arenas)
          return refuse(fmt::format("a value passed between its delegate calls lies inside a delegate's arena "
                                    "(offset {}, arena {} bytes)", a.offset, arenas));
  for (int32_t v : m.outputs)
    if (!valid(v) || !defined[static_cast<size_t>(v)]) return refuse("no delegate call computes one of its outputs");
  slot.inputs = declared_signature(label, "input", m, m.inputs);
  slot.outputs = declared_signature(label, "output", m, m.outputs);
  for (const auto& d : slot.inputs) slot.input_bytes.push_back(io_bytes(d));
  for (const auto& d : slot.outputs) slot.output_bytes.push_back(io_bytes(d));
  return slot;
}

std::vector<pte::Value> ProgramInstance::constant_list(std::string_view name) const {
  return program_->constant_values(name);
}

std::optional<pte::Value> ProgramInstance::constant(std::string_view name) const {
  auto values = constant_list(name);
  if (values.size() != 1) return std::nullopt;
  return std::move(values.front());
}

std::optional<int64_t> ProgramInstance::constant_int(std::string_view name) const {
  const auto v = constant(name);
  if (!v) return std::nullopt;
  if (const auto* i = std::get_if<pte::Int>(&*v)) return i->value;
  if (const auto* b = std::get_if<pte::Bool>(&*v)) return b->value ? 1 : 0;
  throw_input_error("{}: constant method {} does not return an integer", path_.string(), name);
}

std::optional<double> ProgramInstance::constant_double(std::string_view name) const {
  const auto v = constant(name);
  if (!v) return std::nullopt;
  if (const auto* d = std::get_if<pte::Double>(&*v)) return d->value;
  if (const auto* i = std::get_if<pte::Int>(&*v)) return static_cast<double>(i->value);
  throw_input_error("{}: constant method {} does not return a number", path_.string(), name);
}

std::optional<std::string> ProgramInstance::constant_string(std::string_view name) const {
  const auto v = constant(name);
  if (!v) return std::nullopt;
  if (const auto* str = std::get_if<pte::String>(&*v)) return str->value;
  throw_input_error("{}: constant method {} does not return a string", path_.string(), name);
}

}  // namespace genai::runtime
