// Running a verified plan: one switch per step, pointers from the bases of this call, kernels
// from src/kernels. Float ops of the quantized program dequantize their integer operands into the
// op's scratch region, compute in float32 exactly as the graph interpreter does, and quantize the
// result; the float16 program computes on float tensors and rounds every result to float16.
#include <chrono>
#include <cmath>
#include <cstring>

#include "backends/exec/method_plan.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/float_ops.h"

namespace genai::backends::exec {
namespace {

inline uint8_t* at(std::span<uint8_t* const> bases, const Loc& l) {
  return l.base == 0 ? reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(l.offset)) : bases[l.base] + l.offset;
}

inline kernels::ActType act(fb::ElementType t) {
  return t == fb::ElementType::U8 ? kernels::ActType::kU8 : kernels::ActType::kU16;
}

template <typename F>
void elementwise(const Step& s, const float* a, const float* b, float* y, F f,
                 void (*kernel)(const float*, const float*, int64_t, float*)) {
  const int64_t n = s.out.n;
  switch (s.broadcast) {
    case Broadcast::kSame:
      kernel(a, b, n, y);
      break;
    case Broadcast::kScalarB: {
      const float bv = b[0];
      for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
      break;
    }
    case Broadcast::kScalarA: {
      const float av = a[0];
      for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
      break;
    }
    case Broadcast::kRepeatB:
      for (int64_t o = 0; o < s.outer; ++o) kernel(a + o * s.inner, b, s.inner, y + o * s.inner);
      break;
    case Broadcast::kRepeatA:
      for (int64_t o = 0; o < s.outer; ++o) kernel(a, b + o * s.inner, s.inner, y + o * s.inner);
      break;
    case Broadcast::kGeneral: {
      std::array<int64_t, kMaxRank> idx{};
      int64_t oa = 0, ob = 0;
      const int r = s.rank;
      for (int64_t i = 0; i < n; ++i) {
        y[i] = f(a[oa], b[ob]);
        for (int d = r; d-- > 0;) {
          if (++idx[d] < s.dims[d]) {
            oa += s.stride_a[d];
            ob += s.stride_b[d];
            break;
          }
          oa -= s.stride_a[d] * (s.dims[d] - 1);
          ob -= s.stride_b[d] * (s.dims[d] - 1);
          idx[d] = 0;
        }
      }
      break;
    }
  }
}

void transpose(const Step& s, const uint8_t* src, uint8_t* dst) {
  const int r = s.rank;
  if (r == 0 || s.out.n == 0) return;
  const int64_t inner = s.dims[r - 1], stride = s.stride_a[r - 1];
  const uint64_t es = s.esize;
  const int64_t n_outer = s.out.n / inner;
  std::array<int64_t, kMaxRank> idx{};
  int64_t off = 0;
  for (int64_t o = 0; o < n_outer; ++o) {
    uint8_t* d = dst + static_cast<uint64_t>(o * inner) * es;
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
      if (++idx[dd] < s.dims[dd]) {
        off += s.stride_a[dd];
        break;
      }
      off -= s.stride_a[dd] * (s.dims[dd] - 1);
      idx[dd] = 0;
    }
  }
}

// One table row as float32: plain float32 / float16, or int8 / int16 values times their scale.
void table_row(const Step& s, int64_t row, float* dst) {
  const int64_t w = s.width;
  switch (s.table_format) {
    case fb::DataFormat::Plain:
      if (s.in[0].type == fb::ElementType::F16) {
        const uint16_t* src = static_cast<const uint16_t*>(s.weights) + row * w;
        for (int64_t i = 0; i < w; ++i) dst[i] = f16_to_f32(src[i]);
      } else {
        std::memcpy(dst, static_cast<const float*>(s.weights) + row * w, static_cast<size_t>(w) * sizeof(float));
      }
      break;
    case fb::DataFormat::ScaledInt8:
    case fb::DataFormat::ScaledInt16: {
      const int64_t nb = s.block_size > 0 ? w / s.block_size : 1;
      const float* sc = s.scales + row * nb;
      if (s.table_format == fb::DataFormat::ScaledInt8) {
        const int8_t* src = static_cast<const int8_t*>(s.weights) + row * w;
        for (int64_t i = 0; i < w; ++i) dst[i] = static_cast<float>(src[i]) * sc[s.block_size > 0 ? i / s.block_size : 0];
      } else {
        const int16_t* src = static_cast<const int16_t*>(s.weights) + row * w;
        for (int64_t i = 0; i < w; ++i) dst[i] = static_cast<float>(src[i]) * sc[s.block_size > 0 ? i / s.block_size : 0];
      }
      break;
    }
    default:
      break;
  }
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
  // Quantizes (or rounds to float16) result elements [e0, e1).
  void finish(int64_t e0, int64_t e1) const {
    if (s.quantized)
      kernels::quantize(y + e0, e1 - e0, s.out.q, act(s.out.type), out + static_cast<uint64_t>(e0) * element_size(s.out.type));
    else
      kernels::round_to_f16(y + e0, e1 - e0);
  }
};

