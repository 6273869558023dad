#include "pte/program_writer.h"

#include <cstring>
#include <span>

#include "core/atomic_file.h"
#include "core/error.h"
#include "schema/program_generated.h"

namespace genai::pte {
namespace {

namespace fb = executorch_flatbuffer;
using Bytes = std::span<const uint8_t>;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
bool is_power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// The flatbuffer's own alignment need: the largest force_align in the schema (Buffer.storage,
// BackendDelegateInlineData.data). The inserted header block is padded to it.
constexpr uint64_t kSchemaMaxAlignment = 16;
// Inline payloads share the flatbuffer's 2 GiB offset space; beyond this they must be segments.
constexpr uint64_t kMaxInlineBytes = uint64_t{1} << 30;

struct Piece {
  uint64_t file_offset;
  Bytes bytes;
};

struct Segment {
  uint64_t offset = 0;  // relative to segment_base_offset
  uint64_t size = 0;
  std::vector<std::pair<uint64_t, Bytes>> parts;  // (offset inside the segment, bytes)
};

struct DelegateRef {
  fb::DataLocation location;
  uint32_t index;
};

// The whole file, as the flatbuffer head plus the segment pieces that follow it.
struct Plan {
  std::vector<uint8_t> head;
  std::vector<Piece> pieces;
  ProgramLayout layout;
};

class Planner {
 public:
  Planner(const Program& p, const WriteOptions& o, std::string_view target) : p_(p), o_(o), target_(target) {}

  Plan build() {
    if (!is_power_of_two(o_.segment_alignment) || !is_power_of_two(o_.constant_tensor_alignment))
      throw_failure("cannot write {}: segment_alignment {} and constant_tensor_alignment {} must be powers of two",
                    target_, o_.segment_alignment, o_.constant_tensor_alignment);
    if (auto problem = find_program_problem(p_)) throw_failure("cannot write {}: {}", target_, *problem);
    place_tensor_data();
    place_delegates();
    place_named_data();
    uint64_t end = 0;
    for (auto& s : segments_) {
      s.offset = align_up(end, o_.segment_alignment);
      end = s.offset + s.size;
    }
    return assemble(end);
  }

 private:
  // Constant tensors go to segment 0 (always present, as upstream does, even when empty), each
  // start aligned to constant_tensor_alignment; initial state of planned tensors goes to one
  // mutable segment, unpadded. Index 0 of both offset lists is the reserved placeholder.
  void place_tensor_data() {
    segments_.emplace_back();
    constant_offsets_ = {0};
    Segment mutable_segment;
    mutable_offsets_ = {0};
    data_index_.resize(p_.methods.size());
    for (size_t m = 0; m < p_.methods.size(); ++m) {
      const auto& values = p_.methods[m].values;
      data_index_[m].assign(values.size(), 0);
      for (size_t v = 0; v < values.size(); ++v) {
        const auto* t = std::get_if<TensorValue>(&values[v]);
        if (t == nullptr || !t->data) continue;
        if (t->allocation) {
          data_index_[m][v] = static_cast<uint32_t>(mutable_offsets_.size());
          mutable_offsets_.push_back(mutable_segment.size);
          mutable_segment.parts.emplace_back(mutable_segment.size, t->data->bytes());
          mutable_segment.size += t->data->size();
        } else {
          Segment& c = segments_[0];
          const uint64_t at = c.parts.empty() ? 0 : align_up(c.size, o_.constant_tensor_alignment);
          data_index_[m][v] = static_cast<uint32_t>(constant_offsets_.size());
          constant_offsets_.push_back(at);
          c.parts.emplace_back(at, t->data->bytes());
          c.size = at + t->data->size();
        }
      }
    }
    if (mutable_offsets_.size() > 1) {
      mutable_segment_ = static_cast<int64_t>(segments_.size());
      segments_.push_back(std::move(mutable_segment));
    }
  }

