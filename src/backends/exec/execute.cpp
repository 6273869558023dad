// Running a verified plan: one function per step kind (kRunners), pointers from the bases of
// this call, kernels from src/kernels. Float ops of the quantized program dequantize their integer operands into the
// op's scratch region, compute in float32 exactly as the graph interpreter does, and quantize the
// result; the float16 program computes on float tensors and rounds every result to float16.
#include <chrono>
#include <cmath>
#include <cstring>

#include "backends/exec/method_plan.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/broadcast.h"
#include "kernels/float_ops.h"
#include "kernels/quantized_add.h"
#include "kernels/quantized_rope.h"
#include "kernels/quantized_silu.h"
#include "kernels/quantized_softmax.h"

namespace genai::backends::exec {
namespace {

inline uint8_t* at(std::span<uint8_t* const> bases, const Loc& l) {
  return l.base == 0 ? reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(l.offset)) : bases[l.base] + l.offset;
}

inline kernels::ActType act(fb::ElementType t) {
  return t == fb::ElementType::U8 ? kernels::ActType::kU8 : kernels::ActType::kU16;
}


// The bytes one step reads and writes in this call.
struct StepIo {
  uint8_t* out = nullptr;
  std::array<const uint8_t*, 3> in{};
  float* scratch = nullptr;
  std::span<uint8_t* const> bases;
};

void run_copy(const Step& s, const StepIo& io) { std::memmove(io.out, io.in[0], std::get<CopyParams>(s.params).bytes); }

void run_transpose(const Step& s, const StepIo& io) {
  const TransposeParams& t = std::get<TransposeParams>(s.params);
  const int r = t.rank;
  if (r == 0 || s.out.n == 0) return;
  const uint8_t* src = io.in[0];
  const int64_t inner = t.dims[r - 1], stride = t.strides[r - 1];
  const uint64_t es = t.esize;
  const int64_t n_outer = s.out.n / inner;
  std::array<int64_t, kMaxRank> idx{};
  int64_t off = 0;
  for (int64_t o = 0; o < n_outer; ++o) {
    uint8_t* d = io.out + static_cast<uint64_t>(o * inner) * es;
    if (stride == 1) {
      std::memcpy(d, src + static_cast<uint64_t>(off) * es, static_cast<uint64_t>(inner) * es);
    } else if (es == 2) {
      const uint16_t* sp = reinterpret_cast<const uint16_t*>(src) + off;
      uint16_t* dp = reinterpret_cast<uint16_t*>(d);
      for (int64_t j = 0; j < inner; ++j) dp[j] = sp[j * stride];
    } else if (es == 1) {
      for (int64_t j = 0; j < inner; ++j) d[j] = src[off + j * stride];
    } else {
      for (int64_t j = 0; j < inner; ++j) std::memcpy(d + j * es, src + static_cast<uint64_t>(off + j * stride) * es, es);
    }
    for (int dd = r - 1; dd-- > 0;) {
      if (++idx[dd] < t.dims[dd]) {
        off += t.strides[dd];
        break;
      }
      off -= t.strides[dd] * (t.dims[dd] - 1);
      idx[dd] = 0;
    }
  }
}

void run_concat(const Step& s, const StepIo& io) {
  const ConcatParams& p = std::get<ConcatParams>(s.params);
  uint64_t at_byte = 0;
  for (size_t k = 0; k < p.sources.size(); ++k) {
    const uint8_t* src = at(io.bases, p.sources[k]);
    const uint64_t chunk = p.chunks[k];
    for (int64_t o = 0; o < p.outer; ++o)
      std::memmove(io.out + static_cast<uint64_t>(o) * p.out_row + at_byte, src + static_cast<uint64_t>(o) * chunk, chunk);
    at_byte += chunk;
  }
}

void run_slice(const Step& s, const StepIo& io) {
  const SliceParams& p = std::get<SliceParams>(s.params);
  for (int64_t o = 0; o < p.outer; ++o)
    std::memmove(io.out + static_cast<uint64_t>(o) * p.length, io.in[0] + static_cast<uint64_t>(o) * p.in_row + p.start,
                 p.length);
}

int32_t checked_index(const GatherParams& g, const int32_t* ids, int64_t i) {
  const int32_t id = ids[i];
  if (id < 0 || id >= g.table_rows)
    throw_input_error("input {}: value {} at element {} is outside [0, {})", g.index_name, id, i, g.table_rows);
  return id;
}

void run_gather_rows(const Step& s, const StepIo& io) {
  const GatherParams& g = std::get<GatherParams>(s.params);
  const int32_t* ids = reinterpret_cast<const int32_t*>(io.in[1]);
  const uint64_t row = static_cast<uint64_t>(g.width) * g.esize;
  for (int64_t i = 0; i < s.in[1].n; ++i)
    std::memcpy(io.out + static_cast<uint64_t>(i) * row, io.in[0] + static_cast<uint64_t>(checked_index(g, ids, i)) * row, row);
}

// One table row as float32: plain float32 / float16, or int8 / int16 values times their scale
// (the decoder admits no other format for a converting gather).
void table_row(const GatherParams& g, int64_t row, float* dst) {
  const int64_t w = g.width;
  if (g.format == fb::DataFormat::Plain) {
    if (g.table_type == fb::ElementType::F16) {
      const uint16_t* src = static_cast<const uint16_t*>(g.table) + row * w;
      for (int64_t i = 0; i < w; ++i) dst[i] = f16_to_f32(src[i]);
    } else {
      std::memcpy(dst, static_cast<const float*>(g.table) + row * w, static_cast<size_t>(w) * sizeof(float));
    }
    return;
  }
  const int64_t nb = g.block_size > 0 ? w / g.block_size : 1;
  const float* sc = g.scales + row * nb;
  if (g.format == fb::DataFormat::ScaledInt8) {
    const int8_t* src = static_cast<const int8_t*>(g.table) + row * w;
    for (int64_t i = 0; i < w; ++i) dst[i] = static_cast<float>(src[i]) * sc[g.block_size > 0 ? i / g.block_size : 0];
  } else {
    const int16_t* src = static_cast<const int16_t*>(g.table) + row * w;
    for (int64_t i = 0; i < w; ++i) dst[i] = static_cast<float>(src[i]) * sc[g.block_size > 0 ? i / g.block_size : 0];
  }
}

void run_gather_convert(const Step& s, const StepIo& io) {
  const GatherParams& g = std::get<GatherParams>(s.params);
  const int32_t* ids = reinterpret_cast<const int32_t*>(io.in[1]);
  for (int64_t i = 0; i < s.in[1].n; ++i) {
    const int32_t id = checked_index(g, ids, i);
    if (s.quantized) {
      table_row(g, id, io.scratch);
      kernels::quantize(io.scratch, g.width, s.out.q, act(s.out.type), io.out + static_cast<uint64_t>(i * g.width) * g.esize);
    } else {
      float* y = reinterpret_cast<float*>(io.out) + i * g.width;
      table_row(g, id, y);
      kernels::round_to_f16(y, g.width);
    }
  }
}

void run_linear_packed(const Step& s, const StepIo& io) {
  const LinearPackedParams& p = std::get<LinearPackedParams>(s.params);
  kernels::linear_q(io.in[0], act(s.in[0].type), p.rows, s.in[0].q, p.weights, p.bias, s.out.q, act(s.out.type), io.out);
}

void run_linear_f16(const Step& s, const StepIo& io) {
  const LinearF16Params& p = std::get<LinearF16Params>(s.params);
  float* y = reinterpret_cast<float*>(io.out);
  kernels::linear_f16(reinterpret_cast<const float*>(io.in[0]), p.rows, p.weights, p.out_features, p.in_features, p.bias, y);
  kernels::round_to_f16(y, s.out.n);
}

void run_matmul_q(const Step& s, const StepIo& io) {
  const MatMulParams& p = std::get<MatMulParams>(s.params);
  kernels::matmul_q(io.in[0], act(s.in[0].type), s.in[0].q, io.in[1], act(s.in[1].type), s.in[1].q, p.M, p.K, p.N, p.batches,
                    s.out.q, act(s.out.type), io.out);
}

void run_matmul_f(const Step& s, const StepIo& io) {
  const MatMulParams& p = std::get<MatMulParams>(s.params);
  float* y = reinterpret_cast<float*>(io.out);
  kernels::matmul_f32(reinterpret_cast<const float*>(io.in[0]), reinterpret_cast<const float*>(io.in[1]), p.M, p.K, p.N,
                      p.batches, y);
  kernels::round_to_f16(y, s.out.n);
}

void run_matmul_concat(const Step& s, const StepIo& io) {
  const MatMulConcatParams& p = std::get<MatMulConcatParams>(s.params);
  std::array<kernels::MatmulSegment, 2> segments = p.segments;
  segments[0].data = io.in[1];
  segments[1].data = io.in[2];
  kernels::split_matmul_q(io.in[0], act(s.in[0].type), s.in[0].q, segments, act(s.in[1].type), s.in[1].q, p.K, p.N,
                          p.batches, s.out.q, act(s.out.type), io.out, p.work.data());
}

// Float ops split across the pool by rows once they are large (prefill); decode-sized ops run
// inline. Each chunk dequantizes, computes and quantizes its own rows, so results do not depend
// on the split.
constexpr int64_t kParallelElements = 16384;

template <typename Fn>
void split_rows(int64_t rows, int64_t width, const Fn& fn) {
  if (rows < 2 || rows * width < 2 * kParallelElements) {
    fn(int64_t{0}, rows);
    return;
  }
  ThreadPool::global().parallel_for(
      rows, [&](int64_t r0, int64_t r1) { fn(r0, r1); }, std::max<int64_t>(1, kParallelElements / std::max<int64_t>(width, 1)));
}

// The float working set of one float op: each quantized operand has its region of the op's
// scratch (in operand order, as op_scratch_bytes counts them), then the float result (the output
// tensor itself in the float16 program).
struct FloatOp {
  const Step& s;
  std::array<const uint8_t*, 3> src{};
  std::array<float*, 3> region{};
  float* y = nullptr;
  uint8_t* out = nullptr;

