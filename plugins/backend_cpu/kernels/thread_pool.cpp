#include "thread_pool.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PLINTH_CPU_RELAX() _mm_pause()
#else
#define PLINTH_CPU_RELAX() std::this_thread::yield()
#endif

namespace plinth::cpu {
namespace {
thread_local bool t_inside_task = false;
// ~50 µs of spinning: covers the gap between matmuls of one decode step, short enough not to
// steal a core from other processes for long.
constexpr int kSpinIterations = 20000;
constexpr int64_t kChunksPerParticipant = 8;

// claim_ = generation << 32 | chunk count << 16 | next chunk. The chunk count travels in the same
// word as the generation, so a participant can never hold one job's generation with another
// job's count (the race a separate count had: see AlternatingJobSizesNeverRunAChunkTwice).
constexpr int64_t kMaxChunks = 0xffff;

uint32_t gen_of(uint64_t claim) {
  return static_cast<uint32_t>(claim >> 32);
}
int64_t chunks_of(uint64_t claim) {
  return static_cast<int64_t>((claim >> 16) & 0xffffu);
}
int64_t next_of(uint64_t claim) {
  return static_cast<int64_t>(claim & 0xffffu);
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) {
    throw std::invalid_argument("ThreadPool: threads=" + std::to_string(threads) + " must be >= 1");
  }
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks(uint32_t gen) {
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (gen_of(c) != gen) return;
    const int64_t idx = next_of(c);
    const int64_t chunks = chunks_of(c);
    if (idx >= chunks) return;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
    // Claimed chunk idx of job `gen`: the job cannot end before we report it done.
    const int64_t begin = n_ * idx / chunks;
    const int64_t end = n_ * (idx + 1) / chunks;
    if (begin < end) {
      t_inside_task = true;
      try {
        (*fn_)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
      t_inside_task = false;
    }
    done_chunks_.fetch_add(1, std::memory_order_acq_rel);
    c = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker_loop() {
  uint32_t seen = 0;
  for (;;) {
    uint32_t gen = gen_of(claim_.load(std::memory_order_acquire));
    for (int spin = 0; gen == seen && spin < kSpinIterations && !stop_.load(); ++spin) {
      PLINTH_CPU_RELAX();
      gen = gen_of(claim_.load(std::memory_order_acquire));
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_.load() || gen_of(claim_.load()) != seen; });
      gen = gen_of(claim_.load(std::memory_order_acquire));
    }
    if (stop_.load()) return;
    seen = gen;
    run_chunks(gen);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || t_inside_task || n == 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  const int64_t chunks = std::min({n, kChunksPerParticipant * size(), kMaxChunks});
  fn_ = &fn;
  n_ = n;
  error_ = nullptr;
  done_chunks_.store(0, std::memory_order_release);
  const uint32_t gen = ++generation_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    claim_.store(static_cast<uint64_t>(gen) << 32 | static_cast<uint64_t>(chunks) << 16,
                 std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks(gen);
  for (int spin = 0; done_chunks_.load(std::memory_order_acquire) != chunks; ++spin) {
    if (spin < kSpinIterations) {
      PLINTH_CPU_RELAX();
    } else {
      std::this_thread::yield();  // a worker holding a chunk was descheduled: give it the core
    }
  }
  fn_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace plinth::cpu