  // Non-empty payloads become segments (identical payloads share one); empty ones stay inline.
  void place_delegates() {
    std::vector<std::pair<Bytes, uint32_t>> seen_segment, seen_inline;
    auto find = [](const std::vector<std::pair<Bytes, uint32_t>>& seen, Bytes b) -> int64_t {
      for (const auto& [bytes, idx] : seen)
        if (bytes.size() == b.size() && (b.empty() || std::memcmp(bytes.data(), b.data(), b.size()) == 0))
          return idx;
      return -1;
    };
    uint64_t inline_bytes = 0;
    delegate_refs_.resize(p_.methods.size());
    for (size_t m = 0; m < p_.methods.size(); ++m) {
      for (const auto& d : p_.methods[m].delegates) {
        const Bytes b = d.processed.bytes();
        if (o_.extract_delegate_segments && !b.empty()) {
          int64_t idx = find(seen_segment, b);
          if (idx < 0) {
            idx = static_cast<int64_t>(segments_.size());
            Segment s;
            s.size = b.size();
            s.parts.emplace_back(0, b);
            segments_.push_back(std::move(s));
            seen_segment.emplace_back(b, static_cast<uint32_t>(idx));
          }
          delegate_refs_[m].push_back({fb::DataLocation::SEGMENT, static_cast<uint32_t>(idx)});
        } else {
          int64_t idx = find(seen_inline, b);
          if (idx < 0) {
            idx = static_cast<int64_t>(inline_data_.size());
            inline_data_.push_back(b);
            inline_bytes += b.size();
            seen_inline.emplace_back(b, static_cast<uint32_t>(idx));
          }
          delegate_refs_[m].push_back({fb::DataLocation::INLINE, static_cast<uint32_t>(idx)});
        }
      }
    }
    if (inline_bytes > kMaxInlineBytes)
      throw_failure("cannot write {}: {} bytes of inline delegate payloads exceed the flatbuffer limit; "
                    "write them as segments (extract_delegate_segments)",
                    target_, inline_bytes);
  }

  // One segment per distinct blob; keys with identical bytes share it.
  void place_named_data() {
    for (size_t i = 0; i < p_.named_data.size(); ++i) {
      const Bytes b = p_.named_data[i].data.bytes();
      int64_t idx = -1;
      for (size_t j = 0; j < i && idx < 0; ++j) {
        const Bytes o = p_.named_data[j].data.bytes();
        if (o.size() == b.size() && (b.empty() || std::memcmp(o.data(), b.data(), b.size()) == 0))
          idx = named_segment_[j];
      }
      if (idx < 0) {
        idx = static_cast<int64_t>(segments_.size());
        Segment s;
        s.size = b.size();
        s.parts.emplace_back(0, b);
        segments_.push_back(std::move(s));
      }
      named_segment_.push_back(static_cast<uint32_t>(idx));
    }
  }

  flatbuffers::Offset<fb::Tensor> tensor(const TensorValue& t, uint32_t data_index) {
    auto sizes = b_.CreateVector(t.sizes);
    auto dim_order = b_.CreateVector(t.dim_order);
    flatbuffers::Offset<fb::AllocationDetails> alloc = 0;
    if (t.allocation)
      alloc = fb::CreateAllocationDetails(b_, t.allocation->memory_id,
                                          static_cast<uint32_t>(t.allocation->offset & 0xffffffffu),
                                          static_cast<uint32_t>(t.allocation->offset >> 32));
    flatbuffers::Offset<fb::ExtraTensorInfo> extra = 0;
    if (t.extra) {
      auto fqn = t.extra->fully_qualified_name.empty() ? 0 : b_.CreateString(t.extra->fully_qualified_name);
      extra = fb::CreateExtraTensorInfo(b_, 0, fqn, static_cast<fb::TensorDataLocation>(t.extra->location),
                                        static_cast<fb::DeviceType>(t.extra->device_type), t.extra->device_index);
    }
    return fb::CreateTensor(b_, static_cast<fb::ScalarType>(t.scalar_type), 0, sizes, dim_order, t.requires_grad,
                            data_index, alloc, t.layout, static_cast<fb::TensorShapeDynamism>(t.dynamism), extra);
  }

