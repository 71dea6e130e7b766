// backend_cuda's batch validation: its own limits (device buffer rows), the ABI 1.0..1.3 struct
// sizes, and that backend_cpu's checks run underneath.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "batch_check.hpp"

namespace plinth::cuda {
namespace {

// Two sequences on blocks of 4 tokens: seq 0 prefills 3 tokens (blocks {2}), seq 1 decodes its
// 6th token (blocks {0, 5}: position 5 is slot 5*4 + 1 = 21).
struct TwoSeqs {
  std::vector<int32_t> tokens{11, 12, 13, 14};
  std::vector<int32_t> positions{0, 1, 2, 5};
  std::vector<int32_t> query_start{0, 3, 4};
  std::vector<int32_t> seq_lens{3, 6};
  std::vector<int32_t> tables{2, -1, 0, 5};
  std::vector<int32_t> slots{8, 9, 10, 21};
  std::vector<int32_t> logits{2, 3};
  plinth_batch b{};
  BatchLimits lim{};
  TwoSeqs() {
    b.struct_size = sizeof b;
    b.num_tokens = 4;
    b.num_seqs = 2;
    b.token_ids = tokens.data();
    b.positions = positions.data();
    b.query_start = query_start.data();
    b.seq_lens = seq_lens.data();
    b.block_tables = tables.data();
    b.max_blocks_per_seq = 2;
    b.block_size = 4;
    b.slot_mapping = slots.data();
    b.num_logits = 2;
    b.logits_indices = logits.data();
    lim.vocab = 100;
    lim.context = 8;
    lim.num_blocks = 6;
    lim.block_size = 4;
    lim.max_num_tokens = 4;
    lim.max_num_seqs = 2;
    lim.logits_rows = 2;
  }
};

std::string error_of(const plinth_batch& b, const BatchLimits& lim) {
  try {
    validate_batch(b, lim);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(BatchCheck, ValidBatchPasses) {
  TwoSeqs s;
  EXPECT_EQ(error_of(s.b, s.lim), "");
}

TEST(BatchCheck, DeviceBufferLimitsNameTheConfigKey) {
  TwoSeqs s;
  s.lim.max_num_tokens = 3;
  std::string e = error_of(s.b, s.lim);
  EXPECT_NE(e.find("batch.num_tokens = 4 exceeds 3"), std::string::npos) << e;
  EXPECT_NE(e.find("max_num_tokens"), std::string::npos) << e;
  s = TwoSeqs();
  s.lim.max_num_seqs = 1;
  e = error_of(s.b, s.lim);
  EXPECT_NE(e.find("batch.num_seqs = 2 exceeds 1"), std::string::npos) << e;
  s = TwoSeqs();
  s.lim.logits_rows = 1;
  e = error_of(s.b, s.lim);
  EXPECT_NE(e.find("batch.num_logits = 2 exceeds 1"), std::string::npos) << e;
}

TEST(BatchCheck, BackendCpuChecksRun) {
  TwoSeqs s;
  s.slots[3] = 22;
  std::string e = error_of(s.b, s.lim);
  EXPECT_NE(e.find("slot_mapping[3] = 22"), std::string::npos) << e;
  EXPECT_NE(e.find("at slot 21"), std::string::npos) << e;
  s = TwoSeqs();
  s.tokens[0] = 100;
  e = error_of(s.b, s.lim);
  EXPECT_NE(e.find("token_ids[0] = 100 is outside [0, vocab=100)"), std::string::npos) << e;
  s = TwoSeqs();
  s.tables[3] = 6;
  EXPECT_NE(error_of(s.b, s.lim).find("block_tables[1][1] = 6"), std::string::npos);
}

TEST(BatchCheck, OlderHostsStructSizes) {
  TwoSeqs s;
  s.b.argmax_only = 1;
  EXPECT_TRUE(wants_argmax_only(s.b));
  s.b.argmax_only = 0;
  EXPECT_FALSE(wants_argmax_only(s.b));
  // An ABI 1.2 host's batch ends before argmax_only: valid, and logits are wanted whatever the
  // bytes past its end hold.
  s.b.argmax_only = 1;
  s.b.struct_size = static_cast<uint32_t>(offsetof(plinth_batch, argmax_only));
  EXPECT_EQ(error_of(s.b, s.lim), "");
  EXPECT_FALSE(wants_argmax_only(s.b));
  s.b.struct_size = 16;
  EXPECT_NE(error_of(s.b, s.lim).find("batch.struct_size = 16 is smaller than"), std::string::npos);
}

}  // namespace
}  // namespace plinth::cuda
