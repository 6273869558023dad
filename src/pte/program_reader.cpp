#include "pte/program_reader.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "core/mapped_file.h"
#include "schema/program_generated.h"

namespace genai::pte {
namespace {

namespace fb = executorch_flatbuffer;

uint64_t get_le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Element i of a vector of scalars, loaded byte-wise. The Verifier checks a vector's length field
// but not that 8-byte elements (the [long], [uint64] and [double] vectors) are 8-byte aligned, and
// flatbuffers' own Get is a plain load, undefined at a misaligned address; a hostile file can
// place such a vector anywhere. (Flatbuffers are little-endian, as every host genai builds for.)
template <typename T>
T element(const flatbuffers::Vector<T>* v, flatbuffers::uoffset_t i) {
  static_assert(std::is_arithmetic_v<T>);
  T out;
  std::memcpy(&out, v->Data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return out;
}

template <typename T>
std::vector<T> to_vector(const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return {};
  std::vector<T> out(v->size());
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

std::string to_string(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// Bytes printable as an identifier in a message, hex otherwise.
std::string describe_identifier(const uint8_t* p) {
  std::string out = "\"";
  for (int i = 0; i < 4; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
      out += static_cast<char>(p[i]);
    else
      out += fmt::format("\\x{:02x}", p[i]);
  }
  return out + "\"";
}

struct ResolvedSegment {
  uint64_t file_offset;
  uint64_t size;
};

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string_view name, std::shared_ptr<const void> keepalive)
      : bytes_(bytes), name_(name), keepalive_(std::move(keepalive)) {}

  LoadedProgram read() {
    LoadedProgram out;
    out.layout.file_size = bytes_.size();
    read_header(out.layout);
    verify_flatbuffer();
    root_ = fb::GetProgram(bytes_.data());
    read_segments(out.layout);
    read_constant_sources();
    out.program.version = root_->version();
    if (const auto* plans = root_->execution_plan())
      for (flatbuffers::uoffset_t i = 0; i < plans->size(); ++i)
        out.program.methods.push_back(read_method(plans->Get(i), i));
    read_named_data(out.program);
    if (auto problem = find_program_problem(out.program)) fail("{}", *problem);
    return out;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw InputError(fmt::format("{}: {}", name_, fmt::format(f, std::forward<Args>(args)...)));
  }

  Blob view(uint64_t file_offset, uint64_t size) const {
    return Blob(bytes_.subspan(file_offset, size), keepalive_);
  }

  void read_header(ProgramLayout& layout) {
    const uint64_t size = bytes_.size();
    const uint8_t* p = bytes_.data();
    if (size < 8) fail("{} bytes is too small for an ExecuTorch program (at least 8 needed)", size);
    if (std::memcmp(p + 4, kProgramIdentifier, 4) != 0)
      fail("not an ExecuTorch program: file identifier is {}, expected \"ET12\"", describe_identifier(p + 4));
    program_size_ = size;
    region_begin_ = size;
    region_size_ = 0;
    if (size < kExtendedHeaderOffset + 8 || std::memcmp(p + kExtendedHeaderOffset, kExtendedHeaderMagic, 4) != 0)
      return;  // no extended header: a plain flatbuffer without segment data
    const uint64_t length = get_le(p + 12, 4);
    if (length < 24) fail("extended header length {} is below the minimum of 24", length);
    const uint64_t needed = kExtendedHeaderOffset + (length >= 32 ? 32 : 24);
    if (size < needed) fail("file of {} bytes ends inside the extended header ({} bytes needed)", size, needed);
    ExtendedHeader h;
    h.program_size = get_le(p + 16, 8);
    h.segment_base_offset = get_le(p + 24, 8);
    h.segment_data_size = length >= 32 ? get_le(p + 32, 8) : 0;
    if (h.program_size < kExtendedHeaderOffset + length || h.program_size > size)
      fail("extended header program_size {} is outside the file (header ends at {}, file has {} bytes)",
           h.program_size, kExtendedHeaderOffset + length, size);
    if (h.segment_data_size > 0 || h.segment_base_offset > 0) {
      if (h.segment_base_offset < h.program_size || h.segment_base_offset > size)
        fail("extended header segment_base_offset {} must lie between program_size {} and the file size {}",
             h.segment_base_offset, h.program_size, size);
      if (h.segment_data_size > size - h.segment_base_offset)
        fail("extended header says {} bytes of segment data from offset {}, but the file has only {} bytes "
             "(truncated?)",
             h.segment_data_size, h.segment_base_offset, size);
      region_begin_ = h.segment_base_offset;
      region_size_ = h.segment_data_size > 0 ? h.segment_data_size : size - h.segment_base_offset;
    }
    program_size_ = h.program_size;
    layout.header = h;
  }

  void verify_flatbuffer() {
    if (program_size_ >= FLATBUFFERS_MAX_BUFFER_SIZE)
      fail("program flatbuffer of {} bytes exceeds the 2 GiB flatbuffer limit", program_size_);
    flatbuffers::Verifier::Options opts;
    flatbuffers::Verifier verifier(bytes_.data(), static_cast<size_t>(program_size_), opts);
    if (!fb::VerifyProgramBuffer(verifier))
      fail("the program flatbuffer ({} bytes) failed verification: corrupt or truncated file", program_size_);
  }

  void read_segments(ProgramLayout& layout) {
    const auto* segs = root_->segments();
    if (segs == nullptr) return;
    for (flatbuffers::uoffset_t i = 0; i < segs->size(); ++i) {
      const auto* s = segs->Get(i);
      const uint64_t off = s->offset(), sz = s->size();
      if (off > region_size_ || sz > region_size_ - off) {
        if (!layout.header)
          fail("segment {} (offset {}, {} bytes) has data but the file has no extended header", i, off, sz);
        fail("segment {} (offset {}, {} bytes) overruns the {} bytes of segment data (truncated file?)", i, off, sz,
             region_size_);
      }
      layout.segments.push_back({off, sz});
      segments_.push_back({region_begin_ + off, sz});
    }
  }

  const ResolvedSegment& segment(uint64_t index, std::string_view what) const {
    if (index >= segments_.size())
      fail("{} names segment {}, but the program has {} segments", what, index, segments_.size());
    return segments_[index];
  }

  void check_offsets(const fb::SubsegmentOffsets* sub, std::string_view what) const {
    const auto& seg = segment(sub->segment_index(), what);
    if (const auto* offs = sub->offsets())
      for (flatbuffers::uoffset_t i = 0; i < offs->size(); ++i)
        if (element(offs, i) > seg.size)
          fail("{} offset {} is {}, beyond its segment's {} bytes", what, i, element(offs, i), seg.size);
  }

  // Constant tensors live in the constant segment, or (older files) in Program.constant_buffer.
  void read_constant_sources() {
    const auto* cs = root_->constant_segment();
    if (cs != nullptr && cs->offsets() != nullptr && cs->offsets()->size() > 0) {
      check_offsets(cs, "constant_segment");
      constant_segment_ = cs;
    }
    if (const auto* ms = root_->mutable_data_segments())
      for (flatbuffers::uoffset_t i = 0; i < ms->size(); ++i) {
        if (ms->Get(i)->offsets() == nullptr) fail("mutable_data_segments[{}] has no offsets", i);
        check_offsets(ms->Get(i), fmt::format("mutable_data_segments[{}]", i));
      }
  }

  Blob subsegment_data(const fb::SubsegmentOffsets* sub, uint32_t index, uint64_t nbytes, std::string_view what) const {
    const auto* offs = sub->offsets();
    if (index >= offs->size())
      fail("{}: data_buffer_idx {} out of range ({} entries)", what, index, offs->size());
    const auto& seg = segments_[sub->segment_index()];
    const uint64_t off = element(offs, index);
    if (nbytes > seg.size - off)
      fail("{}: tensor needs {} bytes at offset {}, but its segment has {} bytes", what, nbytes, off, seg.size);
    return view(seg.file_offset + off, nbytes);
  }

  Blob constant_data(uint32_t index, uint64_t nbytes, std::string_view what) const {
    if (constant_segment_ != nullptr) return subsegment_data(constant_segment_, index, nbytes, what);
    const auto* buffers = root_->constant_buffer();
    if (buffers == nullptr || index >= buffers->size())
      fail("{}: data_buffer_idx {} out of range ({} constant buffers)", what, index, buffers ? buffers->size() : 0);
    const auto* storage = buffers->Get(index)->storage();
    const uint64_t have = storage ? storage->size() : 0;
    if (nbytes > have) fail("{}: tensor needs {} bytes, its constant buffer has {}", what, nbytes, have);
    if (nbytes == 0) return Blob(std::span<const uint8_t>(), keepalive_);
    return view(static_cast<uint64_t>(storage->data() - bytes_.data()), nbytes);
  }

  TensorValue read_tensor(const fb::Tensor* t, const std::string& what) const {
    TensorValue out;
    const int raw_type = static_cast<int>(t->scalar_type());
    if (!is_known_scalar_type(raw_type)) fail("{}: unknown scalar type {}", what, raw_type);
    out.scalar_type = static_cast<ScalarType>(raw_type);
    if (t->storage_offset() != 0) fail("{}: storage_offset {} (must be 0)", what, t->storage_offset());
    out.sizes = to_vector(t->sizes());
    out.dim_order = to_vector(t->dim_order());
    const int dyn = static_cast<int>(t->shape_dynamism());
    if (dyn < 0 || dyn > 2) fail("{}: unknown shape_dynamism {}", what, dyn);
    out.dynamism = static_cast<ShapeDynamism>(dyn);
    out.requires_grad = t->requires_grad();
    out.layout = t->layout();
    if (const auto* a = t->allocation_info())
      out.allocation = Allocation{a->memory_id(),
                                  uint64_t{a->memory_offset_low()} | (uint64_t{a->memory_offset_high()} << 32)};
    uint64_t mutable_index = 0;
    if (const auto* e = t->extra_tensor_info()) {
      ExtraTensorInfo x;
      x.fully_qualified_name = to_string(e->fully_qualified_name());
      const int loc = static_cast<int>(e->location()), dev = static_cast<int>(e->device_type());
      if (loc < 0 || loc > 1) fail("{}: unknown tensor data location {}", what, loc);
      if (dev < 0 || dev > 1) fail("{}: unknown device type {}", what, dev);
      x.location = static_cast<TensorDataLocation>(loc);
      x.device_type = static_cast<DeviceType>(dev);
      x.device_index = e->device_index();
      mutable_index = e->mutable_data_segments_idx();
      out.extra = std::move(x);
    }
    const uint32_t idx = t->data_buffer_idx();
    const bool external = out.extra && out.extra->location == TensorDataLocation::kExternal;
    if (idx == 0 || external) return out;
    const auto nbytes = tensor_nbytes(out);
    if (!nbytes) fail("{}: tensor sizes are negative or their product overflows", what);
    if (!out.allocation) {
      out.data = constant_data(idx, *nbytes, what);
    } else {
      const auto* ms = root_->mutable_data_segments();
      if (ms == nullptr || mutable_index >= ms->size())
        fail("{}: mutable data segment {} out of range ({} present)", what, mutable_index, ms ? ms->size() : 0);
      out.data = subsegment_data(ms->Get(static_cast<flatbuffers::uoffset_t>(mutable_index)), idx, *nbytes, what);
    }
    return out;
  }

  Value read_value(const fb::EValue* v, const std::string& what) const {
    const auto type = v->val_type();
    if (type == fb::KernelTypes::Null) return Null{};
    if (v->val() == nullptr) fail("{}: value of type {} has no content", what, static_cast<int>(type));
    switch (type) {
      case fb::KernelTypes::Int: return Int{v->val_as_Int()->int_val()};
      case fb::KernelTypes::Bool: return Bool{v->val_as_Bool()->bool_val()};
      case fb::KernelTypes::Double: return Double{v->val_as_Double()->double_val()};
      case fb::KernelTypes::Tensor: return read_tensor(v->val_as_Tensor(), what);
      case fb::KernelTypes::String: return String{to_string(v->val_as_String()->string_val())};
      case fb::KernelTypes::IntList: return IntList{to_vector(v->val_as_IntList()->items())};
      case fb::KernelTypes::DoubleList: return DoubleList{to_vector(v->val_as_DoubleList()->items())};
      case fb::KernelTypes::BoolList: {
        BoolList out;
        if (const auto* items = v->val_as_BoolList()->items())
          for (uint8_t b : *items) out.items.push_back(b != 0);
        return out;
      }
      case fb::KernelTypes::TensorList: return TensorList{to_vector(v->val_as_TensorList()->items())};
      case fb::KernelTypes::OptionalTensorList:
        return OptionalTensorList{to_vector(v->val_as_OptionalTensorList()->items())};
      default: fail("{}: unknown value type {}", what, static_cast<int>(type));
    }
  }

  Instruction read_instruction(const fb::Instruction* ins, const std::string& what) const {
    const auto type = ins->instr_args_type();
    if (ins->instr_args() == nullptr) fail("{}: instruction of type {} has no arguments", what, static_cast<int>(type));
    switch (type) {
      case fb::InstructionArguments::KernelCall: {
        const auto* k = ins->instr_args_as_KernelCall();
        return KernelCall{k->op_index(), to_vector(k->args())};
      }
      case fb::InstructionArguments::DelegateCall: {
        const auto* d = ins->instr_args_as_DelegateCall();
        return DelegateCall{d->delegate_index(), to_vector(d->args())};
      }
      case fb::InstructionArguments::MoveCall: {
        const auto* m = ins->instr_args_as_MoveCall();
        return MoveCall{m->move_from(), m->move_to()};
      }
      case fb::InstructionArguments::JumpFalseCall: {
        const auto* j = ins->instr_args_as_JumpFalseCall();
        return JumpFalseCall{j->cond_value_index(), j->destination_instruction()};
      }
      case fb::InstructionArguments::FreeCall: return FreeCall{ins->instr_args_as_FreeCall()->value_index()};
      default: fail("{}: unknown instruction type {}", what, static_cast<int>(type));
    }
  }

  Delegate read_delegate(const fb::BackendDelegate* d, const std::string& what) const {
    Delegate out;
    if (d->id() == nullptr) fail("{}: delegate has no backend id", what);
    out.id = d->id()->str();
    const auto* ref = d->processed();
    if (ref == nullptr) fail("{}: delegate '{}' has no processed payload reference", what, out.id);
    if (ref->location() == fb::DataLocation::SEGMENT) {
      const auto& seg = segment(ref->index(), what);
      out.processed = view(seg.file_offset, seg.size);
    } else if (ref->location() == fb::DataLocation::INLINE) {
      const auto* inl = root_->backend_delegate_data();
      if (inl == nullptr || ref->index() >= inl->size())
        fail("{}: delegate '{}' names inline payload {}, but the program has {}", what, out.id, ref->index(),
             inl ? inl->size() : 0);
      const auto* data = inl->Get(ref->index())->data();
      if (data != nullptr && data->size() > 0)
        out.processed = view(static_cast<uint64_t>(data->data() - bytes_.data()), data->size());
    } else {
      fail("{}: delegate '{}' has unknown payload location {}", what, out.id, static_cast<int>(ref->location()));
    }
    if (const auto* specs = d->compile_specs())
      for (flatbuffers::uoffset_t i = 0; i < specs->size(); ++i) {
        const auto* s = specs->Get(i);
        if (s->key() == nullptr) fail("{}: delegate '{}' compile spec {} has no key", what, out.id, i);
        out.compile_specs.push_back({s->key()->str(), to_vector(s->value())});
      }
    return out;
  }

  Method read_method(const fb::ExecutionPlan* plan, flatbuffers::uoffset_t index) const {
    Method m;
    if (plan->name() == nullptr) fail("execution plan {} has no name", index);
    m.name = plan->name()->str();
    const std::string where = fmt::format("method '{}'", m.name);
    if (const auto* meta = plan->container_meta_type())
      m.container_meta = ContainerMeta{to_string(meta->encoded_inp_str()), to_string(meta->encoded_out_str())};
    if (const auto* values = plan->values())
      for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i)
        m.values.push_back(read_value(values->Get(i), fmt::format("{} value {}", where, i)));
    m.inputs = to_vector(plan->inputs());
    m.outputs = to_vector(plan->outputs());
    if (const auto* chains = plan->chains())
      for (flatbuffers::uoffset_t c = 0; c < chains->size(); ++c) {
        const auto* chain = chains->Get(c);
        Chain out;
        out.inputs = to_vector(chain->inputs());
        out.outputs = to_vector(chain->outputs());
        if (const auto* instrs = chain->instructions())
          for (flatbuffers::uoffset_t i = 0; i < instrs->size(); ++i)
            out.instructions.push_back(
                read_instruction(instrs->Get(i), fmt::format("{} chain {} instruction {}", where, c, i)));
        m.chains.push_back(std::move(out));
      }
    if (const auto* ops = plan->operators())
      for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
        const auto* op = ops->Get(i);
        if (op->name() == nullptr) fail("{}: operator {} has no name", where, i);
        m.operators.push_back({op->name()->str(), to_string(op->overload())});
      }
    if (const auto* delegates = plan->delegates())
      for (flatbuffers::uoffset_t i = 0; i < delegates->size(); ++i)
        m.delegates.push_back(read_delegate(delegates->Get(i), fmt::format("{} delegate {}", where, i)));
    m.non_const_buffer_sizes = to_vector(plan->non_const_buffer_sizes());
    if (const auto* devs = plan->non_const_buffer_device())
      for (flatbuffers::uoffset_t i = 0; i < devs->size(); ++i) {
        const auto* d = devs->Get(i);
        const int dev = static_cast<int>(d->device_type());
        if (dev < 0 || dev > 1) fail("{}: non_const_buffer_device {} has unknown device type {}", where, i, dev);
        m.buffer_devices.push_back({d->buffer_idx(), static_cast<DeviceType>(dev), d->device_index()});
      }
    return m;
  }