template <typename F>
void binary_op(const FloatOp& f, F op, void (*kernel)(const float*, const float*, int64_t, float*)) {
  const Step& s = f.s;
  const int64_t n = s.out.n;
  switch (s.broadcast) {
    case Broadcast::kSame:
      split_rows(n, 1, [&](int64_t e0, int64_t e1) {
        kernel(f.operand(0, e0, e1), f.operand(1, e0, e1), e1 - e0, f.y + e0);
        f.finish(e0, e1);
      });
      break;
    case Broadcast::kScalarB: {
      const float bv = *f.operand(1, 0, 1);
      split_rows(n, 1, [&](int64_t e0, int64_t e1) {
        const float* a = f.operand(0, e0, e1);
        for (int64_t i = 0; i < e1 - e0; ++i) f.y[e0 + i] = op(a[i], bv);
        f.finish(e0, e1);
      });
      break;
    }
    case Broadcast::kScalarA: {
      const float av = *f.operand(0, 0, 1);
      split_rows(n, 1, [&](int64_t e0, int64_t e1) {
        const float* b = f.operand(1, e0, e1);
        for (int64_t i = 0; i < e1 - e0; ++i) f.y[e0 + i] = op(av, b[i]);
        f.finish(e0, e1);
      });
      break;
    }
    case Broadcast::kRepeatB:
    case Broadcast::kRepeatA: {
      const bool rep_b = s.broadcast == Broadcast::kRepeatB;
      const float* small = f.operand(rep_b ? 1 : 0, 0, s.inner);
      split_rows(s.outer, s.inner, [&](int64_t o0, int64_t o1) {
        const float* big = f.operand(rep_b ? 0 : 1, o0 * s.inner, o1 * s.inner);
        for (int64_t o = o0; o < o1; ++o) {
          const float* bo = big + (o - o0) * s.inner;
          if (rep_b) kernel(bo, small, s.inner, f.y + o * s.inner);
          else kernel(small, bo, s.inner, f.y + o * s.inner);
        }
        f.finish(o0 * s.inner, o1 * s.inner);
      });
      break;
    }
    case Broadcast::kGeneral:
      elementwise(s, f.operand(0, 0, s.in[0].n), f.operand(1, 0, s.in[1].n), f.y, op, kernel);
      f.finish(0, n);
      break;
  }
}

void run_float_op(const Step& s, std::array<const uint8_t*, 3> in, uint8_t* out, float* scratch) {
  const FloatOp f(s, in, out, scratch);
  switch (s.kind) {
    case StepKind::kRmsNorm: {
      const float* gamma = reinterpret_cast<const float*>(in[1]);
      const int64_t w = s.width;
      split_rows(s.rows, w, [&](int64_t r0, int64_t r1) {
        kernels::rms_norm(f.operand(0, r0 * w, r1 * w), r1 - r0, w, gamma, s.eps, f.y + r0 * w);
        f.finish(r0 * w, r1 * w);
      });
      break;
    }
    case StepKind::kSilu:
    case StepKind::kSoftmax: {
      const int64_t w = s.width;
      split_rows(s.rows, w, [&](int64_t r0, int64_t r1) {
        f.operand0_into_result(r0 * w, r1 * w);
        if (s.kind == StepKind::kSilu) kernels::silu(f.y + r0 * w, (r1 - r0) * w);
        else kernels::softmax(f.y + r0 * w, r1 - r0, w);
        f.finish(r0 * w, r1 * w);
      });
      break;
    }
    case StepKind::kAdd:
      binary_op(f, [](float u, float v) { return u + v; }, &kernels::add);
      break;
    case StepKind::kMul:
      binary_op(f, [](float u, float v) { return u * v; }, &kernels::mul);
      break;
    case StepKind::kRope: {
      const float* c = f.operand(1, 0, s.in[1].n);
      const float* sn = f.operand(2, 0, s.in[2].n);
      const int64_t unit = s.seq * s.head_dim, table = s.seq * s.head_dim;
      // One unit = one head of one batch entry; every head of an entry shares its tables.
      split_rows(s.batch * s.heads, unit, [&](int64_t u0, int64_t u1) {
        const float* x = f.operand(0, u0 * unit, u1 * unit);
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t b = u / s.heads;
          kernels::rope(x + (u - u0) * unit, 1, s.seq, s.head_dim, c + b * table, sn + b * table, f.y + u * unit);
        }
        f.finish(u0 * unit, u1 * unit);
      });
      break;
    }
    default:
      break;
  }
}


