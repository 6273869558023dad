#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace genai::log {
namespace {
std::atomic<Level> g_level{Level::kInfo};
std::mutex g_mutex;
constexpr const char* kPrefix[] = {"debug: ", "", "warning: ", "error: ", ""};
}  // namespace

void set_level(Level l) { g_level.store(l); }
Level level() { return g_level.load(); }

void write(Level l, std::string_view message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(stderr, "%s%.*s\n", kPrefix[static_cast<int>(l)], static_cast<int>(message.size()),
               message.data());
}

}  // namespace genai::log
