#include "runtime/backend_executor.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/error.h"

namespace genai::runtime {
namespace {

// Executors live for the whole process: loaded programs keep raw pointers to them, so a second
// registration of an id keeps the first executor (registration is idempotent).
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<BackendExecutor>, std::less<>> by_id;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_backend_executor(std::unique_ptr<BackendExecutor> executor) {
  if (!executor) throw_failure("internal: registering a null backend executor");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  const std::string id(executor->delegate_id());
  if (id.empty()) throw_failure("internal: a backend executor without a delegate id");
  r.by_id.try_emplace(id, std::move(executor));
}

const BackendExecutor* find_backend_executor(std::string_view delegate_id) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_id.find(delegate_id);
  return it == r.by_id.end() ? nullptr : it->second.get();
}

std::vector<std::string> backend_executor_ids() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> ids;
  for (const auto& [id, e] : r.by_id) ids.push_back(id);
  return ids;
}

}  // namespace genai::runtime