  FloatOp(const Step& step, std::array<const uint8_t*, 3> in, uint8_t* o, float* scratch) : s(step), src(in), out(o) {
    for (int i = 0; i < s.n_in; ++i)
      if (s.in[static_cast<size_t>(i)].type == fb::ElementType::U8 || s.in[static_cast<size_t>(i)].type == fb::ElementType::U16) {
        region[static_cast<size_t>(i)] = scratch;
        scratch += s.in[static_cast<size_t>(i)].n;
      }
    y = s.quantized ? scratch : reinterpret_cast<float*>(out);
  }
  // Float values of elements [e0, e1) of operand i (pointer to element e0).
  const float* operand(int i, int64_t e0, int64_t e1) const {
    const Operand& o = s.in[static_cast<size_t>(i)];
    if (o.type == fb::ElementType::F32) return reinterpret_cast<const float*>(src[static_cast<size_t>(i)]) + e0;
    float* r = region[static_cast<size_t>(i)] + e0;
    kernels::dequantize(src[static_cast<size_t>(i)] + static_cast<uint64_t>(e0) * element_size(o.type), act(o.type), e1 - e0, o.q, r);
    return r;
  }
  // Operand 0's elements [e0, e1) as floats in the result buffer (for in-place kernels).
  void operand0_into_result(int64_t e0, int64_t e1) const {
    const Operand& o = s.in[0];
    if (o.type == fb::ElementType::F32)
      std::memmove(y + e0, reinterpret_cast<const float*>(src[0]) + e0, static_cast<size_t>(e1 - e0) * sizeof(float));
    else
      kernels::dequantize(src[0] + static_cast<uint64_t>(e0) * element_size(o.type), act(o.type), e1 - e0, o.q, y + e0);
  }
  // Quantizes (or rounds to float16) result elements [e0, e1); `floor` rounds the codes down, as
  // the HTP rounds normalised results (kernels::requantize_floor).
  void finish(int64_t e0, int64_t e1, bool floor = false) const {
    uint8_t* codes = out + static_cast<uint64_t>(e0) * element_size(s.out.type);
    if (!s.quantized)
      kernels::round_to_f16(y + e0, e1 - e0);
    else if (floor)
      kernels::quantize_floor(y + e0, e1 - e0, s.out.q, act(s.out.type), codes);
    else
      kernels::quantize(y + e0, e1 - e0, s.out.q, act(s.out.type), codes);
  }
};

// Op is a function object (not a pointer), so the per-element loops below inline it.
template <class Op>
void run_general(const FloatOp& f, const BinaryParams& p, Op op) {
  const float* a = f.operand(0, 0, f.s.in[0].n);
  const float* b = f.operand(1, 0, f.s.in[1].n);
  kernels::for_each_broadcast(static_cast<size_t>(p.rank), p.dims.data(), p.stride_a.data(), p.stride_b.data(),
                              [&](int64_t i, int64_t oa, int64_t ob) { f.y[i] = op(a[oa], b[ob]); });
  f.finish(0, f.s.out.n);
}

template <class Op>
void binary_op(const FloatOp& f, Op op, void (*kernel)(const float*, const float*, int64_t, float*)) {
  const BinaryParams& p = std::get<BinaryParams>(f.s.params);
  const int64_t n = f.s.out.n;
  switch (p.broadcast) {
    case Broadcast::kSame:
      split_rows(n, 1, [&](int64_t e0, int64_t e1) {
        kernel(f.operand(0, e0, e1), f.operand(1, e0, e1), e1 - e0, f.y + e0);
        f.finish(e0, e1);
      });
      break;
    case Broadcast::kScalarA:
    case Broadcast::kScalarB: {
      const bool scalar_b = p.broadcast == Broadcast::kScalarB;
      const float sv = *f.operand(scalar_b ? 1 : 0, 0, 1);
      split_rows(n, 1, [&](int64_t e0, int64_t e1) {
        const float* v = f.operand(scalar_b ? 0 : 1, e0, e1);
        float* y = f.y + e0;
        if (scalar_b)
          for (int64_t i = 0; i < e1 - e0; ++i) y[i] = op(v[i], sv);
        else
          for (int64_t i = 0; i < e1 - e0; ++i) y[i] = op(sv, v[i]);
        f.finish(e0, e1);
      });
      break;
    }
    case Broadcast::kRepeatB:
    case Broadcast::kRepeatA: {
      const bool rep_b = p.broadcast == Broadcast::kRepeatB;
      const float* small = f.operand(rep_b ? 1 : 0, 0, p.inner);
      split_rows(p.outer, p.inner, [&](int64_t o0, int64_t o1) {
        const float* big = f.operand(rep_b ? 0 : 1, o0 * p.inner, o1 * p.inner);
        for (int64_t o = o0; o < o1; ++o) {
          const float* bo = big + (o - o0) * p.inner;
          if (rep_b) kernel(bo, small, p.inner, f.y + o * p.inner);
          else kernel(small, bo, p.inner, f.y + o * p.inner);
        }
        f.finish(o0 * p.inner, o1 * p.inner);
      });
      break;
    }
    case Broadcast::kGeneral:
      run_general(f, p, op);
      break;
  }
}

// Add of 16-bit codes in integers, as the HTP adds (kernels/quantized_add.h), in each broadcast
// form of binary_op; element i of the result reads its operands as binary_op does.
void run_add_q(const Step& s, const StepIo& io) {
  const BinaryParams& p = std::get<BinaryParams>(s.params);
  const kernels::HtpAdd h = kernels::htp_add_params(s.in[0].q, s.in[1].q, s.out.q);
  const kernels::ActType at = act(s.in[0].type), bt = act(s.in[1].type), yt = act(s.out.type);
  const auto* a = io.in[0];
  const auto* b = io.in[1];
  const size_t ea = element_size(s.in[0].type), eb = element_size(s.in[1].type), ey = element_size(s.out.type);
  const auto span = [&](int64_t a0, int64_t a_step, int64_t b0, int64_t b_step, int64_t y0, int64_t n) {
    kernels::add_q(a + static_cast<uint64_t>(a0) * ea, at, a_step, b + static_cast<uint64_t>(b0) * eb, bt, b_step, n, h, yt,
                   io.out + static_cast<uint64_t>(y0) * ey);
  };
  const int64_t n = s.out.n;
  switch (p.broadcast) {
    case Broadcast::kSame:
      split_rows(n, 1, [&](int64_t e0, int64_t e1) { span(e0, 1, e0, 1, e0, e1 - e0); });
      break;
    case Broadcast::kScalarA:
      split_rows(n, 1, [&](int64_t e0, int64_t e1) { span(0, 0, e0, 1, e0, e1 - e0); });
      break;
    case Broadcast::kScalarB:
      split_rows(n, 1, [&](int64_t e0, int64_t e1) { span(e0, 1, 0, 0, e0, e1 - e0); });
      break;
    case Broadcast::kRepeatA:
    case Broadcast::kRepeatB: {
      const bool rep_b = p.broadcast == Broadcast::kRepeatB;
      split_rows(p.outer, p.inner, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o)
          span(rep_b ? o * p.inner : 0, 1, rep_b ? 0 : o * p.inner, 1, o * p.inner, p.inner);
      });
      break;
    }
    case Broadcast::kGeneral:
      kernels::for_each_broadcast(static_cast<size_t>(p.rank), p.dims.data(), p.stride_a.data(), p.stride_b.data(),
                                  [&](int64_t i, int64_t oa, int64_t ob) { span(oa, 1, ob, 1, i, 1); });
      break;
  }
}

