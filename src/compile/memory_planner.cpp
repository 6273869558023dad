#include "compile/memory_planner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

#include "core/error.h"

namespace genai::compile {
namespace {

uint64_t align_up(uint64_t value, uint64_t alignment) {
  const uint64_t rem = value % alignment;
  if (rem == 0) return value;
  if (value > std::numeric_limits<uint64_t>::max() - (alignment - rem)) {
    throw_failure("memory plan: buffer size {} overflows when aligned to {}", value, alignment);
  }
  return value + (alignment - rem);
}

bool lifetimes_intersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

enum class Fit { kFirst, kBest };

// Places buffers in `order`: each goes into a gap between already placed buffers whose lifetime
// intersects its own (first fit: lowest offset; best fit: the smallest gap that holds it, the
// end of the arena when none does).
MemoryPlan place_in_order(const std::vector<BufferRequest>& requests, const std::vector<size_t>& order,
                          uint64_t alignment, Fit fit) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> placed;
  placed.reserve(requests.size());
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of conflicting placed buffers
  for (size_t index : order) {
    const BufferRequest& req = requests[index];
    if (req.size == 0) continue;  // occupies nothing; offset 0
    const uint64_t size = align_up(req.size, alignment);
    busy.clear();
    for (size_t other : placed) {
      if (lifetimes_intersect(req, requests[other])) {
        busy.emplace_back(plan.offsets[other], plan.offsets[other] + align_up(requests[other].size, alignment));
      }
    }
    std::sort(busy.begin(), busy.end());
    uint64_t cursor = 0;  // end of the busy region scanned so far (always aligned)
    uint64_t chosen = std::numeric_limits<uint64_t>::max();
    uint64_t chosen_gap = std::numeric_limits<uint64_t>::max();
    for (const auto& [begin, end] : busy) {
      if (begin > cursor && begin - cursor >= size) {
        const uint64_t gap = begin - cursor;
        if (fit == Fit::kFirst) {
          chosen = cursor;
          break;
        }
        if (gap < chosen_gap) {
          chosen_gap = gap;
          chosen = cursor;
        }
      }
      cursor = std::max(cursor, end);
    }
    if (chosen == std::numeric_limits<uint64_t>::max()) chosen = cursor;
    plan.offsets[index] = chosen;
    plan.total_bytes = std::max(plan.total_bytes, chosen + size);
    placed.push_back(index);
  }
  return plan;
}

// Largest total (unaligned) size of the buffers alive at one op index.
uint64_t live_lower_bound(const std::vector<BufferRequest>& requests) {
  // Sweep over lifetime boundaries: +size at first, -size after last.
  std::map<int64_t, int64_t> delta;
  for (const BufferRequest& req : requests) {
    if (req.size == 0) continue;
    delta[req.first] += static_cast<int64_t>(req.size);
    delta[req.last + 1] -= static_cast<int64_t>(req.size);
  }
  int64_t live = 0, best = 0;
  for (const auto& [op, change] : delta) {
    live += change;
    best = std::max(best, live);
  }
  return static_cast<uint64_t>(best);
}

// Order by size, largest first (ties: earlier definition, then request index).
std::vector<size_t> order_by_size(const std::vector<BufferRequest>& requests) {
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    return requests[a].first < requests[b].first;
  });
  return order;
}

// Order by breadth: visit ops from the one with the most live bytes down; at each, the buffers
// alive there that are not placed yet, largest first.
std::vector<size_t> order_by_breadth(const std::vector<BufferRequest>& requests) {
  std::vector<size_t> order;
  order.reserve(requests.size());
  if (requests.empty()) return order;
  int64_t lo = requests[0].first, hi = requests[0].last;
  for (const BufferRequest& r : requests) {
    lo = std::min(lo, r.first);
    hi = std::max(hi, r.last);
  }
  const size_t n_ops = static_cast<size_t>(hi - lo + 1);
  std::vector<uint64_t> breadth(n_ops, 0);  // live bytes per op
  std::vector<std::vector<size_t>> live_at(n_ops);
  for (size_t i = 0; i < requests.size(); ++i) {
    for (int64_t op = requests[i].first; op <= requests[i].last; ++op) {
      breadth[static_cast<size_t>(op - lo)] += requests[i].size;
      live_at[static_cast<size_t>(op - lo)].push_back(i);
    }
  }
  std::vector<size_t> ops(n_ops);
  std::iota(ops.begin(), ops.end(), size_t{0});
  std::stable_sort(ops.begin(), ops.end(), [&](size_t a, size_t b) { return breadth[a] > breadth[b]; });
  std::vector<char> taken(requests.size(), 0);
  for (size_t op : ops) {
    std::vector<size_t>& here = live_at[op];
    std::stable_sort(here.begin(), here.end(),
                     [&](size_t a, size_t b) { return requests[a].size > requests[b].size; });
    for (size_t i : here) {
      if (!taken[i]) {
        taken[i] = 1;
        order.push_back(i);
      }
    }
  }
  return order;  // every request is alive at its own `first`, so all are taken
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment) {
  if (alignment == 0) throw_failure("memory plan: alignment must be positive");
  double lifetime_ops = 0;  // the breadth order's work: one step per (buffer, op alive)
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& req = requests[i];
    if (req.first < -1 || req.last < req.first) {
      throw_failure("memory plan: buffer {} has an invalid lifetime [{}, {}]", i, req.first, req.last);
    }
    lifetime_ops += static_cast<double>(req.last - req.first + 1);
    lo = i == 0 ? req.first : std::min(lo, req.first);
    hi = i == 0 ? req.last : std::max(hi, req.last);
  }
  const uint64_t lower_bound = live_lower_bound(requests);

  std::vector<std::vector<size_t>> orders{order_by_size(requests)};
  // Breadth ordering walks every op of every lifetime; skip it for pathological spans.
  if (lifetime_ops < 5e7 && static_cast<double>(hi) - static_cast<double>(lo) < 5e7) {
    orders.push_back(order_by_breadth(requests));
  }
  MemoryPlan best;
  bool have = false;
  for (const auto& order : orders) {
    for (Fit fit : {Fit::kFirst, Fit::kBest}) {
      MemoryPlan plan = place_in_order(requests, order, alignment, fit);
      if (!have || plan.total_bytes < best.total_bytes) {
        best = std::move(plan);
        have = true;
      }
    }
  }
  best.offsets.resize(requests.size(), 0);
  best.lower_bound_bytes = lower_bound;
  return best;
}

}  // namespace genai::compile