  flatbuffers::Offset<fb::EValue> value(const Value& v, uint32_t data_index) {
    const auto type = static_cast<fb::KernelTypes>(v.index() + 1);
    const flatbuffers::Offset<void> val = std::visit(
        Overloaded{
            [&](const Null&) { return fb::CreateNull(b_).Union(); },
            [&](const Int& x) { return fb::CreateInt(b_, x.value).Union(); },
            [&](const Bool& x) { return fb::CreateBool(b_, x.value).Union(); },
            [&](const Double& x) { return fb::CreateDouble(b_, x.value).Union(); },
            [&](const TensorValue& x) { return tensor(x, data_index).Union(); },
            [&](const String& x) { return fb::CreateString(b_, b_.CreateString(x.value)).Union(); },
            [&](const IntList& x) { return fb::CreateIntList(b_, b_.CreateVector(x.items)).Union(); },
            [&](const DoubleList& x) { return fb::CreateDoubleList(b_, b_.CreateVector(x.items)).Union(); },
            [&](const BoolList& x) {
              std::vector<uint8_t> items(x.items.begin(), x.items.end());
              return fb::CreateBoolList(b_, b_.CreateVector(items)).Union();
            },
            [&](const TensorList& x) { return fb::CreateTensorList(b_, b_.CreateVector(x.items)).Union(); },
            [&](const OptionalTensorList& x) {
              return fb::CreateOptionalTensorList(b_, b_.CreateVector(x.items)).Union();
            },
        },
        v);
    return fb::CreateEValue(b_, type, val);
  }

  flatbuffers::Offset<fb::Instruction> instruction(const Instruction& ins) {
    const auto type = static_cast<fb::InstructionArguments>(ins.index() + 1);
    const flatbuffers::Offset<void> args = std::visit(
        Overloaded{
            [&](const KernelCall& k) { return fb::CreateKernelCall(b_, k.op_index, b_.CreateVector(k.args)).Union(); },
            [&](const DelegateCall& d) {
              return fb::CreateDelegateCall(b_, d.delegate_index, b_.CreateVector(d.args)).Union();
            },
            [&](const MoveCall& m) { return fb::CreateMoveCall(b_, m.move_from, m.move_to).Union(); },
            [&](const JumpFalseCall& j) {
              return fb::CreateJumpFalseCall(b_, j.cond_value_index, j.destination_instruction).Union();
            },
            [&](const FreeCall& f) { return fb::CreateFreeCall(b_, f.value_index).Union(); },
        },
        ins);
    return fb::CreateInstruction(b_, type, args);
  }

  flatbuffers::Offset<fb::ExecutionPlan> plan(size_t mi) {
    const Method& m = p_.methods[mi];
    auto name = b_.CreateString(m.name);
    flatbuffers::Offset<fb::ContainerMetadata> meta = 0;
    if (m.container_meta)
      meta = fb::CreateContainerMetadata(b_, b_.CreateString(m.container_meta->encoded_inp_str),
                                         b_.CreateString(m.container_meta->encoded_out_str));
    std::vector<flatbuffers::Offset<fb::EValue>> values;
    for (size_t v = 0; v < m.values.size(); ++v) values.push_back(value(m.values[v], data_index_[mi][v]));
    auto values_vec = b_.CreateVector(values);
    auto inputs = b_.CreateVector(m.inputs);
    auto outputs = b_.CreateVector(m.outputs);
    std::vector<flatbuffers::Offset<fb::Chain>> chains;
    for (const auto& c : m.chains) {
      auto cin = b_.CreateVector(c.inputs);
      auto cout = b_.CreateVector(c.outputs);
      std::vector<flatbuffers::Offset<fb::Instruction>> instrs;
      for (const auto& i : c.instructions) instrs.push_back(instruction(i));
      chains.push_back(fb::CreateChain(b_, cin, cout, b_.CreateVector(instrs)));
    }
    auto chains_vec = b_.CreateVector(chains);
    std::vector<flatbuffers::Offset<fb::Operator>> ops;
    for (const auto& op : m.operators)
      ops.push_back(fb::CreateOperator(b_, b_.CreateString(op.name), b_.CreateString(op.overload)));
    auto ops_vec = b_.CreateVector(ops);
    std::vector<flatbuffers::Offset<fb::BackendDelegate>> delegates;
    for (size_t d = 0; d < m.delegates.size(); ++d) {
      const Delegate& del = m.delegates[d];
      auto id = b_.CreateString(del.id);
      auto ref = fb::CreateBackendDelegateDataReference(b_, delegate_refs_[mi][d].location, delegate_refs_[mi][d].index);
      std::vector<flatbuffers::Offset<fb::CompileSpec>> specs;
      for (const auto& s : del.compile_specs)
        specs.push_back(fb::CreateCompileSpec(b_, b_.CreateString(s.key), b_.CreateVector(s.value)));
      delegates.push_back(fb::CreateBackendDelegate(b_, id, ref, b_.CreateVector(specs)));
    }
    auto delegates_vec = b_.CreateVector(delegates);
    auto sizes = b_.CreateVector(m.non_const_buffer_sizes);
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::NonConstBufferDevice>>> devices = 0;
    if (!m.buffer_devices.empty()) {
      std::vector<flatbuffers::Offset<fb::NonConstBufferDevice>> devs;
      for (const auto& d : m.buffer_devices)
        devs.push_back(fb::CreateNonConstBufferDevice(b_, d.buffer_idx, static_cast<fb::DeviceType>(d.device_type),
                                                      d.device_index));
      devices = b_.CreateVector(devs);
    }
    return fb::CreateExecutionPlan(b_, name, meta, values_vec, inputs, outputs, chains_vec, ops_vec, delegates_vec,
                                   sizes, devices);
  }