bool integer_operand(const Operand& o) { return o.type == fb::ElementType::U16 || o.type == fb::ElementType::U8; }

void run_add(const Step& s, const StepIo& io) {
  if (s.quantized && integer_operand(s.in[0]) && integer_operand(s.in[1]) && integer_operand(s.out) &&
      kernels::htp_add_applies(s.in[0].q, s.in[1].q, s.out.q))
    run_add_q(s, io);
  else
    binary_op(FloatOp(s, io.in, io.out, io.scratch), [](float u, float v) { return u + v; }, &kernels::add);
}

void run_mul(const Step& s, const StepIo& io) {
  binary_op(FloatOp(s, io.in, io.out, io.scratch), [](float u, float v) { return u * v; }, &kernels::mul);
}

void run_rms_norm(const Step& s, const StepIo& io) {
  const RowsParams& p = std::get<RowsParams>(s.params);
  const FloatOp f(s, io.in, io.out, io.scratch);
  const float* gamma = reinterpret_cast<const float*>(io.in[1]);
  const int64_t w = p.width;
  split_rows(p.rows, w, [&](int64_t r0, int64_t r1) {
    kernels::rms_norm(f.operand(0, r0 * w, r1 * w), r1 - r0, w, gamma, p.eps, f.y + r0 * w);
    f.finish(r0 * w, r1 * w, /*floor=*/true);
  });
}

