// The start-up warm-up of backend_cpu: one short prefill and one decode step in KV block 0,
// right after allocate_kv, so that the first request does not pay the first-touch costs.
#pragma once

namespace plinth::cpu {

class LlamaForward;

/// Runs a prefill of P = min(block_size - 1, 8) tokens at positions 0..P-1 and then one decode
/// token at position P, all in KV block 0 (one sequence, block table [0], logits of the last
/// token), through `forward.forward`. What it leaves behind: nothing a request can observe. The
/// K/V it writes sit in block 0's slots, which a sequence given block 0 overwrites before it reads
/// them (attention reads only positions the sequence itself wrote, and a prefix cache only ever
/// shares blocks that a sequence filled). Costs about one short prompt (tens of ms for
/// SmolLM2-135M); it moves the first-touch page faults of the activation scratch, the logits, the
/// kernels' per-thread buffers and the first page of every layer's K/V region, and the first
/// wake-up of the thread pool, from the first request to start-up (the cold TTFT of `plinth
/// generate` is measured in README.md). Does nothing when the KV cache is not allocated or has
/// block_size < 2. Exceptions from forward propagate (the model's forward pass is broken then).
void warm_up(LlamaForward& forward);

}  // namespace plinth::cpu