// acc[j] += Σ_p a[p]·b[p·stride + j] exactly, in doubles (every product of a code difference
// and a code is an integer below 2^33, every partial sum below 2^53): 32 columns at a time held
// in registers while the rows stream past, as a matmul kernel does.
template <typename T>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=skylake-avx512", "avx2", "default")))
#endif
void accumulate_rows(const double* a, int64_t rows, const T* b, int64_t stride, int64_t cols, double* acc) {
  constexpr int64_t kBlock = 32;
  int64_t j0 = 0;
  for (; j0 + kBlock <= cols; j0 += kBlock) {
    double block[kBlock] = {};
    for (int64_t p = 0; p < rows; ++p) {
      const double av = a[p];
      const T* row = b + p * stride + j0;
      for (int64_t j = 0; j < kBlock; ++j) block[j] += av * static_cast<double>(row[j]);
    }
    for (int64_t j = 0; j < kBlock; ++j) acc[j0 + j] += block[j];
  }
  for (int64_t p = 0; p < rows && j0 < cols; ++p) {
    const double av = a[p];
    const T* row = b + p * stride;
    for (int64_t j = j0; j < cols; ++j) acc[j] += av * static_cast<double>(row[j]);
  }
}

// The attention matmul of one decode row over concat(cache, new) read in place; the arithmetic
// of kernels::matmul_q / the QDQ reference: exact sums, m = (s_a·s_b)/s_y, round half even, clamp.
void matmul_split(const Step& s, std::span<uint8_t* const> bases, const uint8_t* a, uint8_t* y) {
  const Operand &oa = s.in[0], &ob = s.in[1], &oy = s.out;
  const float m = (oa.q.scale * ob.q.scale) / oy.q.scale;
  const float lo = static_cast<float>(oy.q.qmin - oy.q.zero_point), hi = static_cast<float>(oy.q.qmax - oy.q.zero_point);
  const int64_t K = s.K, N = s.N, per_entry = split_work_words(K, N);
  ThreadPool::global().parallel_for(static_cast<int64_t>(s.batches.size()), [&](int64_t begin, int64_t end) {
    for (int64_t bi = begin; bi < end; ++bi) {
      const kernels::MatmulBatch& e = s.batches[static_cast<size_t>(bi)];
      double* av = reinterpret_cast<double*>(s.work.data() + bi * per_entry);
      double* acc = av + K;
      for (int64_t p = 0; p < K; ++p) {
        const int32_t code = oa.type == fb::ElementType::U8 ? a[e.a_offset + p]
                                                             : reinterpret_cast<const uint16_t*>(a)[e.a_offset + p];
        av[p] = static_cast<double>(code - oa.q.zero_point);
      }
      std::fill(acc, acc + N, 0.0);
      const int64_t b_batch = e.b_offset / (K * N);
      for (const Segment& g : s.segments) {
        const uint8_t* base = at(bases, g.loc);
        if (ob.type == fb::ElementType::U8)
          accumulate_rows(av + g.p0, g.rows, base + b_batch * g.per_batch, g.stride, g.cols, acc + g.col0);
        else
          accumulate_rows(av + g.p0, g.rows, reinterpret_cast<const uint16_t*>(base) + b_batch * g.per_batch, g.stride,
                          g.cols, acc + g.col0);
        // Σ a·(b − zb) = Σ a·b − zb·Σ a over this segment's rows (exact integers).
        double seg_sum = 0;
        for (int64_t p = g.p0; p < g.p0 + g.rows; ++p) seg_sum += av[p];
        const double corr = static_cast<double>(ob.q.zero_point) * seg_sum;
        for (int64_t j = 0; j < g.cols; ++j) acc[g.col0 + j] -= corr;
      }
      for (int64_t j = 0; j < N; ++j) {
        const float r = std::nearbyint(static_cast<float>(acc[j]) * m);
        const float c = std::isnan(r) ? 0.0f : std::min(std::max(r, lo), hi);
        const int32_t q = static_cast<int32_t>(c) + oy.q.zero_point;
        if (oy.type == fb::ElementType::U8) y[e.y_offset + j] = static_cast<uint8_t>(q);
        else reinterpret_cast<uint16_t*>(y)[e.y_offset + j] = static_cast<uint16_t>(q);
      }
    }
  });
}

int32_t checked_index(const Step& s, const int32_t* ids, int64_t i) {
  const int32_t id = ids[i];
  if (id < 0 || id >= s.table_rows)
    throw_input_error("input {}: value {} at element {} is outside [0, {})", s.index_name, id, i, s.table_rows);
  return id;
}