  void read_named_data(Program& program) const {
    const auto* named = root_->named_data();
    if (named == nullptr) return;
    for (flatbuffers::uoffset_t i = 0; i < named->size(); ++i) {
      const auto* n = named->Get(i);
      if (n->key() == nullptr) fail("named_data[{}] has no key", i);
      const auto& seg = segment(n->segment_index(), fmt::format("named data '{}'", n->key()->str()));
      program.named_data.push_back({n->key()->str(), view(seg.file_offset, seg.size)});
    }
  }

  std::span<const uint8_t> bytes_;
  std::string name_;
  std::shared_ptr<const void> keepalive_;
  uint64_t program_size_ = 0;
  uint64_t region_begin_ = 0, region_size_ = 0;  // segment data, absolute
  const fb::Program* root_ = nullptr;
  std::vector<ResolvedSegment> segments_;
  const fb::SubsegmentOffsets* constant_segment_ = nullptr;
};

}  // namespace

LoadedProgram read_program(const std::filesystem::path& path) {
  auto file = MappedFile::open(path);
  return Reader(file->bytes(), path.string(), file).read();
}

LoadedProgram read_program_bytes(std::span<const uint8_t> bytes, std::string_view name,
                                 std::shared_ptr<const void> keepalive) {
  // Flatbuffers reads scalars in place, so the buffer must be aligned like the file's largest
  // scalar; a misaligned caller buffer is copied once into an aligned one.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(std::max_align_t) != 0) {
    auto copy = std::make_shared<std::vector<uint8_t>>(bytes.begin(), bytes.end());
    return Reader(*copy, name, copy).read();
  }
  return Reader(bytes, name, std::move(keepalive)).read();
}

}  // namespace genai::pte
