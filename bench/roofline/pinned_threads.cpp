#include "pinned_threads.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

namespace plinth::roofline {
namespace {

/// The CPUs this process may run on, in increasing order.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

bool pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace

ParallelRun run_pinned(int n, const std::function<void(int)>& setup,
                       const std::function<void(int)>& work) {
  using clock = std::chrono::steady_clock;
  const std::vector<int> cpus = allowed_cpus();
  const bool can_pin = static_cast<int>(cpus.size()) >= n;
  std::atomic<int> pinned{0};
  std::vector<double> cpu(static_cast<size_t>(n), 0.0);
  clock::time_point t0;
  std::barrier start(n, [&]() noexcept { t0 = clock::now(); });
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      if (can_pin && pin_self(cpus[static_cast<size_t>(i)])) pinned.fetch_add(1);
      setup(i);
      start.arrive_and_wait();
      const double c0 = thread_cpu_seconds();
      work(i);
      cpu[static_cast<size_t>(i)] = thread_cpu_seconds() - c0;
    });
  }
  for (std::thread& t : threads) t.join();
  ParallelRun r;
  r.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  r.pinned = pinned.load() == n;
  for (double c : cpu) r.cpu_seconds = std::max(r.cpu_seconds, c);
  return r;
}

}  // namespace plinth::roofline
