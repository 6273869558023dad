// genai sweep without Ray: the matrix's cells and their checks, a local sweep of tiny models end
// to end (every cell's program, figures and report; a resumed sweep skipping the finished cells and
// redoing an unfinished one byte for byte), and a failing cell recorded while the sweep goes on.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "support/cli_json.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "sweep/sweep_matrix.h"

namespace genai::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Two files that exist (the matrix only checks that a checkpoint is there).
struct Checkpoints {
  TempDir dir;
  Checkpoints() {
    write_file(dir.file("a.gguf"), "x");
    write_file(dir.file("b.gguf"), "x");
  }
};

TEST(SweepMatrix, CellsAreTheProductInMatrixOrderWithCheckedOptions) {
  Checkpoints c;
  const json m = {{"models", {"a.gguf", {{"name", "bee"}, {"checkpoint", "b.gguf"}, {"options", {{"max_seq_len", 96}}}}}},
                  {"soc_models", {"SM8650", "SM8750"}},
                  {"quant_recipes", {"16a8w", "16a4w"}},
                  {"techniques", {{{"name", "plain"}}, {{"name", "hadamard"}, {"options", {{"rotation", "hadamard"}}}}}},
                  {"options", {{"max_seq_len", 64}, {"prefill_ar_len", 16}}},
                  {"bench", {{"pp", 8}, {"tg", 4}, {"threads", 2}}}};
  const sweep::SweepMatrix s = sweep::sweep_matrix_from_json(m, c.dir.file("m.json"));
  ASSERT_EQ(s.cells.size(), 16u);
  EXPECT_EQ(s.cells.front().name, "a-SM8650-genai-16a8w-plain");
  EXPECT_EQ(s.cells[1].name, "a-SM8650-genai-16a8w-hadamard");
  EXPECT_EQ(s.cells.back().name, "bee-SM8750-genai-16a4w-hadamard");
  const sweep::SweepCell& last = s.cells.back();
  EXPECT_EQ(last.options["checkpoint"], fs::weakly_canonical(c.dir.file("b.gguf")).string());
  EXPECT_EQ(last.options["max_seq_len"], 96);  // the model's options over the common ones
  EXPECT_EQ(last.options["prefill_ar_len"], 16);
  EXPECT_EQ(last.options["rotation"], "hadamard");
  EXPECT_EQ(last.options["soc_model"], "SM8750");
  EXPECT_EQ(last.options["threads"], 2);  // a cell computes on the CPUs it asks for
  EXPECT_EQ(last.axes["techniques"], "hadamard");
  ASSERT_TRUE(s.bench.has_value());
  EXPECT_EQ(s.bench->pp, 8);
  EXPECT_EQ(s.bench->reps, 1);
}

TEST(SweepMatrix, BadMatricesAreInputErrorsNamingWhatIsWrong) {
  Checkpoints c;
  const std::string origin = c.dir.file("m.json");
  auto expect_error = [&](json m, std::vector<std::string> words) {
    try {
      sweep::sweep_matrix_from_json(m, origin);
      ADD_FAILURE() << "no error for " << m.dump();
    } catch (const InputError& e) {
      const std::string what = e.what();
      for (const auto& w : words) EXPECT_NE(what.find(w), std::string::npos) << "'" << w << "' not in: " << what;
    }
  };
  const json base = {{"models", {"a.gguf"}}};
  json m = base;
  m["soc_model"] = {"SM8650"};
  expect_error(m, {"m.json", "unknown key 'soc_model'", "soc_models"});
  m = base;
  m["soc_models"] = {"SM9999"};
  expect_error(m, {"SM9999", "SM8650"});  // the option table's check lists the valid SoCs
  m = base;
  m["techniques"] = {{{"name", "x"}, {"options", {{"rotaton", "hadamard"}}}}};
  expect_error(m, {"cell a-SM8650-genai-16a8w-x", "unknown option 'rotaton'"});
  m = base;
  m["techniques"] = {{{"name", "x"}, {"options", {{"rotation", "givens"}}}}};
  expect_error(m, {"--rotation 'givens'", "none, hadamard"});
  m = base;
  m["options"] = {{"artifact", "x"}};
  expect_error(m, {"'artifact'", "sets itself"});
  m = {{"models", {"a.gguf", "missing.gguf"}}};
  expect_error(m, {"missing.gguf", "does not exist"});
  m = {{"models", {"a.gguf", {{"checkpoint", "a.gguf"}}}}};
  expect_error(m, {"two cells are named 'a-SM8650-genai-16a8w-plain'"});
  m = base;
  m["bench"] = {{"reps", 0}};
  expect_error(m, {"bench 'reps'", "at least 1"});
  m = base;
  m["lowerings"] = json::array();
  expect_error(m, {"'lowerings' must be a non-empty list"});
  expect_exit2({"sweep", "--matrix", c.dir.file("absent.json"), "-a", c.dir.file("out")}, {"absent.json"});
  expect_exit2({"sweep", "-a", c.dir.file("out")}, {"--matrix"});
}

