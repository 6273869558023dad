#include "media/pil_resample.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.h"

namespace genai::media {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x = x * std::numbers::pi;
  return std::sin(x) / x;
}

double filter_value(Resample f, double x) {
  switch (f) {
    case Resample::kLanczos:
      return (-3.0 <= x && x < 3.0) ? sinc(x) * sinc(x / 3) : 0.0;
    case Resample::kBilinear:
      if (x < 0.0) x = -x;
      return x < 1.0 ? 1.0 - x : 0.0;
    case Resample::kBicubic: {
      constexpr double a = -0.5;
      if (x < 0.0) x = -x;
      if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
      if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
      return 0.0;
    }
  }
  return 0.0;
}

double filter_support(Resample f) {
  switch (f) {
    case Resample::kLanczos: return 3.0;
    case Resample::kBilinear: return 1.0;
    case Resample::kBicubic: return 2.0;
  }
  return 1.0;
}

// Per output position: the first input index, the tap count, and `stride` fixed-point weights.
struct Taps {
  int64_t stride = 0;
  std::vector<int64_t> first, count;
  std::vector<int32_t> weights;
};

Taps compute_taps(int64_t in_size, int64_t out_size, Resample f) {
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double filterscale = std::max(scale, 1.0);
  const double support = filter_support(f) * filterscale;
  Taps t;
  t.stride = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<size_t>(out_size));
  t.count.resize(static_cast<size_t>(out_size));
  t.weights.assign(static_cast<size_t>(out_size * t.stride), 0);
  std::vector<double> w(static_cast<size_t>(t.stride));
  const double ss = 1.0 / filterscale;
  for (int64_t o = 0; o < out_size; ++o) {
    const double center = (static_cast<double>(o) + 0.5) * scale;
    const int64_t xmin = std::max<int64_t>(0, static_cast<int64_t>(center - support + 0.5));
    const int64_t xmax = std::min<int64_t>(in_size, static_cast<int64_t>(center + support + 0.5)) - xmin;
    double total = 0.0;
    for (int64_t x = 0; x < xmax; ++x) {
      w[static_cast<size_t>(x)] = filter_value(f, (static_cast<double>(x + xmin) - center + 0.5) * ss);
      total += w[static_cast<size_t>(x)];
    }
    for (int64_t x = 0; x < xmax; ++x) {
      double v = w[static_cast<size_t>(x)];
      if (total != 0.0) v /= total;
      // Rounded half away from zero, as Pillow's normalize_coeffs_8bpc.
      t.weights[static_cast<size_t>(o * t.stride + x)] =
          static_cast<int32_t>(v < 0 ? -0.5 + v * (1 << kPrecisionBits) : 0.5 + v * (1 << kPrecisionBits));
    }
    t.first[static_cast<size_t>(o)] = xmin;
    t.count[static_cast<size_t>(o)] = xmax;
  }
  return t;
}

uint8_t clip8(int32_t acc) {
  const int32_t v = acc >> kPrecisionBits;  // arithmetic: floor for negative sums
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

RgbImage resize_horizontal(const RgbImage& in, int64_t width, Resample f) {
  const Taps t = compute_taps(in.width, width, f);
  RgbImage out(width, in.height);
  for (int64_t y = 0; y < in.height; ++y) {
    const uint8_t* src = in.row(y);
    uint8_t* dst = out.row(y);
    for (int64_t o = 0; o < width; ++o) {
      const int32_t* k = t.weights.data() + o * t.stride;
      const int64_t x0 = t.first[static_cast<size_t>(o)], n = t.count[static_cast<size_t>(o)];
      for (int c = 0; c < 3; ++c) {
        int32_t acc = 1 << (kPrecisionBits - 1);
        for (int64_t x = 0; x < n; ++x) acc += src[(x0 + x) * 3 + c] * k[x];
        dst[o * 3 + c] = clip8(acc);
      }
    }
  }
  return out;
}

RgbImage resize_vertical(const RgbImage& in, int64_t height, Resample f) {
  const Taps t = compute_taps(in.height, height, f);
  RgbImage out(in.width, height);
  for (int64_t o = 0; o < height; ++o) {
    const int32_t* k = t.weights.data() + o * t.stride;
    const int64_t y0 = t.first[static_cast<size_t>(o)], n = t.count[static_cast<size_t>(o)];
    uint8_t* dst = out.row(o);
    for (int64_t i = 0; i < in.width * 3; ++i) {
      int32_t acc = 1 << (kPrecisionBits - 1);
      for (int64_t y = 0; y < n; ++y) acc += in.row(y0 + y)[i] * k[y];
      dst[i] = clip8(acc);
    }
  }
  return out;
}

}  // namespace

bool resample_from_pillow(int64_t value, Resample& out) {
  if (value < 1 || value > 3) return false;
  out = static_cast<Resample>(value);
  return true;
}

RgbImage resize(const RgbImage& image, int64_t width, int64_t height, Resample filter) {
  if (width <= 0 || height <= 0 || image.width <= 0 || image.height <= 0)
    throw_failure("internal: resizing a {}x{} image to {}x{}", image.width, image.height, width, height);
  if (width == image.width && height == image.height) return image;
  const RgbImage horizontal = width == image.width ? image : resize_horizontal(image, width, filter);
  return height == image.height ? horizontal : resize_vertical(horizontal, height, filter);
}

}  // namespace genai::media
