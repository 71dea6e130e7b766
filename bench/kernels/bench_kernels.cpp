// bench_kernels: matmul of the SmolLM2-135M shapes on the four paths — Simd (own int8 kernels),
// Blas (dequantize + OpenBLAS sgemm), Float (f32 activations × weights dequantized in
// registers, batch-invariant) and Int8 (int8 activations × weights packed in panels, the `auto`
// path on CPUs with a vector int8 kernel) — for n = 1, 16, 512 activation rows and 1 and 2
// threads. Prints medians and minimums (on a shared machine the minimum is the undisturbed run),
// the GFLOP/s equivalent (2·n·rows·cols / median), Simd's and Int8's weight bandwidth, the time
// ratios float/simd, float/blas and int8/float (medians, and minimums in parentheses; < 1: the
// first faster), and per path the matmuls of one model step at each n (30 layers + LM head) as ×
// the step at the first n (a verification of n - 1 draft tokens against one decode row).
// Weights rotate through copies totalling ≥ 96 MiB, so n = 1 reads them from memory as a decode
// step does (the model's 30 layers do not fit in the 32 MiB L3) rather than from cache.
//
//   bench_kernels [--n 1,16,512] [--threads 1,2] [--isa avx512|avx2|scalar] [--min-time 0.25]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "matmul_float.hpp"
#include "panel_layout.hpp"

