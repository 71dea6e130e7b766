#include "batch_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "../../backend_cpu/batch_check.hpp"

namespace plinth::cuda {
namespace {

// Every field before argmax_only: the batch as ABI 1.0 .. 1.2 define it.
constexpr size_t kMinBatchSize = offsetof(plinth_batch, argmax_only);

void check_count(const char* field, uint64_t value, uint64_t limit, const char* fix) {
  if (value > limit) {
    throw std::invalid_argument(std::string("forward: batch.") + field + " = " +
                                std::to_string(value) + " exceeds " + std::to_string(limit) + " " +
                                fix);
  }
}

}  // namespace

bool wants_argmax_only(const plinth_batch& b) {
  return PLINTH_HAS_FIELD(&b, plinth_batch, argmax_only) && b.argmax_only != 0;
}

void validate_batch(const plinth_batch& b, const BatchLimits& lim) {
  if (b.struct_size < kMinBatchSize) {
    throw std::invalid_argument("forward: batch.struct_size = " + std::to_string(b.struct_size) +
                                " is smaller than " + std::to_string(kMinBatchSize) +
                                " (the ABI 1.0 batch); the host is not a plinth host");
  }
  check_count("num_tokens", b.num_tokens, lim.max_num_tokens,
              "(backend_cuda's max_num_tokens: raise it or lower the scheduler's token budget)");
  check_count("num_seqs", b.num_seqs, lim.max_num_seqs,
              "(backend_cuda's max_num_seqs: raise it or lower the scheduler's max_num_seqs)");
  check_count("num_logits", b.num_logits, lim.logits_rows,
              "(rows of backend_cuda's logits buffer, min(max_num_seqs, max_num_tokens): raise "
              "max_num_seqs)");
  // backend_cpu's check wants the whole current struct; give it a copy with the fields an
  // older host did not send zeroed (they are optional by the ABI's rules).
  plinth_batch full{};
  std::memcpy(&full, &b, std::min<size_t>(b.struct_size, sizeof full));
  full.struct_size = sizeof full;
  cpu::BatchLimits cl;
  cl.vocab = lim.vocab;
  cl.context = lim.context;
  cl.num_blocks = lim.num_blocks;
  cl.block_size = lim.block_size;
  cl.max_batch_tokens = lim.max_num_tokens;
  cpu::validate_batch(full, cl);
}

}  // namespace plinth::cuda
