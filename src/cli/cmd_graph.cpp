// `genai graph --checkpoint PATH [--graph kv_forward|prefill_forward|calibration] [--model_mode
// kv|hybrid] [--max_context_len N] [--prefill_ar_len N] [--json]`: prints one static decoder graph
// (one op per line, or JSON) as the builder and the pass pipeline produce it.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "graph/decoder_graphs.h"
#include "graph/text_dump.h"
#include "model/model.h"

namespace genai::cli {
namespace {

struct GraphArgs {
  std::string checkpoint;
  std::string graph = std::string(graph::kKvForward);
  std::string model_mode = "hybrid";
  int64_t max_context_len = 512;
  int64_t prefill_ar_len = 32;
  bool json = false;
};

int run(const GraphArgs& a) {
  graph::DecoderGraphOptions options;
  options.mode = graph::model_mode_from_name(a.model_mode);
  options.max_context_len = a.max_context_len;
  options.prefill_ar_len = a.prefill_ar_len;
  if (a.graph == graph::kCalibration) {
    options.calibration = true;
  } else if (a.graph == graph::kPrefillForward) {
    if (options.mode != graph::ModelMode::kHybrid)
      throw_input_error("--graph {}: exists only with --model_mode hybrid", a.graph);
  } else if (a.graph != graph::kKvForward) {
    throw_input_error("--graph: unknown graph '{}' (valid: kv_forward, prefill_forward, calibration)", a.graph);
  }
  LoadOptions load;
  load.load_tokenizer = false;
  auto model = std::make_shared<const Model>(load_model(a.checkpoint, load));
  const graph::GraphMap graphs = graph::build_decoder_graphs(model, options);
  const graph::Graph& g = *graphs.at(a.graph);
  log::info("{}: graph {} has {} ops ({} mode, context {})", a.checkpoint, a.graph, g.ops().size(), a.model_mode,
            a.max_context_len);
  if (a.json) {
    auto j = graph::dump_graph_json(g);
    j["model_mode"] = a.model_mode;
    j["max_context_len"] = a.max_context_len;
    j["ar_len"] = g.find_input("tokens")->type.shape[1];
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::fputs(graph::dump_graph_text(g).c_str(), stdout);
  }
  return 0;
}

const CommandRegistration kGraph{
    "graph", "Print a static decoder graph (kv_forward, prefill_forward, calibration) of a checkpoint",
    [](CLI::App& sub) -> CommandAction {
      auto a = std::make_shared<GraphArgs>();
      sub.add_option("--checkpoint", a->checkpoint, "Model checkpoint: GGUF file, Hugging Face folder or llama2.c .bin")
          ->required();
      sub.add_option("--graph", a->graph, "Graph to print: kv_forward, prefill_forward or calibration")
          ->capture_default_str();
      sub.add_option("--model_mode,--model-mode", a->model_mode, "kv (kv_forward only) or hybrid (+ prefill_forward)")
          ->capture_default_str();
      sub.add_option("--max_context_len,--max-context-len", a->max_context_len, "Context length CL of the graphs")
          ->capture_default_str();
      sub.add_option("--prefill_ar_len,--prefill-ar-len", a->prefill_ar_len, "Tokens per prefill_forward call (AR-N)")
          ->capture_default_str();
      sub.add_flag("--json", a->json, "Print the graph as one JSON object");
      return [a] { return run(*a); };
    }};

}  // namespace
}  // namespace genai::cli
