#include "orchestrator/encoder_quantization_step.h"

#include "core/log.h"
#include "quant/encoder_quantization.h"

namespace genai::orchestrator {

EncoderQuantization quantize_encoder_bundle(const pipeline::GraphBundle& float_bundle,
                                            const std::vector<graph::TensorMap>& samples, pipeline::Metadata metadata,
                                            const std::string& output, std::string source,
                                            std::chrono::steady_clock::time_point started, std::string_view label,
                                            std::string_view unit) {
  const quant::Recipe recipe = quant::recipe_from_spelling("16a8w");
  const auto g = float_bundle.graph();
  const quant::QuantizedEncoder q = quant::quantize_encoder(g, samples, recipe, std::move(metadata));
  EncoderQuantization r{q.bundle,
                        recipe.name,
                        static_cast<int64_t>(samples.size()),
                        quant::qdq_output_sqnr_db(g, q.encodings, samples, output),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                        std::move(source)};
  log::info("{}: {} on {} {} ({}), {} SQNR {:.1f} dB, {:.1f} s", label, r.recipe, r.samples, unit, r.source, output,
            r.sqnr_db, r.seconds);
  return r;
}

}  // namespace genai::orchestrator