void run_layer_norm(const Step& s, const StepIo& io) {
  const RowsParams& p = std::get<RowsParams>(s.params);
  const FloatOp f(s, io.in, io.out, io.scratch);
  const float* gamma = reinterpret_cast<const float*>(io.in[1]);
  const float* beta = reinterpret_cast<const float*>(io.in[2]);
  const int64_t w = p.width;
  split_rows(p.rows, w, [&](int64_t r0, int64_t r1) {
    kernels::layer_norm(f.operand(0, r0 * w, r1 * w), r1 - r0, w, gamma, beta, p.eps, f.y + r0 * w);
    f.finish(r0 * w, r1 * w);
  });
}

// silu / gelu_tanh / tanh / softmax: in place on the float result.
template <StepKind K>
void run_activation(const Step& s, const StepIo& io) {
  const RowsParams& p = std::get<RowsParams>(s.params);
  const FloatOp f(s, io.in, io.out, io.scratch);
  const int64_t w = p.width;
  split_rows(p.rows, w, [&](int64_t r0, int64_t r1) {
    f.operand0_into_result(r0 * w, r1 * w);
    if constexpr (K == StepKind::kSilu) kernels::silu(f.y + r0 * w, (r1 - r0) * w);
    else if constexpr (K == StepKind::kGeluTanh) kernels::gelu_tanh(f.y + r0 * w, (r1 - r0) * w);
    else if constexpr (K == StepKind::kGelu) kernels::gelu(f.y + r0 * w, (r1 - r0) * w);
    else if constexpr (K == StepKind::kTanh) kernels::tanh_inplace(f.y + r0 * w, (r1 - r0) * w);
    else kernels::softmax(f.y + r0 * w, r1 - r0, w);
    f.finish(r0 * w, r1 * w);
  });
}

