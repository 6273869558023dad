#include "tokenizer/tokenizer_test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/cli_runner.h"

namespace genai::testing {

// fmt rather than string + literal: GCC 12 warns (-Wstringop-overread, a false positive) on the
// concatenation once inlined into some unity batches.
std::string tokenizer_corpus_path() { return fmt::format("{}/tests/data/tokenizer_corpus.json", GENAI_SOURCE_DIR); }

std::vector<std::string> tokenizer_corpus() {
  std::ifstream in(tokenizer_corpus_path());
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str()).get<std::vector<std::string>>();
}

nlohmann::json run_tokenizer_ref(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"python3", python_script("tokenizer_ref.py")};
  argv.insert(argv.end(), args.begin(), args.end());
  const CliResult r = run_process(argv);
  EXPECT_EQ(r.exit_code, 0) << "tokenizer_ref.py " << fmt::format("{}", fmt::join(args, " ")) << " failed:\n" << r.err;
  if (r.exit_code != 0) return nullptr;
  return nlohmann::json::parse(r.out);
}

std::string escaped(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c < 0x20)
      out += fmt::format("\\x{:02x}", c);
    else
      out.push_back(static_cast<char>(c));
  }
  return out;
}

size_t expect_tokenizer_parity(const Tokenizer& tok, const nlohmann::json& ref, const std::vector<std::string>& corpus,
                               bool parse_special, const std::string& label) {
  if (ref.is_null() || !ref.contains("ids")) {
    ADD_FAILURE() << label << ": no reference ids";
    return corpus.size();
  }
  EXPECT_EQ(ref["ids"].size(), corpus.size()) << label;
  size_t mismatches = 0;
  for (size_t i = 0; i < corpus.size() && i < ref["ids"].size(); ++i) {
    const auto expected = ref["ids"][i].get<std::vector<int32_t>>();
    const auto got = tok.encode(corpus[i], /*add_bos=*/false, parse_special);
    if (got != expected) {
      if (++mismatches <= 8)
        ADD_FAILURE() << label << ": corpus[" << i << "] \"" << escaped(corpus[i]) << "\"\n  expected "
                      << fmt::format("{}", expected) << "\n  got      " << fmt::format("{}", got);
    }
    const std::string back = tok.decode(got);
    EXPECT_EQ(back, corpus[i]) << label << ": decode(encode(s)) for corpus[" << i << "] \"" << escaped(corpus[i]) << "\"";
  }
  EXPECT_EQ(mismatches, 0u) << label << ": " << mismatches << " of " << corpus.size() << " strings differ";
  return mismatches;
}

}  // namespace genai::testing