namespace {

using namespace plinth::cpu;

struct Shape {
  const char* name;
  WeightType type;
  int64_t cols;   // in features
  int64_t rows;   // out features
  int per_layer;  // how often one decode step of one layer uses it (LM head: once per token)
};

// SmolLM2-135M: attn q/o 576→576, k/v 576→192, MLP gate/up 576→1536, down 1536→576 (Q4_1);
// tied LM head 576→49152 (Q8_0 token_embd).
const Shape kShapes[] = {
    {"attn_q/o 576->576", WeightType::kQ4_1, 576, 576, 2},
    {"attn_k/v 576->192", WeightType::kQ4_1, 576, 192, 2},
    {"ffn_gate/up 576->1536", WeightType::kQ4_1, 576, 1536, 2},
    {"ffn_down 1536->576", WeightType::kQ4_1, 1536, 576, 1},
    {"lm_head 576->49152", WeightType::kQ8_0, 576, 49152, 0},
};

std::vector<int64_t> parse_list(const char* s) {
  std::vector<int64_t> out;
  for (const char* p = s; *p;) {
    out.push_back(std::strtoll(p, const_cast<char**>(&p), 10));
    if (*p == ',') ++p;
  }
  return out;
}

// Random blocks with f16 scales 2^-10..2^-3 (random bytes could encode inf/NaN).
std::vector<uint8_t> random_weights(const Shape& s, std::mt19937& rng) {
  std::vector<uint8_t> raw(static_cast<size_t>(s.rows * row_bytes(s.type, s.cols)));
  for (auto& b : raw) b = static_cast<uint8_t>(rng());
  const int64_t nblk = s.rows * s.cols / block_elems(s.type);
  for (int64_t b = 0; b < nblk; ++b) {
    uint8_t* p = raw.data() + b * block_bytes(s.type);
    const uint16_t d = static_cast<uint16_t>(((5 + rng() % 8) << 10) | (rng() % 1024));
    std::memcpy(p, &d, 2);
    if (s.type == WeightType::kQ4_1) {
      const uint16_t m = static_cast<uint16_t>(0x8000 | ((5 + rng() % 8) << 10) | (rng() % 1024));
      std::memcpy(p + 2, &m, 2);
    }
  }
  return raw;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double minimum(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

struct Args {
  std::vector<int64_t> ns = {1, 16, 512}, threads = {1, 2};
  double min_time = 0.25;  // seconds of calls per (shape, n, threads, path), at least 3 calls
};

// Reads --n, --threads, --min-time and --isa (which sets the active ISA). Returns false, having
// printed the option, for an unknown one.
bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const std::string v = argv[i + 1];
    if (a == "--n") {
      args.ns = parse_list(v.c_str());
    } else if (a == "--threads") {
      args.threads = parse_list(v.c_str());
    } else if (a == "--min-time") {
      args.min_time = std::atof(v.c_str());
    } else if (a == "--isa") {
      set_active_isa(v == "scalar" ? Isa::kScalar : v == "avx2" ? Isa::kAvx2 : Isa::kAvx512);
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

// One shape's weights in `copies` copies totalling ≥ 96 MiB, and the Float and Int8 paths' panels
// of each (packed once, as backend_cpu does at load).
struct WeightCopies {
  std::vector<uint8_t> proto;
  std::vector<std::vector<uint8_t>> ws, panels, int8_panels;
  size_t copies = 0;
};

WeightCopies make_copies(const Shape& s, std::mt19937& rng) {
  WeightCopies w;
  w.proto = random_weights(s, rng);
  w.copies = std::max<size_t>(1, (96u << 20) / w.proto.size() + 1);
  w.ws.assign(w.copies, w.proto);
  w.panels.resize(w.copies);
  w.int8_panels.resize(w.copies);
  ThreadPool pack_pool(1);
  for (size_t c = 0; c < w.copies; ++c) {
    const WeightView v{s.type, w.ws[c].data(), s.rows, s.cols};
    w.panels[c].resize(static_cast<size_t>(detail::packed_bytes(v)));
    detail::pack_weights(v, w.panels[c].data(), pack_pool);
    w.int8_panels[c].resize(w.panels[c].size());
    detail::pack_weights(v, w.int8_panels[c].data(), pack_pool, detail::PanelOrder::kInt8);
  }
  return w;
}

struct Timing {
  double median = 0, best = 0;  // seconds per call
};

// Times `path` on x (n rows) until min_time has passed (3 calls at least, 2000 at most), each
// call on the next weight copy; the first call, which warms scratch buffers, is not counted.
Timing time_path(const Shape& s, const WeightCopies& w, const std::vector<float>& x, int64_t n,
                 std::vector<float>& y, ThreadPool& pool, MatmulPath path, double min_time) {
  std::vector<double> times;
  double total = 0.0;
  size_t c = 0;
  for (int rep = 0; rep < 3 || (total < min_time && rep < 2000); ++rep) {
    const size_t k = c++ % w.copies;
    const WeightView v{s.type,
                       w.ws[k].data(),
                       s.rows,
                       s.cols,
                       path == MatmulPath::kFloat ? w.panels[k].data() : nullptr,
                       path == MatmulPath::kInt8 ? w.int8_panels[k].data() : nullptr};
    const auto t0 = std::chrono::steady_clock::now();
    matmul(v, x.data(), n, y.data(), pool, path);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) times.push_back(dt);
    total += dt;
  }
  return {median(times), minimum(times)};
}

constexpr int kPaths = 4;
constexpr MatmulPath kPathOrder[kPaths] = {MatmulPath::kSimd, MatmulPath::kBlas, MatmulPath::kFloat,
                                           MatmulPath::kInt8};
constexpr const char* kPathNames[kPaths] = {"simd", "blas", "float", "int8"};

// One table row: the four paths' medians and minimums, Simd's and Int8's weight bandwidth,
// Float's GFLOP/s equivalent and the float/simd, float/blas, int8/float ratios.
void print_row(const Shape& s, size_t weight_bytes, int64_t n, int64_t t,
               const Timing (&tm)[kPaths]) {
  const double flop = 2.0 * double(n) * double(s.rows) * double(s.cols);
  std::printf(
      "%-22s %5s %4lld %3lld | %9.1f %9.1f %6.1f | %9.1f %9.1f | %9.1f %9.1f %7.1f | %9.1f "
      "%9.1f %6.1f | %5.2fx (%5.2fx) %5.2fx (%5.2fx) %5.2fx (%5.2fx)\n",
      s.name, weight_type_name(s.type), static_cast<long long>(n), static_cast<long long>(t),
      tm[0].median * 1e6, tm[0].best * 1e6, double(weight_bytes) / tm[0].median * 1e-9,
      tm[1].median * 1e6, tm[1].best * 1e6, tm[2].median * 1e6, tm[2].best * 1e6,
      flop / tm[2].median * 1e-9, tm[3].median * 1e6, tm[3].best * 1e6,
      double(weight_bytes) / tm[3].median * 1e-9, tm[2].median / tm[0].median,
      tm[2].best / tm[0].best, tm[2].median / tm[1].median, tm[2].best / tm[1].best,
      tm[3].median / tm[2].median, tm[3].best / tm[2].best);
  std::fflush(stdout);
}

// decode[threads][path] = µs of the matmuls of one token (30 layers + LM head) at n = 1.
using DecodeTable = std::map<int64_t, std::map<int, double>>;
// step[threads][path][n] = µs of the matmuls of one model step (30 layers + LM head) over n rows.
using StepTable = std::map<int64_t, std::map<int, std::map<int64_t, double>>>;

// Per thread count and path: each n's step as × the first n's (medians).
void print_steps(const StepTable& steps) {
  for (const auto& [t, paths] : steps) {
    for (const auto& [p, by_n] : paths) {
      std::printf("model step by n, %lld thread(s), %s, median us:", static_cast<long long>(t),
                  kPathNames[p]);
      const double first = by_n.begin()->second;
      for (const auto& [n, us] : by_n) {
        std::printf(" n=%lld %.0f (x%.2f)", static_cast<long long>(n), us, us / first);
      }
      std::printf("\n");
    }
  }
}

void print_decode(const DecodeTable& decode, const DecodeTable& decode_min) {
  for (const auto& [t, us] : decode) {
    const auto& mins = decode_min.at(t);
    std::printf(
        "decode step (n=1, 30 layers + lm_head), %lld thread(s), median (min) us: simd %.0f (%.0f),"
        " blas %.0f (%.0f), float %.0f (%.0f), int8 %.0f (%.0f) -> matmul-only tok/s: simd %.0f,"
        " float %.0f, int8 %.0f (from minimums %.0f, %.0f, %.0f)\n",
        static_cast<long long>(t), us.at(0), mins.at(0), us.at(1), mins.at(1), us.at(2), mins.at(2),
        us.at(3), mins.at(3), 1e6 / us.at(0), 1e6 / us.at(2), 1e6 / us.at(3), 1e6 / mins.at(0),
        1e6 / mins.at(2), 1e6 / mins.at(3));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) return 2;
  std::printf("bench_kernels: isa=%s (best %s), weights rotate over >= 96 MiB\n",
              isa_name(active_isa()), isa_name(best_isa()));
  std::printf(
      "%-22s %5s %4s %3s | %9s %9s %6s | %9s %9s | %9s %9s %7s | %9s %9s %6s | %-15s %-15s %-15s\n",
      "shape", "type", "n", "thr", "simd med", "min us", "GB/s", "blas med", "min us", "float med",
      "min us", "GFLOP/s", "int8 med", "min us", "GB/s", "float/simd", "float/blas", "int8/float");
  std::mt19937 rng(1);
  DecodeTable decode, decode_min;
  StepTable steps;
  for (const Shape& s : kShapes) {
    const WeightCopies w = make_copies(s, rng);
    for (int64_t n : args.ns) {
      std::vector<float> x(static_cast<size_t>(n * s.cols));
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (auto& v : x) v = normal(rng);
      std::vector<float> y(static_cast<size_t>(n * s.rows));
      for (int64_t t : args.threads) {
        ThreadPool pool(static_cast<int>(t));
        Timing tm[kPaths];
        for (int p = 0; p < kPaths; ++p) {
          tm[p] = time_path(s, w, x, n, y, pool, kPathOrder[p], args.min_time);
          const double uses = s.per_layer ? 30.0 * s.per_layer : 1.0;
          steps[t][p][n] += tm[p].median * 1e6 * uses;
          if (n == 1) {
            decode[t][p] += tm[p].median * 1e6 * uses;
            decode_min[t][p] += tm[p].best * 1e6 * uses;
          }
        }
        print_row(s, w.proto.size(), n, t, tm);
      }
    }
  }
  print_decode(decode, decode_min);
  print_steps(steps);
  return 0;
}
