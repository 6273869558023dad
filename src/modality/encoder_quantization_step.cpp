#include "modality/encoder_quantization_step.h"

#include <chrono>

#include "core/log.h"
#include "quant/encoder_quantization.h"

namespace genai::modality {

EncoderQuantization quantize_encoder(const Modality& modality, const Model& model, const std::vector<std::string>& paths) {
  const auto started = std::chrono::steady_clock::now();
  EncoderCalibration c = modality.calibration(model, paths);
  const quant::Recipe recipe = quant::recipe_from_spelling("16a8w");
  const pipeline::GraphBundle float_bundle = modality.float_bundle(model);
  const auto g = float_bundle.graph();
  const quant::QuantizedEncoder q = quant::quantize_encoder(g, c.samples, recipe, std::move(c.metadata));
  EncoderQuantization r{q.bundle,
                        recipe.name,
                        static_cast<int64_t>(c.samples.size()),
                        quant::qdq_output_sqnr_db(g, q.encodings, c.samples, c.output),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                        std::move(c.source)};
  log::info("{} encoder: {} on {} {} ({}), {} SQNR {:.1f} dB, {:.1f} s", modality.name(), r.recipe, r.samples,
            modality.sample_unit(), r.source, c.output, r.sqnr_db, r.seconds);
  return r;
}

}  // namespace genai::modality
