// The QNN EP's provider options for the target that a delegate's compile specs hold: the SoC's
// QcomChipset number, the HTP arch, VTCM, performance mode, precision and weight sharing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/qnn/qnn_bridge.h"
#include "pte/compile_spec.h"

namespace genai::backends::qnn {

struct QnnTarget {
  QnnProviderOptions provider;
  std::string soc;  // the specs' SoC, upstream spelling ("SM8650")
  int arch = 0;     // the specs' HTP arch (75)
  std::string binary_soc;             // the SoC name QNN records in the binary (target::qnn_binary_soc_name)
  bool elementwise_one_type = false;  // target::qnn_elementwise_needs_one_type
};

// InputError naming `what` when the specs hold no QNN entry with HTP options.
QnnTarget qnn_target_from_specs(const std::vector<CompileSpec>& specs, std::string_view what);

}  // namespace genai::backends::qnn
