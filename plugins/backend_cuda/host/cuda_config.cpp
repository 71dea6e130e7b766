#include "cuda_config.hpp"

#include <plinth/config.hpp>

#include <string>

namespace plinth::cuda {

const char* const kCudaConfigSchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "device": {"type": "integer", "minimum": 0, "maximum": 1023, "default": 0,
               "description": "CUDA device ordinal (as nvidia-smi / CUDA_VISIBLE_DEVICES number them)"},
    "memory_fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 0.9,
                        "description": "share of the device's free memory, after the weights (bf16) and the activation buffers, that the KV pool takes"},
    "gemm": {"type": "string", "enum": ["invariant", "fast"], "default": "invariant",
             "description": "invariant (default): own bf16 GEMM with a fixed reduction order (f32 accumulate, no split-K), so greedy ids do not depend on batch size or padding; fast: cuBLAS (bf16 in, f32 accumulate), whose algorithm depends on the shape"},
    "max_num_tokens": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 8192,
                       "description": "rows of the activation buffers: the largest number of new tokens in one forward (prefill chunks included); must be >= max_num_seqs"},
    "max_num_seqs": {"type": "integer", "minimum": 1, "maximum": 65536, "default": 256,
                     "description": "the largest number of sequences in one forward; rows of the logits buffer"}
  }
})json";

CudaConfig parse_cuda_config(const char* json) {
  return json == nullptr ? CudaConfig{} : parse_cuda_config(std::string_view(json));
}

CudaConfig parse_cuda_config(std::string_view text) {
  // Types, ranges, the gemm names and keys are kCudaConfigSchema's, checked by the host before
  // create(); max_num_seqs <= max_num_tokens, which a schema cannot express, is checked here.
  const sdk::ConfigReader config("backend_cuda", text);
  CudaConfig c;
  c.device = config.get<int>("device", c.device);
  c.memory_fraction = config.get<double>("memory_fraction", c.memory_fraction);
  c.invariant_gemm =
      config.get_enum<bool>("gemm", {{"invariant", true}, {"fast", false}}, c.invariant_gemm);
  c.max_num_tokens = config.get<uint32_t>("max_num_tokens", c.max_num_tokens);
  c.max_num_seqs = config.get<uint32_t>("max_num_seqs", c.max_num_seqs);
  if (c.max_num_seqs > c.max_num_tokens) {
    config.fail("max_num_seqs",
                "= " + std::to_string(c.max_num_seqs) +
                    " exceeds max_num_tokens = " + std::to_string(c.max_num_tokens) +
                    " (a decode step of max_num_seqs sequences needs that many "
                    "token rows); raise max_num_tokens or lower max_num_seqs");
  }
  return c;
}

}  // namespace plinth::cuda