  std::vector<uint8_t> flatbuffer() {
    std::vector<flatbuffers::Offset<fb::ExecutionPlan>> plans;
    for (size_t m = 0; m < p_.methods.size(); ++m) plans.push_back(plan(m));
    auto plans_vec = b_.CreateVector(plans);
    auto constant_buffer = b_.CreateVector(std::vector<flatbuffers::Offset<fb::Buffer>>{});
    std::vector<flatbuffers::Offset<fb::BackendDelegateInlineData>> inline_data;
    for (Bytes d : inline_data_) {
      b_.ForceVectorAlignment(d.size(), sizeof(uint8_t), 16);
      inline_data.push_back(fb::CreateBackendDelegateInlineData(b_, b_.CreateVector(d.data(), d.size())));
    }
    auto inline_vec = b_.CreateVector(inline_data);
    std::vector<flatbuffers::Offset<fb::DataSegment>> segs;
    for (const auto& s : segments_) segs.push_back(fb::CreateDataSegment(b_, s.offset, s.size));
    auto segs_vec = b_.CreateVector(segs);
    auto constant_segment = fb::CreateSubsegmentOffsets(b_, 0, b_.CreateVector(constant_offsets_));
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::SubsegmentOffsets>>> mutable_segs = 0;
    if (mutable_segment_ >= 0) {
      std::vector<flatbuffers::Offset<fb::SubsegmentOffsets>> v{
          fb::CreateSubsegmentOffsets(b_, static_cast<uint32_t>(mutable_segment_), b_.CreateVector(mutable_offsets_))};
      mutable_segs = b_.CreateVector(v);
    }
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::NamedData>>> named = 0;
    if (!p_.named_data.empty()) {
      std::vector<flatbuffers::Offset<fb::NamedData>> v;
      for (size_t i = 0; i < p_.named_data.size(); ++i)
        v.push_back(fb::CreateNamedData(b_, b_.CreateString(p_.named_data[i].key), named_segment_[i]));
      named = b_.CreateVector(v);
    }
    auto root = fb::CreateProgram(b_, p_.version, plans_vec, constant_buffer, inline_vec, segs_vec, constant_segment,
                                  mutable_segs, named);
    fb::FinishProgramBuffer(b_, root);
    return {b_.GetBufferPointer(), b_.GetBufferPointer() + b_.GetSize()};
  }

