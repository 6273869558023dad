#include "runtime/load_verification.h"

#include <atomic>

namespace genai::runtime {
namespace {
std::atomic<bool> g_verify{true};
}  // namespace

void set_load_verification(bool on) { g_verify.store(on); }
bool load_verification() { return g_verify.load(); }

}  // namespace genai::runtime
