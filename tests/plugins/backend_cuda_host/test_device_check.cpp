// check_device: usable devices give "", each failure its message (no device, index out of
// range, compute capability below sm_90).
#include <gtest/gtest.h>

#include <string>

#include "device_check.hpp"

namespace plinth::cuda {
namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(DeviceCheck, UsableDevices) {
  EXPECT_EQ(check_device(1, 0, 9, 0), "");  // H100 / H200
  EXPECT_EQ(check_device(8, 7, 9, 0), "");
  EXPECT_EQ(check_device(2, 1, 10, 0), "");  // Blackwell: the sm_90 PTX is JIT-compiled
  EXPECT_EQ(check_device(1, 0, 12, 0), "");
  EXPECT_EQ(check_device_index(2, 1), "");
}

TEST(DeviceCheck, NoDevice) {
  for (int count : {0, -1}) {
    const std::string m = check_device(count, 0, 0, 0);
    EXPECT_TRUE(m.starts_with("no CUDA device: ")) << m;
    EXPECT_TRUE(has(m, "backend_cpu")) << m;
    EXPECT_EQ(check_device_index(count, 0), m);
  }
}

TEST(DeviceCheck, IndexOutOfRange) {
  std::string m = check_device(2, 3, 9, 0);
  EXPECT_TRUE(m.starts_with("device 3 requested, 2 present")) << m;
  EXPECT_TRUE(has(m, "\"device\" to 0..1")) << m;
  m = check_device(1, 1, 9, 0);
  EXPECT_TRUE(m.starts_with("device 1 requested, 1 present")) << m;
  EXPECT_TRUE(has(m, "\"device\" to 0 ")) << m;
  EXPECT_TRUE(check_device(4, -1, 9, 0).starts_with("device -1 requested, 4 present")) << m;
  // The index is checked before the compute capability.
  EXPECT_TRUE(check_device(2, 2, 7, 5).starts_with("device 2 requested")) << m;
}

TEST(DeviceCheck, ComputeCapabilityBelow90) {
  const std::string m = check_device(1, 0, 7, 5);
  EXPECT_TRUE(
      m.starts_with("compute capability 7.5 unsupported: backend_cuda is built for sm_90 "
                    "(H100/H200) and needs >= 9.0"))
      << m;
  EXPECT_TRUE(has(m, "device 0")) << m;
  EXPECT_TRUE(check_device(3, 2, 8, 9).starts_with("compute capability 8.9 unsupported"));  // L4
  EXPECT_TRUE(check_device(1, 0, 8, 0).starts_with("compute capability 8.0 unsupported"));  // A100
}

}  // namespace
}  // namespace plinth::cuda
