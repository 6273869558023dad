#include "pte/program.h"

#include <fmt/format.h>

#include <set>

namespace genai::pte {

TensorValue make_tensor(ScalarType type, std::vector<int32_t> sizes) {
  TensorValue t;
  t.scalar_type = type;
  t.dim_order.resize(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) t.dim_order[i] = static_cast<uint8_t>(i);
  t.sizes = std::move(sizes);
  return t;
}

std::optional<uint64_t> tensor_nbytes(const TensorValue& t) {
  uint64_t n = scalar_type_size(t.scalar_type);
  for (int32_t s : t.sizes) {
    if (s < 0) return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(s);
    if (d != 0 && n > UINT64_MAX / d) return std::nullopt;
    n *= d;
  }
  return n;
}

std::string operator_full_name(const Operator& op) {
  return op.overload.empty() ? op.name : op.name + "." + op.overload;
}

size_t instruction_count(const Method& m) {
  size_t n = 0;
  for (const auto& c : m.chains) n += c.instructions.size();
  return n;
}

MethodKind method_kind(const Method& m) {
  if (instruction_count(m) == 0) return MethodKind::kConstant;
  for (const auto& c : m.chains)
    for (const auto& i : c.instructions)
      if (std::holds_alternative<DelegateCall>(i)) return MethodKind::kDelegated;
  return MethodKind::kKernels;
}

std::string_view method_kind_name(MethodKind k) {
  switch (k) {
    case MethodKind::kDelegated: return "delegated";
    case MethodKind::kKernels: return "kernels";
    case MethodKind::kConstant: return "constant";
  }
  return "unknown";
}

namespace {

// torch.utils._pytree.treespec_dumps (protocol 1) of a leaf and of a list of leaves: the
// container metadata upstream's emitter attaches to prim getter methods.
constexpr const char* kLeafSpec = R"({"type": null, "context": null, "children_spec": []})";

Method constant_method_shell(std::string name, std::vector<Value> leaves, std::string out_spec) {
  Method m;
  m.name = std::move(name);
  m.container_meta = ContainerMeta{"", std::move(out_spec)};
  for (size_t i = 0; i < leaves.size(); ++i) m.outputs.push_back(static_cast<int32_t>(i));
  m.values = std::move(leaves);
  m.chains.push_back(Chain{});
  m.non_const_buffer_sizes = {0};
  return m;
}

}  // namespace

Method make_constant_method(std::string name, Value value) {
  std::vector<Value> leaves;
  leaves.push_back(std::move(value));
  return constant_method_shell(std::move(name), std::move(leaves), fmt::format("[1, {}]", kLeafSpec));
}

Method make_constant_list_method(std::string name, std::vector<Value> items) {
  std::string children;
  for (size_t i = 0; i < items.size(); ++i) children += (i ? ", " : "") + std::string(kLeafSpec);
  std::string spec =
      fmt::format(R"([1, {{"type": "builtins.list", "context": "null", "children_spec": [{}]}}])", children);
  return constant_method_shell(std::move(name), std::move(items), std::move(spec));
}

const Method* Program::find_method(std::string_view name) const {
  for (const auto& m : methods)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<Value> Program::constant_values(std::string_view name) const {
  const Method* m = find_method(name);
  if (!m || method_kind(*m) != MethodKind::kConstant) return {};
  std::vector<Value> out;
  for (int32_t i : m->outputs)
    if (i >= 0 && static_cast<size_t>(i) < m->values.size()) out.push_back(m->values[static_cast<size_t>(i)]);
  return out;
}

const NamedData* Program::find_named_data(std::string_view key) const {
  for (const auto& d : named_data)
    if (d.key == key) return &d;
  return nullptr;
}

namespace {

class MethodChecker {
 public:
  explicit MethodChecker(const Method& m) : m_(m) {}

  std::optional<std::string> run() {
    for (size_t i = 0; i < m_.non_const_buffer_sizes.size(); ++i)
      if (m_.non_const_buffer_sizes[i] < 0) return fail(fmt::format("non_const_buffer_sizes[{}] is negative", i));
    for (const auto& d : m_.buffer_devices)
      if (d.buffer_idx < 1 || static_cast<size_t>(d.buffer_idx) >= m_.non_const_buffer_sizes.size())
        return fail(fmt::format("non_const_buffer_device names buffer {}, valid 1..{}", d.buffer_idx,
                                static_cast<int64_t>(m_.non_const_buffer_sizes.size()) - 1));
    for (size_t i = 0; i < m_.values.size(); ++i)
      if (auto p = check_value(i)) return fail(fmt::format("value {}: {}", i, *p));
    if (auto p = check_indices("inputs", m_.inputs)) return fail(*p);
    if (auto p = check_indices("outputs", m_.outputs)) return fail(*p);
    for (size_t c = 0; c < m_.chains.size(); ++c) {
      const Chain& chain = m_.chains[c];
      if (auto p = check_indices("chain inputs", chain.inputs)) return fail(fmt::format("chain {}: {}", c, *p));
      if (auto p = check_indices("chain outputs", chain.outputs)) return fail(fmt::format("chain {}: {}", c, *p));
      for (size_t i = 0; i < chain.instructions.size(); ++i)
        if (auto p = check_instruction(chain.instructions[i], chain.instructions.size()))
          return fail(fmt::format("chain {} instruction {}: {}", c, i, *p));
    }
    return std::nullopt;
  }

 private:
  std::optional<std::string> fail(const std::string& what) const {
    return fmt::format("method '{}': {}", m_.name, what);
  }

  bool valid_value(int32_t v) const { return v >= 0 && static_cast<size_t>(v) < m_.values.size(); }

  std::optional<std::string> check_indices(std::string_view what, const std::vector<int32_t>& idx) const {
    for (int32_t v : idx)
      if (!valid_value(v))
        return fmt::format("{} refer to value {}, but the method has {} values", what, v, m_.values.size());
    return std::nullopt;
  }

  std::optional<std::string> check_value(size_t index) const {
    const Value& v = m_.values[index];
    if (const auto* l = std::get_if<TensorList>(&v)) return check_indices("tensor list items", l->items);
    if (const auto* l = std::get_if<OptionalTensorList>(&v)) {
      for (int32_t item : l->items)
        if (item != -1 && !valid_value(item))
          return fmt::format("optional tensor list refers to value {}, but the method has {} values", item,
                             m_.values.size());
      return std::nullopt;
    }
    if (const auto* t = std::get_if<TensorValue>(&v)) return check_tensor(*t);
    return std::nullopt;
  }

  std::optional<std::string> check_tensor(const TensorValue& t) const {
    if (!is_known_scalar_type(static_cast<int>(t.scalar_type)))
      return fmt::format("unknown scalar type {}", static_cast<int>(t.scalar_type));
    const auto nbytes = tensor_nbytes(t);
    if (!nbytes) return std::string("tensor sizes are negative or their product overflows");
    if (t.dim_order.size() != t.sizes.size())
      return fmt::format("dim_order has {} entries for a rank-{} tensor", t.dim_order.size(), t.sizes.size());
    std::vector<bool> seen(t.sizes.size(), false);
    for (uint8_t d : t.dim_order) {
      if (d >= t.sizes.size() || seen[d]) return std::string("dim_order is not a permutation of the dimensions");
      seen[d] = true;
    }
    if (t.extra && t.extra->location == TensorDataLocation::kExternal && t.data)
      return std::string("an external tensor cannot also carry data in the program");
    if (t.data && t.data->size() != *nbytes)
      return fmt::format("tensor data has {} bytes, its type and sizes need {}", t.data->size(), *nbytes);
    if (t.allocation) {
      const Allocation& a = *t.allocation;
      if (a.memory_id < 1 || a.memory_id >= m_.non_const_buffer_sizes.size())
        return fmt::format("memory_id {} out of range: the method plans {} buffers (ids 1..{})", a.memory_id,
                           m_.non_const_buffer_sizes.empty() ? 0 : m_.non_const_buffer_sizes.size() - 1,
                           m_.non_const_buffer_sizes.empty() ? 0 : m_.non_const_buffer_sizes.size() - 1);
      const uint64_t buffer = static_cast<uint64_t>(m_.non_const_buffer_sizes[a.memory_id]);
      if (a.offset > buffer || *nbytes > buffer - a.offset)
        return fmt::format("planned tensor at offset {} with {} bytes overruns buffer {} of {} bytes", a.offset,
                           *nbytes, a.memory_id, buffer);
    }
    return std::nullopt;
  }

  std::optional<std::string> check_instruction(const Instruction& ins, size_t chain_size) const {
    if (const auto* k = std::get_if<KernelCall>(&ins)) {
      if (k->op_index < 0 || static_cast<size_t>(k->op_index) >= m_.operators.size())
        return fmt::format("kernel call names operator {}, but the method has {} operators", k->op_index,
                           m_.operators.size());
      return check_indices("kernel call args", k->args);
    }
    if (const auto* d = std::get_if<DelegateCall>(&ins)) {
      if (d->delegate_index < 0 || static_cast<size_t>(d->delegate_index) >= m_.delegates.size())
        return fmt::format("delegate call names delegate {}, but the method has {} delegates", d->delegate_index,
                           m_.delegates.size());
      return check_indices("delegate call args", d->args);
    }
    if (const auto* mv = std::get_if<MoveCall>(&ins)) {
      if (!valid_value(mv->move_from) || !valid_value(mv->move_to))
        return fmt::format("move {} -> {} refers to a value out of range (method has {} values)", mv->move_from,
                           mv->move_to, m_.values.size());
      return std::nullopt;
    }
    if (const auto* j = std::get_if<JumpFalseCall>(&ins)) {
      if (!valid_value(j->cond_value_index))
        return fmt::format("jump condition value {} out of range", j->cond_value_index);
      if (j->destination_instruction < 0 || static_cast<size_t>(j->destination_instruction) >= chain_size)
        return fmt::format("jump destination {} outside the chain's {} instructions", j->destination_instruction,
                           chain_size);
      return std::nullopt;
    }
    const auto& f = std::get<FreeCall>(ins);
    if (!valid_value(f.value_index)) return fmt::format("free of value {} out of range", f.value_index);
    return std::nullopt;
  }

  const Method& m_;
};

}  // namespace

std::optional<std::string> find_program_problem(const Program& p) {
  std::set<std::string_view> names;
  for (const auto& m : p.methods) {
    if (!names.insert(m.name).second) return fmt::format("two methods are named '{}'", m.name);
    if (auto problem = MethodChecker(m).run()) return problem;
  }
  std::set<std::string_view> keys;
  for (const auto& d : p.named_data)
    if (!keys.insert(d.key).second) return fmt::format("two named data entries have the key '{}'", d.key);
  return std::nullopt;
}

}  // namespace genai::pte
