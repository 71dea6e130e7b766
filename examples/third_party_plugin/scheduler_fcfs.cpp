// scheduler_fcfs: a first-come-first-served scheduler written as a third-party plinth plugin.
//
// Every step it continues the running sequences (one decode token each, or the rest of their
// prompt), then admits waiting sequences in arrival order while the sequence and token budgets
// allow, giving each the KV slots it needs through the wired kv_cache. It never preempts: when the
// pool is full, work waits for the next step. (plugins/scheduler_continuous is the full one.)
#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include <plinth/config.hpp>
#include <plinth/plugin.hpp>
#include <plinth/scheduler.hpp>

namespace {

// The manifest's `config` for this plugin; the host validates it (and fills defaults) first.
const char* const kSchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "max_num_seqs": {"type": "integer", "minimum": 1, "maximum": 1024, "default": 16,
                     "description": "sequences running at once"},
    "max_num_batched_tokens": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 512,
                               "description": "tokens computed per step (prefill + decode)"}
  }
})json";

struct Seq {
  plinth_seq_id id;
  uint32_t num_tokens;    // prompt + generated, known to the host
  uint32_t num_computed;  // tokens whose KV is cached
};

class FcfsScheduler {
 public:
  explicit FcfsScheduler(const plinth_create_args& args)
      : host_(args.host, args.instance_name), kv_(args.kv_cache) {
    if (kv_.vtable == nullptr) throw std::invalid_argument("scheduler_fcfs needs a kv_cache");
    // Validated against kSchema by the host, defaults filled in: only read it. ConfigReader
    // refuses what C++ cannot hold (a max_num_batched_tokens past uint32_t), naming the key.
    const plinth::sdk::ConfigReader config("scheduler_fcfs", args.config_json);
    max_num_seqs_ = config.get<uint32_t>("max_num_seqs", 16);
    max_num_batched_tokens_ = config.get<uint32_t>("max_num_batched_tokens", 512);
    host_.info("max_num_seqs " + std::to_string(max_num_seqs_) + ", max_num_batched_tokens " +
               std::to_string(max_num_batched_tokens_));
  }

  void add(const plinth_sched_request& r) {
    if (r.num_prompt_tokens == 0) throw std::invalid_argument("a request needs a prompt token");
    if (find(running_, r.seq) != running_.end() || find(waiting_, r.seq) != waiting_.end()) {
      throw std::invalid_argument("sequence " + std::to_string(r.seq) + " is known already");
    }
    waiting_.push_back({r.seq, r.num_prompt_tokens, 0});
  }

  void abort_seq(plinth_seq_id seq) {
    if (auto it = find(waiting_, seq); it != waiting_.end()) waiting_.erase(it);
    if (auto it = find(running_, seq); it != running_.end()) running_.erase(it);
    kv_.vtable->free_seq(kv_.instance, seq);
  }

  plinth_sched_output schedule(const plinth_sched_step& step) {
    seqs_.clear();
    num_computed_.clear();
    num_new_.clear();
    copies_.clear();
    uint32_t budget = max_num_batched_tokens_;
    for (Seq& s : running_) try_schedule(s, step, budget);
    while (!waiting_.empty() && running_.size() < max_num_seqs_ && budget > 0) {
      Seq s = waiting_.front();
      if (!try_schedule(s, step, budget)) break;  // pool full: keep arrival order, try next step
      waiting_.pop_front();
      running_.push_back(s);
    }
    plinth_sched_output out{};
    out.num_scheduled = static_cast<uint32_t>(seqs_.size());
    out.seqs = seqs_.data();
    out.num_computed = num_computed_.data();
    out.num_new_tokens = num_new_.data();
    out.num_batched_tokens = max_num_batched_tokens_ - budget;
    out.num_copies = static_cast<uint32_t>(copies_.size());
    out.copies = copies_.data();
    return out;
  }

  void update(std::span<const plinth_sched_result> results) {
    for (const plinth_sched_result& r : results) {
      auto it = find(running_, r.seq);
      if (it == running_.end()) continue;
      it->num_tokens = r.num_tokens;
      if (r.num_computed < it->num_computed) {  // rejected draft tokens: give their slots back
        plinth_error err{};
        kv_.vtable->truncate(kv_.instance, r.seq, r.num_computed, &err);
      }
      it->num_computed = r.num_computed;
      if (r.finished != 0) {
        kv_.vtable->free_seq(kv_.instance, r.seq);
        running_.erase(it);
      }
    }
  }

  plinth_sched_stats stats() {
    plinth_sched_stats s{};
    s.num_running = static_cast<uint32_t>(running_.size());
    s.num_waiting = static_cast<uint32_t>(waiting_.size());
    return s;
  }

 private:
  template <class C>
  static typename C::iterator find(C& c, plinth_seq_id id) {
    return std::find_if(c.begin(), c.end(), [id](const Seq& s) { return s.id == id; });
  }

  // Schedules the pending tokens of `s` (up to the budget) if the kv_cache has room for them.
  bool try_schedule(Seq& s, const plinth_sched_step& step, uint32_t& budget) {
    uint32_t pending = s.num_tokens - s.num_computed;
    uint32_t n = std::min(pending, budget);
    if (n == 0) return false;
    uint32_t lookahead = pending == 1 ? step.num_lookahead_tokens : 0;
    plinth_block_copy copy{};
    uint32_t num_copies = 0;
    plinth_error err{};
    err.struct_size = sizeof(err);
    int32_t st = kv_.vtable->allocate(kv_.instance, s.id, s.num_computed + n + lookahead, &copy, 1,
                                      &num_copies, &err);
    if (st == PLINTH_ERR_NO_CAPACITY) return false;
    if (st != PLINTH_OK) throw plinth::sdk::Error(static_cast<plinth_status>(st), err.message);
    if (num_copies > 0) copies_.push_back(copy);
    seqs_.push_back(s.id);
    num_computed_.push_back(s.num_computed);
    num_new_.push_back(n);
    budget -= n;
    return true;
  }

  plinth::sdk::Host host_;
  plinth_kv_cache_ref kv_;
  uint32_t max_num_seqs_ = 0;
  uint32_t max_num_batched_tokens_ = 0;
  std::deque<Seq> waiting_;
  std::vector<Seq> running_;
  // The arrays of the last plinth_sched_output (valid until the next schedule).
  std::vector<plinth_seq_id> seqs_;
  std::vector<uint32_t> num_computed_;
  std::vector<uint32_t> num_new_;
  std::vector<plinth_block_copy> copies_;
};

const plinth_scheduler_vtable kTable = plinth::sdk::scheduler_vtable<FcfsScheduler>();

}  // namespace

PLINTH_PLUGIN("scheduler_fcfs", "0.1.0", PLINTH_KIND_SCHEDULER,
              "first-come-first-served scheduler (third-party example)", kSchema, &kTable)