  Plan assemble(uint64_t segment_end) {
    Plan plan;
    std::vector<uint8_t> body = flatbuffer();
    uint64_t segment_bytes = 0;
    for (const auto& s : segments_) segment_bytes += s.size;
    plan.layout.segments.reserve(segments_.size());
    for (const auto& s : segments_) plan.layout.segments.push_back({s.offset, s.size});
    if (segment_bytes == 0) {  // nothing after the flatbuffer: a plain flatbuffer, no header
      plan.layout.file_size = body.size();
      plan.head = std::move(body);
      return plan;
    }
    // Insert the header block after the root offset and identifier; everything behind it moves
    // by the block size (a multiple of the schema's alignment), so only the root offset changes.
    const uint64_t block = align_up(kExtendedHeaderLength, kSchemaMaxAlignment);
    ExtendedHeader h;
    h.program_size = body.size() + block;
    h.segment_base_offset = align_up(h.program_size, o_.segment_alignment);
    h.segment_data_size = segment_end;
    plan.head.resize(h.program_size, 0);
    uint32_t root = 0;
    std::memcpy(&root, body.data(), 4);
    root = flatbuffers::EndianScalar(static_cast<uint32_t>(root + block));
    std::memcpy(plan.head.data(), &root, 4);
    std::memcpy(plan.head.data() + 4, body.data() + 4, 4);
    uint8_t* hp = plan.head.data() + kExtendedHeaderOffset;
    std::memcpy(hp, kExtendedHeaderMagic, 4);
    put_le(hp + 4, kExtendedHeaderLength, 4);
    put_le(hp + 8, h.program_size, 8);
    put_le(hp + 16, h.segment_base_offset, 8);
    put_le(hp + 24, h.segment_data_size, 8);
    std::memcpy(plan.head.data() + kExtendedHeaderOffset + block, body.data() + 8, body.size() - 8);
    for (const auto& s : segments_)
      for (const auto& [at, bytes] : s.parts)
        if (!bytes.empty()) plan.pieces.push_back({h.segment_base_offset + s.offset + at, bytes});
    plan.layout.header = h;
    plan.layout.file_size = h.segment_base_offset + h.segment_data_size;
    return plan;
  }

  static void put_le(uint8_t* p, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  }

  const Program& p_;
  const WriteOptions& o_;
  std::string_view target_;
  flatbuffers::FlatBufferBuilder b_{4096};
  std::vector<Segment> segments_;
  std::vector<uint64_t> constant_offsets_, mutable_offsets_;
  int64_t mutable_segment_ = -1;
  std::vector<std::vector<uint32_t>> data_index_;
  std::vector<std::vector<DelegateRef>> delegate_refs_;
  std::vector<Bytes> inline_data_;
  std::vector<uint32_t> named_segment_;
};

// Writes the plan's bytes in file order, zero-filling the gaps between pieces.
template <class Sink>
void emit(const Plan& plan, Sink& sink) {
  sink.write(Bytes(plan.head));
  uint64_t pos = plan.head.size();
  for (const auto& piece : plan.pieces) {
    sink.write_zeros(piece.file_offset - pos);
    sink.write(piece.bytes);
    pos = piece.file_offset + piece.bytes.size();
  }
  sink.write_zeros(plan.layout.file_size - pos);
}

struct VectorSink {
  std::vector<uint8_t>& out;
  void write(Bytes b) { out.insert(out.end(), b.begin(), b.end()); }
  void write_zeros(uint64_t n) { out.resize(out.size() + n, 0); }
};

}  // namespace

ProgramLayout write_program(const std::filesystem::path& target, const Program& program, const WriteOptions& options) {
  const std::string name = target.string();
  Plan plan = Planner(program, options, name).build();
  AtomicFileWriter writer(target, options.sync);
  emit(plan, writer);
  writer.commit();
  return plan.layout;
}

std::vector<uint8_t> serialize_program(const Program& program, const WriteOptions& options, ProgramLayout* layout) {
  Plan plan = Planner(program, options, "<memory>").build();
  std::vector<uint8_t> out;
  out.reserve(plan.layout.file_size);
  VectorSink sink{out};
  emit(plan, sink);
  if (layout) *layout = plan.layout;
  return out;
}

}  // namespace genai::pte