void run_step(const Step& s, std::span<uint8_t* const> bases) {
  uint8_t* out = at(bases, s.out.loc);
  const uint8_t* in0 = s.n_in > 0 ? at(bases, s.in[0].loc) : nullptr;
  const uint8_t* in1 = s.n_in > 1 ? at(bases, s.in[1].loc) : nullptr;
  const uint8_t* in2 = s.n_in > 2 ? at(bases, s.in[2].loc) : nullptr;
  float* cursor = reinterpret_cast<float*>(bases[1] + s.scratch);
  switch (s.kind) {
    case StepKind::kNone:
      break;
    case StepKind::kCopy:
      std::memmove(out, in0, s.length);
      break;
    case StepKind::kTranspose:
      transpose(s, in0, out);
      break;
    case StepKind::kConcat: {
      uint64_t at_byte = 0;
      for (size_t k = 0; k < s.sources.size(); ++k) {
        const uint8_t* src = at(bases, s.sources[k]);
        const uint64_t chunk = s.chunks[k];
        for (int64_t o = 0; o < s.outer; ++o)
          std::memmove(out + static_cast<uint64_t>(o) * s.out_row + at_byte, src + static_cast<uint64_t>(o) * chunk, chunk);
        at_byte += chunk;
      }
      break;
    }
    case StepKind::kSlice:
      for (int64_t o = 0; o < s.outer; ++o)
        std::memmove(out + static_cast<uint64_t>(o) * s.length, in0 + static_cast<uint64_t>(o) * s.in_row + s.start,
                     s.length);
      break;
    case StepKind::kGatherRows: {
      const int32_t* ids = reinterpret_cast<const int32_t*>(in1);
      const uint64_t row = static_cast<uint64_t>(s.width) * s.esize;
      for (int64_t i = 0; i < s.in[1].n; ++i)
        std::memcpy(out + static_cast<uint64_t>(i) * row, in0 + static_cast<uint64_t>(checked_index(s, ids, i)) * row, row);
      break;
    }
    case StepKind::kGatherConvert: {
      const int32_t* ids = reinterpret_cast<const int32_t*>(in1);
      for (int64_t i = 0; i < s.in[1].n; ++i) {
        const int32_t id = checked_index(s, ids, i);
        if (s.quantized) {
          table_row(s, id, cursor);
          kernels::quantize(cursor, s.width, s.out.q, act(s.out.type), out + static_cast<uint64_t>(i * s.width) * s.esize);
        } else {
          float* y = reinterpret_cast<float*>(out) + i * s.width;
          table_row(s, id, y);
          kernels::round_to_f16(y, s.width);
        }
      }
      break;
    }
    case StepKind::kLinearPacked:
      kernels::linear_q(in0, act(s.in[0].type), s.rows, s.in[0].q, s.packed, s.bias, s.out.q, act(s.out.type), out);
      break;
      break;
    case StepKind::kLinearF16: {
      float* y = reinterpret_cast<float*>(out);
      kernels::linear_f16(reinterpret_cast<const float*>(in0), s.rows, static_cast<const uint16_t*>(s.weights),
                          s.out_features, s.in_features, s.bias, y);
      kernels::round_to_f16(y, s.out.n);
      break;
    }
    case StepKind::kMatMulQ:
      kernels::matmul_q(in0, act(s.in[0].type), s.in[0].q, in1, act(s.in[1].type), s.in[1].q, s.M, s.K, s.N, s.batches,
                        s.out.q, act(s.out.type), out);
      break;
    case StepKind::kMatMulF: {
      float* y = reinterpret_cast<float*>(out);
      kernels::matmul_f32(reinterpret_cast<const float*>(in0), reinterpret_cast<const float*>(in1), s.M, s.K, s.N,
                          s.batches, y);
      kernels::round_to_f16(y, s.out.n);
      break;
    }
    case StepKind::kMatMulSplit:
      matmul_split(s, bases, in0, out);
      break;
    case StepKind::kRmsNorm:
    case StepKind::kAdd:
    case StepKind::kMul:
    case StepKind::kSilu:
    case StepKind::kSoftmax:
    case StepKind::kRope:
      run_float_op(s, {in0, in1, in2}, out, reinterpret_cast<float*>(bases[1] + s.scratch));
      break;
  }
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

std::string_view step_kind_name(StepKind kind) {
  static constexpr std::string_view kNames[] = {"view", "copy", "transpose", "concat", "slice", "gather_rows",
                                                "gather_convert", "linear_packed", "linear_f16",
                                                "matmul_q", "matmul_f32", "matmul_split", "rms_norm", "add", "mul", "silu", "rope",
                                                "softmax"};
  static_assert(std::size(kNames) == kStepKinds);
  return kNames[static_cast<size_t>(kind)];
}

}  // namespace genai::backends::exec
