// The process-wide registry of compile-side backends (compile/backend.h).
#include <algorithm>
#include <mutex>

#include "compile/backend.h"
#include "core/error.h"

namespace genai::compile {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Backend>> backends;  // registration order
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_backend(std::unique_ptr<Backend> backend) {
  if (!backend) throw_failure("register_backend: null backend");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& b : r.backends) {
    if (b->name() == backend->name()) return;  // idempotent: the first registration stays
  }
  r.backends.push_back(std::move(backend));
}

const Backend* find_backend(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& b : r.backends) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

const Backend* find_backend(target::BackendType type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& b : r.backends) {
    if (b->backend_type() == type) return b.get();
  }
  return nullptr;
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& b : r.backends) names.emplace_back(b->name());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace genai::compile
