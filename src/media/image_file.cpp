#include "media/image_file.h"

#include <png.h>
#include <turbojpeg.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace genai::media {
namespace {

// Pillow refuses images past twice its MAX_IMAGE_PIXELS (a decompression bomb); so does this,
// before allocating them.
constexpr int64_t kMaxImagePixels = 2 * 89478485;
constexpr const char* kTooManyPixels = "more pixels than Pillow's decompression-bomb limit (178956970)";
static_assert(kMaxImagePixels == 178956970, "kTooManyPixels names the limit");

bool within_size_limit(int64_t width, int64_t height) {
  return width > 0 && height > 0 && width * height <= kMaxImagePixels;
}

// Pillow's alpha_composite of `rgba` (width * height * 4 bytes) over opaque white, dropped to RGB.
RgbImage composite_over_white(const uint8_t* rgba, int64_t width, int64_t height) {
  // Pillow's ImagingAlphaComposite with an opaque white destination. It takes 4 pixels at a time
  // in SIMD (an 8-bit coefficient: round(a * 255 * 255 / (255 * 255)) = a) and the rest of a row
  // one at a time (7 extra bits); both divide by 255 with ((v >> 8) + v) >> 8.
  const auto div255 = [](uint32_t v) { return ((v >> 8) + v) >> 8; };
  RgbImage out(width, height);
  const int64_t vector_end = width - width % 4;
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* src = rgba + y * width * 4;
    uint8_t* dst = out.row(y);
    for (int64_t x = 0; x < width; ++x) {
      const uint32_t a = src[4 * x + 3];
      for (int c = 0; c < 3; ++c) {
        const uint32_t s = src[4 * x + c];
        uint32_t v;
        if (x < vector_end) {
          v = div255(s * a + 255u * (255u - a) + 128u);
        } else if (a == 0) {
          v = 255;
        } else {
          constexpr uint32_t kBits = 7;
          const uint32_t coef1 = a * 255u * 255u * (1u << kBits) / (255u * 255u);
          const uint32_t coef2 = 255u * (1u << kBits) - coef1;
          v = div255(s * coef1 + 255u * coef2 + (0x80u << kBits)) >> kBits;
        }
        dst[3 * x + c] = static_cast<uint8_t>(v);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// PNG, through libpng's classic interface: its transformations give the samples Pillow keeps
// (16-bit channels to their high byte, palettes and tRNS to RGBA, grey to RGB). libpng reports
// errors by longjmp: decode_png_rows keeps no object with a destructor in its own frame, so the
// jump skips nothing.

struct PngSource {
  const uint8_t* data;
  size_t size, pos;
  char error[200];
};

void png_read_bytes(png_structp png, png_bytep out, png_size_t n) {
  auto* s = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > s->size - s->pos) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, s->data + s->pos, n);
  s->pos += n;
}

void png_fail(png_structp png, png_const_charp message) {
  auto* s = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(s->error, sizeof s->error, "%s", message);
  png_longjmp(png, 1);
}

void png_ignore_warning(png_structp, png_const_charp) {}


struct PngShape {
  png_uint_32 width = 0, height = 0;
  int channels = 0;           // 3 (RGB) or 4 (RGBA) after the transformations
  bool clamp_grey16 = false;  // 16-bit grey without alpha: Pillow's "I;16" clamps to 255
};

// Fills `pixels` (rows of shape.channels bytes per pixel) and `rows`; false with s.error set
// when libpng fails.
bool decode_png_rows(PngSource& s, PngShape& shape, std::vector<uint8_t>& pixels, std::vector<png_bytep>& rows) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, png_fail, png_ignore_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    std::snprintf(s.error, sizeof s.error, "out of memory");
    png_destroy_read_struct(png ? &png : nullptr, nullptr, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &s, png_read_bytes);
  png_read_info(png, info);
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png, info, &shape.width, &shape.height, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  if (!within_size_limit(shape.width, shape.height)) png_error(png, kTooManyPixels);
  const bool trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  shape.clamp_grey16 = bit_depth == 16 && color_type == PNG_COLOR_TYPE_GRAY && !trns;
  if (bit_depth == 16 && !shape.clamp_grey16) png_set_strip_16(png);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (trns) png_set_tRNS_to_alpha(png);
  if (!shape.clamp_grey16 && (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA))
    png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  shape.channels = png_get_channels(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  pixels.resize(row_bytes * shape.height);
  rows.resize(shape.height);
  for (png_uint_32 y = 0; y < shape.height; ++y) rows[y] = pixels.data() + y * row_bytes;
  png_read_image(png, rows.data());
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

RgbImage decode_png(std::span<const uint8_t> bytes, const std::string& origin) {
  PngSource s{bytes.data(), bytes.size(), 0, {}};
  PngShape shape;
  std::vector<uint8_t> pixels;
  std::vector<png_bytep> rows;
  if (!decode_png_rows(s, shape, pixels, rows)) throw_input_error("{}: not a readable PNG image: {}", origin, s.error);
  const int64_t w = shape.width, h = shape.height;
  if (shape.channels == 4) return composite_over_white(pixels.data(), w, h);
  RgbImage out(w, h);
  if (shape.clamp_grey16) {  // big-endian 16-bit grey, clamped to 255 as Pillow's I;16 -> L does
    for (int64_t i = 0; i < w * h; ++i) {
      const int v = (pixels[static_cast<size_t>(2 * i)] << 8) | pixels[static_cast<size_t>(2 * i + 1)];
      const auto g = static_cast<uint8_t>(v > 255 ? 255 : v);
      out.pixels[static_cast<size_t>(3 * i)] = out.pixels[static_cast<size_t>(3 * i + 1)] =
          out.pixels[static_cast<size_t>(3 * i + 2)] = g;
    }
    return out;
  }
  if (shape.channels != 3) throw_input_error("{}: a PNG with {} channels after expansion is not handled", origin, shape.channels);
  out.pixels = std::move(pixels);
  return out;
}

// ---------------------------------------------------------------------------------------------
// JPEG, through TurboJPEG: the accurate integer IDCT and smooth chroma upsampling, Pillow's
// defaults.

struct TjHandle {
  tjhandle h = tjInitDecompress();
  ~TjHandle() {
    if (h) tjDestroy(h);
  }
};

RgbImage decode_jpeg(std::span<const uint8_t> bytes, const std::string& origin) {
  TjHandle tj;
  if (!tj.h) throw_failure("{}: cannot start the JPEG decoder", origin);
  auto* data = const_cast<unsigned char*>(bytes.data());
  const auto size = static_cast<unsigned long>(bytes.size());
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.h, data, size, &w, &h, &subsampling, &colorspace) != 0)
    throw_input_error("{}: not a readable JPEG image: {}", origin, tjGetErrorStr2(tj.h));
  if (!within_size_limit(w, h)) throw_input_error("{}: {}x{}: {}", origin, w, h, kTooManyPixels);
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
    throw_input_error("{}: a CMYK JPEG; only greyscale and colour (YCbCr/RGB) JPEGs are handled", origin);
  RgbImage out(w, h);
  if (tjDecompress2(tj.h, data, size, out.pixels.data(), w, 0, h, TJPF_RGB, 0) != 0) {
    const std::string_view why = tjGetErrorStr2(tj.h);
    // Warnings about stray bytes leave the image intact, as Pillow accepts it; running out of
    // data does not (Pillow: "image file is truncated").
    if (tjGetErrorCode(tj.h) == TJERR_FATAL || why.find("Premature end") != std::string_view::npos)
      throw_input_error("{}: not a readable JPEG image: {}", origin, why);
  }
  return out;
}

}  // namespace

RgbImage decode_image(std::span<const uint8_t> bytes, const std::string& origin) {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPng, 8) == 0) return decode_png(bytes, origin);
  if (bytes.size() >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff) return decode_jpeg(bytes, origin);
  throw_input_error("{}: not an image this reads (PNG or JPEG)", origin);
}

RgbImage read_image(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input_error("{}: cannot be read (no such file, or no permission)", path.string());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw_input_error("{}: read error", path.string());
  return decode_image(bytes, path.string());
}

}  // namespace genai::media
