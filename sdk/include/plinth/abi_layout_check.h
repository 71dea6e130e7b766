/* plinth plugin ABI — layout pins (LP64: x86-64 / aarch64). The current headers must have exactly
 * the newest released sizes, and every field added in a minor must start where the previous
 * minor's struct ended: a change that breaks one of these breaks every plugin built before it. */
#ifndef PLINTH_ABI_LAYOUT_CHECK_H
#define PLINTH_ABI_LAYOUT_CHECK_H
#include "plinth/plinth.h"

#if defined(__cplusplus)
#define PLINTH_STATIC_ASSERT static_assert
#else
#define PLINTH_STATIC_ASSERT _Static_assert
#endif

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
PLINTH_STATIC_ASSERT(sizeof(plinth_error) == PLINTH_ABI_1_4_SIZEOF_ERROR,
                     "plinth_error layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_plugin_descriptor) == PLINTH_ABI_1_4_SIZEOF_PLUGIN_DESCRIPTOR,
                     "plinth_plugin_descriptor layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_lifecycle) == PLINTH_ABI_1_4_SIZEOF_LIFECYCLE,
                     "plinth_lifecycle layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_vtable_head) == PLINTH_ABI_1_4_SIZEOF_VTABLE_HEAD,
                     "plinth_vtable_head layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_host_api) == PLINTH_ABI_1_4_SIZEOF_HOST_API,
                     "plinth_host_api layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_create_args) == PLINTH_ABI_1_4_SIZEOF_CREATE_ARGS,
                     "plinth_create_args layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_model_desc) == PLINTH_ABI_1_4_SIZEOF_MODEL_DESC,
                     "plinth_model_desc layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_model_config) == PLINTH_ABI_1_4_SIZEOF_MODEL_CONFIG,
                     "plinth_model_config layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_tensor_view) == PLINTH_ABI_1_4_SIZEOF_TENSOR_VIEW,
                     "plinth_tensor_view layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_kv_layout) == PLINTH_ABI_1_4_SIZEOF_KV_LAYOUT,
                     "plinth_kv_layout layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_memory_info) == PLINTH_ABI_1_4_SIZEOF_MEMORY_INFO,
                     "plinth_memory_info layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_batch) == PLINTH_ABI_1_4_SIZEOF_BATCH,
                     "plinth_batch layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_forward_output) == PLINTH_ABI_1_4_SIZEOF_FORWARD_OUTPUT,
                     "plinth_forward_output layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_backend_vtable) == PLINTH_ABI_1_4_SIZEOF_BACKEND_VTABLE,
                     "plinth_backend_vtable layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_kv_info) == PLINTH_ABI_1_4_SIZEOF_KV_INFO,
                     "plinth_kv_info layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_kv_stats) == PLINTH_ABI_1_4_SIZEOF_KV_STATS,
                     "plinth_kv_stats layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_kv_cache_vtable) == PLINTH_ABI_1_4_SIZEOF_KV_CACHE_VTABLE,
                     "plinth_kv_cache_vtable layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_sched_request) == PLINTH_ABI_1_4_SIZEOF_SCHED_REQUEST,
                     "plinth_sched_request layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_sched_step) == PLINTH_ABI_1_4_SIZEOF_SCHED_STEP,
                     "plinth_sched_step layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_sched_output) == PLINTH_ABI_1_4_SIZEOF_SCHED_OUTPUT,
                     "plinth_sched_output layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_sched_result) == PLINTH_ABI_1_4_SIZEOF_SCHED_RESULT,
                     "plinth_sched_result layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_sched_stats) == PLINTH_ABI_1_4_SIZEOF_SCHED_STATS,
                     "plinth_sched_stats layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_scheduler_vtable) == PLINTH_ABI_1_4_SIZEOF_SCHEDULER_VTABLE,
                     "plinth_scheduler_vtable layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_prefix_match) == PLINTH_ABI_1_4_SIZEOF_PREFIX_MATCH,
                     "plinth_prefix_match layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_prefix_stats) == PLINTH_ABI_1_4_SIZEOF_PREFIX_STATS,
                     "plinth_prefix_stats layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_prefix_cache_vtable) ==
                         PLINTH_ABI_1_4_SIZEOF_PREFIX_CACHE_VTABLE,
                     "plinth_prefix_cache_vtable layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_spec_proposal) == PLINTH_ABI_1_4_SIZEOF_SPEC_PROPOSAL,
                     "plinth_spec_proposal layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_spec_stats) == PLINTH_ABI_1_4_SIZEOF_SPEC_STATS,
                     "plinth_spec_stats layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_speculator_vtable) == PLINTH_ABI_1_4_SIZEOF_SPECULATOR_VTABLE,
                     "plinth_speculator_vtable layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_graph_runner_vtable) ==
                         PLINTH_ABI_1_4_SIZEOF_GRAPH_RUNNER_VTABLE,
                     "plinth_graph_runner_vtable layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_seq_view) == PLINTH_ABI_1_4_SIZEOF_SEQ_VIEW,
                     "plinth_seq_view layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_prefix_key) == PLINTH_ABI_1_4_SIZEOF_PREFIX_KEY,
                     "plinth_prefix_key layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_spec_verify) == PLINTH_ABI_1_4_SIZEOF_SPEC_VERIFY,
                     "plinth_spec_verify layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_spec_propose_args) == PLINTH_ABI_1_4_SIZEOF_SPEC_PROPOSE_ARGS,
                     "plinth_spec_propose_args layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_grammar_vocab) == PLINTH_ABI_1_4_SIZEOF_GRAMMAR_VOCAB,
                     "plinth_grammar_vocab layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_grammar_options) == PLINTH_ABI_1_4_SIZEOF_GRAMMAR_OPTIONS,
                     "plinth_grammar_options layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_grammar_stats) == PLINTH_ABI_1_4_SIZEOF_GRAMMAR_STATS,
                     "plinth_grammar_stats layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_grammar_vtable) == PLINTH_ABI_1_4_SIZEOF_GRAMMAR_VTABLE,
                     "plinth_grammar_vtable layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_grammar_token) == PLINTH_ABI_1_4_SIZEOF_GRAMMAR_TOKEN,
                     "plinth_grammar_token layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_arch_desc) == PLINTH_ABI_1_4_SIZEOF_ARCH_DESC,
                     "plinth_arch_desc layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_arch_layer) == PLINTH_ABI_1_4_SIZEOF_ARCH_LAYER,
                     "plinth_arch_layer layout changed");