// The matrix of the local sweeps: two tiny random models on two SoCs, one recipe.
struct TinySweep {
  TempDir dir;
  std::string matrix = dir.file("matrix.json");
  std::string out = dir.file("out");
  explicit TinySweep(const json& techniques = json::array({{{"name", "plain"}}})) {
    for (const char* seed : {"1", "2"}) {
      const CliResult r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", seed, "--out",
                                     dir.file(std::string("tiny") + seed + ".gguf")});
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
    const json m = {{"models", {"tiny1.gguf", "tiny2.gguf"}},
                    {"soc_models", {"SM8650", "SM8750"}},
                    {"quant_recipes", {"16a8w"}},
                    {"techniques", techniques},
                    {"options", {{"max_seq_len", 64}, {"prefill_ar_len", 16}, {"enable_x86_64", true},
                                 {"eval_max_tokens", 96}}},
                    {"bench", {{"pp", 16}, {"tg", 4}, {"reps", 1}, {"threads", 1}}}};
    write_file(matrix, m.dump(1));
  }
  json results() const { return json::parse(read_text(fs::path(out) / "results.json")); }
};

TEST(SweepCli, ALocalSweepWritesEveryCellAndItsReportAndResumesWhereItStopped) {
  TinySweep s;
  const json first = run_genai_json({"sweep", "--matrix", s.matrix, "-a", s.out, "--jobs", "2", "--json"});
  ASSERT_EQ(first["cells"], 4) << first.dump();
  EXPECT_EQ(first["ran"], 4);
  EXPECT_EQ(first["failed"], 0);
  const json r1 = s.results();
  ASSERT_EQ(r1["results"].size(), 4u);
  for (const json& cell : r1["results"]) {
    SCOPED_TRACE(cell["cell"].get<std::string>());
    ASSERT_EQ(cell["status"], "ok") << cell.dump();
    const json& m = cell["metrics"];
    EXPECT_GT(m["perplexity_float"].get<double>(), 1.0);
    EXPECT_GT(m["perplexity_quantized"].get<double>(), 1.0);
    EXPECT_NEAR(m["perplexity_ratio"].get<double>(),
                m["perplexity_quantized"].get<double>() / m["perplexity_float"].get<double>(), 1e-12);
    EXPECT_GT(m["program_bytes"].get<double>(), 0);
    EXPECT_GT(m["decode_tok_s"].get<double>(), 0);
    EXPECT_GT(m["prefill_tok_s"].get<double>(), 0);
    EXPECT_TRUE(cell["checksums"].contains("text_decoder.pte"));
    const fs::path dir = fs::path(s.out) / cell["cell"].get<std::string>();
    EXPECT_TRUE(fs::exists(dir / "program" / "manifest.json"));
    EXPECT_TRUE(fs::exists(dir / "compile.json"));
    EXPECT_TRUE(fs::exists(dir / "bench.json"));
  }
  // The same model on another SoC: the same weights and arithmetic, another compile spec.
  EXPECT_EQ(r1["results"][0]["metrics"]["perplexity_quantized"], r1["results"][1]["metrics"]["perplexity_quantized"]);
  EXPECT_NE(r1["results"][0]["checksums"]["text_decoder.pte"], r1["results"][1]["checksums"]["text_decoder.pte"]);
  EXPECT_NE(r1["results"][0]["metrics"]["perplexity_float"], r1["results"][2]["metrics"]["perplexity_float"]);

  const std::string csv = read_text(fs::path(s.out) / "results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_EQ(csv.rfind("cell,model,soc_model,lowering,quant_recipe,techniques,status,perplexity_float", 0), 0u) << csv;
  const std::string html = read_text(fs::path(s.out) / "report.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("id=\"by-decode_tok_s\""), std::string::npos);
  EXPECT_NE(html.find("href=\"#by-perplexity_ratio\""), std::string::npos);
  EXPECT_EQ(std::count(html.begin(), html.end(), '<') - std::count(html.begin(), html.end(), '>'), 0);
  size_t charts = 0;
  for (size_t at = html.find("<svg xmlns"); at != std::string::npos; at = html.find("<svg xmlns", at + 1)) ++charts;
  EXPECT_EQ(charts, 4u);  // two per model

  // Resumed: nothing to do, the results unchanged.
  const json second = run_genai_json({"sweep", "--matrix", s.matrix, "-a", s.out, "--json"});
  EXPECT_EQ(second["ran"], 0);
  EXPECT_EQ(second["skipped"], 4);
  EXPECT_EQ(s.results(), r1);

  // A cell killed mid-run leaves no result.json: the next run redoes it alone, to the same bytes.
  const std::string name = r1["results"][3]["cell"].get<std::string>();
  fs::remove(fs::path(s.out) / name / "result.json");
  fs::remove_all(fs::path(s.out) / name / "program");
  const json third = run_genai_json({"sweep", "--matrix", s.matrix, "-a", s.out, "--json"});
  EXPECT_EQ(third["ran"], 1);
  const json r3 = s.results();
  EXPECT_EQ(r3["results"][3]["checksums"], r1["results"][3]["checksums"]);
  EXPECT_EQ(r3["results"][3]["metrics"]["perplexity_quantized"], r1["results"][3]["metrics"]["perplexity_quantized"]);
}

