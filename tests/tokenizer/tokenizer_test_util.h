// Shared helpers of the tokenizer tests: the committed corpus and the Python reference runner.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"

namespace genai::testing {

// tests/data/tokenizer_corpus.json
std::vector<std::string> tokenizer_corpus();
std::string tokenizer_corpus_path();

// Runs tests/python/tokenizer_ref.py with `args`; fails the test (and returns null) on error.
nlohmann::json run_tokenizer_ref(const std::vector<std::string>& args);

// Compares `tok` with the reference ids ref["ids"][i] for every corpus string and checks
// decode(encode(s)) == s. Reports at most a few mismatches in detail; returns the mismatch count.
size_t expect_tokenizer_parity(const Tokenizer& tok, const nlohmann::json& ref, const std::vector<std::string>& corpus,
                               bool parse_special, const std::string& label);

// A printable, escaped form of `s` for failure messages.
std::string escaped(const std::string& s);

}  // namespace genai::testing