// silu of 16-bit codes: the sigmoid onto its [0, 1] grid, then the product (kernels/quantized_silu.h);
// any other operand types take the float form.
void run_silu(const Step& s, const StepIo& io) {
  if (!(s.quantized && s.in[0].type == fb::ElementType::U16 && s.out.type == fb::ElementType::U16 &&
        kernels::htp_silu_applies(s.in[0].q, s.out.q))) {
    run_activation<StepKind::kSilu>(s, io);
    return;
  }
  const auto* x = reinterpret_cast<const uint16_t*>(io.in[0]);
  auto* y = reinterpret_cast<uint16_t*>(io.out);
  split_rows(s.out.n, 1, [&](int64_t e0, int64_t e1) { kernels::silu_q(x + e0, e1 - e0, s.in[0].q, s.out.q, y + e0); });
}

// Softmax of 16-bit codes onto probabilities on [0, 1]: the HTP's fixed point on the codes
// (kernels/quantized_softmax.h); any other encoding takes the float form.
void run_softmax(const Step& s, const StepIo& io) {
  if (!(s.quantized && s.in[0].type == fb::ElementType::U16 && s.out.type == fb::ElementType::U16 &&
        kernels::htp_softmax_applies(s.in[0].q, s.out.q))) {
    run_activation<StepKind::kSoftmax>(s, io);
    return;
  }
  const RowsParams& p = std::get<RowsParams>(s.params);
  const auto* x = reinterpret_cast<const uint16_t*>(io.in[0]);
  auto* y = reinterpret_cast<uint16_t*>(io.out);
  const int64_t w = p.width;
  split_rows(p.rows, w,
             [&](int64_t r0, int64_t r1) { kernels::softmax_q(x + r0 * w, r1 - r0, w, s.in[0].q.scale, y + r0 * w); });
}

