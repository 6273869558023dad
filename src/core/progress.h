// A progress bar for long steps. Draws on stderr only when stderr is a terminal, so logs and CI
// output stay clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace genai {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total);
  ~ProgressBar();
  void advance(int64_t n = 1);
  void finish();

 private:
  void draw(bool force);
  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace genai
