// The message of the InputError a call throws, for tests of bad input that check what it names.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace genai::testing {

// what() of the InputError `f` throws; a test failure and "" when it throws none.
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

}  // namespace genai::testing