// Rope of 16-bit codes: the HTP's quantized steps on the codes (kernels/quantized_rope.h); any
// other operand types take the float form.
bool rope_on_codes(const Step& s, const StepIo& io) {
  const bool codes = s.quantized && s.in[0].type == fb::ElementType::U16 && s.in[1].type == fb::ElementType::U16 &&
                     s.in[2].type == fb::ElementType::U16 && s.out.type == fb::ElementType::U16;
  if (!codes || !kernels::htp_rope_applies(s.in[0].q, s.in[1].q, s.in[2].q, s.out.q)) return false;
  const RopeParams& p = std::get<RopeParams>(s.params);
  const kernels::HtpRope h = kernels::htp_rope_params(s.in[0].q, s.in[1].q, s.in[2].q, s.out.q);
  const auto* x = reinterpret_cast<const uint16_t*>(io.in[0]);
  const auto* c = reinterpret_cast<const uint16_t*>(io.in[1]);
  const auto* sn = reinterpret_cast<const uint16_t*>(io.in[2]);
  auto* y = reinterpret_cast<uint16_t*>(io.out);
  const int64_t unit = p.seq * p.head_dim;
  split_rows(p.batch * p.heads, unit, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t b = u / p.heads;
      kernels::rope_q(x + u * unit, c + b * unit, sn + b * unit, p.seq, p.head_dim, h, y + u * unit);
    }
  });
  return true;
}