TEST(SweepCli, AFailingCellIsRecordedWithItsExitCodeAndMessageAndTheSweepGoesOn) {
  TinySweep s(json::array({{{"name", "plain"}}, {{"name", "badtext"}, {"options", {{"eval_text", "no_such_text.txt"}}}}}));
  json m = json::parse(read_text(s.matrix));
  m["models"] = {"tiny1.gguf"};
  m["soc_models"] = {"SM8650"};
  write_file(s.matrix, m.dump(1));
  const CliResult r = run_genai({"sweep", "--matrix", s.matrix, "-a", s.out, "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json results = s.results();
  ASSERT_EQ(results["results"].size(), 2u);
  EXPECT_EQ(results["failed"], 1);
  EXPECT_EQ(results["results"][0]["status"], "ok");
  const json& bad = results["results"][1];
  EXPECT_EQ(bad["status"], "failed");
  EXPECT_EQ(bad["failed_step"], "compile");
  EXPECT_EQ(bad["exit_code"], 2);
  EXPECT_NE(bad["error"].get<std::string>().find("no_such_text.txt"), std::string::npos) << bad.dump();
  const std::string html = read_text(fs::path(s.out) / "report.html");
  EXPECT_NE(html.find("id=\"failed\""), std::string::npos);
}

}  // namespace
}  // namespace genai::testing