/* Fields of 1.4 start at the end of 1.3's structs. */
PLINTH_STATIC_ASSERT(offsetof(plinth_model_desc, arch) == PLINTH_ABI_1_3_SIZEOF_MODEL_DESC,
                     "model_desc 1.4");
PLINTH_STATIC_ASSERT(offsetof(plinth_create_args, vocab) == PLINTH_ABI_1_3_SIZEOF_CREATE_ARGS,
                     "create_args 1.4");
/* Fields of 1.3 start at the end of 1.2's struct. */
PLINTH_STATIC_ASSERT(offsetof(plinth_batch, argmax_only) == PLINTH_ABI_1_2_SIZEOF_BATCH,
                     "batch 1.3");
PLINTH_STATIC_ASSERT(offsetof(plinth_forward_output, argmax_ids) ==
                         PLINTH_ABI_1_2_SIZEOF_FORWARD_OUTPUT,
                     "forward_output 1.3");
/* Fields of 1.2 start at the end of 1.1's struct. */
PLINTH_STATIC_ASSERT(offsetof(plinth_spec_proposal, draft_probs) ==
                         PLINTH_ABI_1_1_SIZEOF_SPEC_PROPOSAL,
                     "spec_proposal 1.2");
PLINTH_STATIC_ASSERT(offsetof(plinth_spec_verify, uniforms) == PLINTH_ABI_1_1_SIZEOF_SPEC_VERIFY,
                     "spec_verify 1.2");
PLINTH_STATIC_ASSERT(offsetof(plinth_spec_stats, num_drafts) == PLINTH_ABI_1_1_SIZEOF_SPEC_STATS,
                     "spec_stats 1.2");
PLINTH_STATIC_ASSERT(offsetof(plinth_speculator_vtable, num_lookahead_slots) ==
                         PLINTH_ABI_1_1_SIZEOF_SPECULATOR_VTABLE,
                     "speculator_vtable 1.2");
PLINTH_STATIC_ASSERT(offsetof(plinth_create_args, draft_backend) ==
                         PLINTH_ABI_1_1_SIZEOF_CREATE_ARGS,
                     "create_args 1.2");
/* Fields of 1.1 start at the end of 1.0's struct. */
PLINTH_STATIC_ASSERT(offsetof(plinth_host_api, get_seq) == PLINTH_ABI_1_0_SIZEOF_HOST_API,
                     "host_api 1.1");
PLINTH_STATIC_ASSERT(offsetof(plinth_sched_request, parent) == PLINTH_ABI_1_0_SIZEOF_SCHED_REQUEST,
                     "sched_request 1.1");
PLINTH_STATIC_ASSERT(offsetof(plinth_prefix_stats, num_evicted_blocks) ==
                         PLINTH_ABI_1_0_SIZEOF_PREFIX_STATS,
                     "prefix_stats 1.1");
PLINTH_STATIC_ASSERT(offsetof(plinth_prefix_cache_vtable, match_key) ==
                         PLINTH_ABI_1_0_SIZEOF_PREFIX_CACHE_VTABLE,
                     "prefix table 1.1");
PLINTH_STATIC_ASSERT(offsetof(plinth_plugin_descriptor, vtable) == 48, "descriptor layout changed");
PLINTH_STATIC_ASSERT(offsetof(plinth_vtable_head, lifecycle) == 8, "vtable head layout changed");
#endif

#endif /* PLINTH_ABI_LAYOUT_CHECK_H */
