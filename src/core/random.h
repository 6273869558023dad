// Deterministic random numbers: xoshiro256** 1.0 (Blackman & Vigna), state seeded from one 64-bit
// value by splitmix64 as its authors recommend. Ours rather than <random> because the standard
// distributions differ between library versions, and synthetic models, sampling and tests must
// give the same numbers everywhere.
#pragma once

#include <cstdint>

namespace genai {

uint64_t splitmix64(uint64_t& state);

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed);
  // Raw state (not all zero), for checking against the reference implementation.
  static Xoshiro256 from_state(uint64_t s0, uint64_t s1, uint64_t s2, uint64_t s3);
  uint64_t next();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Approximately standard normal (Irwin-Hall: four 32-bit uniforms, centred, unit variance);
  // no libm calls, so the values are bit-identical on every platform.
  float approx_normal();

 private:
  uint64_t s_[4];
};

}  // namespace genai
