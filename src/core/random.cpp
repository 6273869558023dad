#include "core/random.h"

namespace genai {
namespace {
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Xoshiro256::Xoshiro256(uint64_t seed) {
  for (uint64_t& s : s_) s = splitmix64(seed);
}

Xoshiro256 Xoshiro256::from_state(uint64_t s0, uint64_t s1, uint64_t s2, uint64_t s3) {
  Xoshiro256 r(0);
  r.s_[0] = s0;
  r.s_[1] = s1;
  r.s_[2] = s2;
  r.s_[3] = s3;
  return r;
}

uint64_t Xoshiro256::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Xoshiro256::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

float Xoshiro256::approx_normal() {
  const uint64_t a = next(), b = next();
  constexpr double kInv = 1.0 / 4294967296.0;
  const double sum = static_cast<double>(a & 0xffffffffu) * kInv + static_cast<double>(a >> 32) * kInv +
                     static_cast<double>(b & 0xffffffffu) * kInv + static_cast<double>(b >> 32) * kInv;
  return static_cast<float>((sum - 2.0) * 1.7320508075688772);  // the sum's variance is 4/12
}

}  // namespace genai