void run_rope(const Step& s, const StepIo& io) {
  if (rope_on_codes(s, io)) return;
  const RopeParams& p = std::get<RopeParams>(s.params);
  const FloatOp f(s, io.in, io.out, io.scratch);
  const float* c = f.operand(1, 0, s.in[1].n);
  const float* sn = f.operand(2, 0, s.in[2].n);
  const int64_t unit = p.seq * p.head_dim, table = p.seq * p.head_dim;
  // One unit = one head of one batch entry; every head of an entry shares its tables.
  split_rows(p.batch * p.heads, unit, [&](int64_t u0, int64_t u1) {
    const float* x = f.operand(0, u0 * unit, u1 * unit);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t b = u / p.heads;
      kernels::rope(x + (u - u0) * unit, 1, p.seq, p.head_dim, c + b * table, sn + b * table, f.y + u * unit);
    }
    f.finish(u0 * unit, u1 * unit);
  });
}

using StepRunner = void (*)(const Step&, const StepIo&);
struct StepKindInfo {
  std::string_view name;
  StepRunner run;
};
// In StepKind order.
constexpr std::array<StepKindInfo, kStepKinds> kStepKindInfo = {{
    {"copy", &run_copy},
    {"transpose", &run_transpose},
    {"concat", &run_concat},
    {"slice", &run_slice},
    {"gather_rows", &run_gather_rows},
    {"gather_convert", &run_gather_convert},
    {"linear_packed", &run_linear_packed},
    {"linear_f16", &run_linear_f16},
    {"matmul_q", &run_matmul_q},
    {"matmul_f32", &run_matmul_f},
    {"matmul_concat", &run_matmul_concat},
    {"rms_norm", &run_rms_norm},
    {"add", &run_add},
    {"mul", &run_mul},
    {"silu", &run_silu},
    {"gelu_tanh", &run_activation<StepKind::kGeluTanh>},
    {"gelu", &run_activation<StepKind::kGelu>},
    {"tanh", &run_activation<StepKind::kTanh>},
    {"layer_norm", &run_layer_norm},
    {"rope", &run_rope},
    {"softmax", &run_softmax},
}};

void run_step(const Step& s, std::span<uint8_t* const> bases) {
  StepIo io;
  io.out = at(bases, s.out.loc);
  for (int i = 0; i < s.n_in; ++i) io.in[static_cast<size_t>(i)] = at(bases, s.in[static_cast<size_t>(i)].loc);
  io.scratch = reinterpret_cast<float*>(bases[1] + s.scratch);
  io.bases = bases;
  kStepKindInfo[static_cast<size_t>(s.kind)].run(s, io);
}

}  // namespace

void run_method(const MethodPlan& plan, std::span<uint8_t* const> bases) {
  for (const Step& s : plan.steps) run_step(s, bases);
}

void run_method_profiled(const MethodPlan& plan, std::span<uint8_t* const> bases, std::array<double, kStepKinds>& seconds) {
  for (const Step& s : plan.steps) {
    const auto t0 = std::chrono::steady_clock::now();
    run_step(s, bases);
    seconds[static_cast<size_t>(s.kind)] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

std::string_view step_kind_name(StepKind kind) { return kStepKindInfo[static_cast<size_t>(kind)].name; }

}  // namespace genai::backends::exec
