// The sampler lives in core (core/sampler.h) so that layers below llm (quant's calibration) can
// draw from it too; this header keeps the old include path working for the commands.
#pragma once

#include "core/sampler.h"
