// prefix_radix — the radix tree of SGLang's RadixAttention (Zheng et al., 2024, §3): cached KV
// blocks keyed by the token ids they hold, shared between prompts with a common prefix,
// match_prefix / insert / evict with lock references up to the root and LRU eviction of unlocked
// leaves. A pure data structure: it talks to the KV cache only through BlockRefs (one reference
// per cached block), so tests run it without a plugin.
//
// Granularity: whole blocks. Every node's edge holds k >= 1 blocks: k * block_size token ids and
// the k block ids that hold their KV. Children are keyed by the token ids of their first block
// (exact compare, never a hash). A match or insert that ends inside an edge, at a block boundary,
// splits the node there, so a node is always either wholly covered by an operation or not at all.
//
// Namespaces: one root per namespace string (exact byte compare). Different namespaces never share
// a block. The plugin builds the namespace from its config salt and the key's salt.
//
// Locks: match locks every node from the matched node up to (not including) the root until
// release(handle). A locked node is never evicted; since a lock covers a whole root path, every
// unlocked node is reachable by trimming unlocked leaves, so evict(n) evicts exactly
// min(n, num_evictable_blocks()) blocks.
//
// Recency: a logical clock (one tick per match or insert), not wall time. Every node an operation
// covers gets that tick, so a parent's tick is >= each child's, and the LRU order of leaves is the
// LRU order of blocks. Ties cannot happen between leaves; (tick, node id) orders them anyway.
//
// Errors: std::invalid_argument for bad input (state unchanged); whatever BlockRefs throws
// propagates (state unchanged: refs are taken before and dropped before the tree changes).
// Thread rules: none; one thread at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace plinth::prefix_radix {

/// The KV cache as the tree sees it: one reference per cached block. Implementations throw on
/// failure and then change nothing.
class BlockRefs {
 public:
  virtual ~BlockRefs() = default;
  /// Adds one reference to each block (blocks a sequence holds, so they are in use).
  virtual void ref(std::span<const int32_t> blocks) = 0;
  /// Drops one reference from each block; a block reaching 0 returns to the pool.
  virtual void unref(std::span<const int32_t> blocks) = 0;
};

/// What match returns. `blocks` points into storage the tree owns, valid until release(handle)
/// (or the tree's destruction); empty with handle 0 when nothing matched.
struct TreeMatch {
  uint32_t num_tokens = 0;          // matched tokens, num_blocks * block_size
  std::span<const int32_t> blocks;  // [num_blocks] block ids, logical order
  uint64_t handle = 0;              // pass to release; 0 = nothing locked
};

/// Cumulative counters and sizes.
struct TreeStats {
  uint64_t num_queried_tokens = 0;    // sum of tokens.size() over match calls
  uint64_t num_hit_tokens = 0;        // of those, matched
  uint32_t num_cached_blocks = 0;     // blocks the tree holds a reference on now
  uint32_t num_evictable_blocks = 0;  // of those, in nodes no match holds locked
  uint64_t num_evicted_blocks = 0;    // total evicted since construction
  uint64_t num_inserted_blocks = 0;   // total newly cached since construction
};

class RadixTree {
 public:
  /// `block_size` tokens per block (>= 1; std::invalid_argument otherwise). `refs` must outlive
  /// the tree. `max_cached_blocks` > 0 caps the blocks held: insert evicts LRU unlocked leaves
  /// (never the path it extends) and caches only what fits; 0 = no cap (the pool is the cap).
  RadixTree(uint32_t block_size, BlockRefs& refs, uint32_t max_cached_blocks = 0);
  /// Drops the reference on every cached block (outstanding handles die with the tree). A
  /// BlockRefs failure here is swallowed: a destructor cannot report it.
  ~RadixTree();
  RadixTree(const RadixTree&) = delete;
  RadixTree& operator=(const RadixTree&) = delete;

  uint32_t block_size() const { return block_size_; }

  /// The longest cached prefix of `tokens` in namespace `ns`, in whole blocks. Locks it (every
  /// node from the matched one up to the root) until release(handle) and marks it used now.
  /// Handles are unique for the tree's life. Splits the last node when the match ends inside it.
  TreeMatch match(std::span<const int32_t> tokens, std::string_view ns);

  /// Unlocks a match. Unknown handle (or 0, or one released already): no-op.
  void release(uint64_t handle);

  /// Caches the first floor(tokens.size() / block_size) blocks of a sequence whose KV lives in
  /// `blocks` (blocks.size() >= that count, std::invalid_argument otherwise; blocks past it are
  /// ignored). The prefix the tree holds already keeps the tree's blocks (the caller's are not
  /// taken); each block of the new suffix gains one reference. A new block the tree holds already
  /// anywhere, or listed twice, is refused with std::invalid_argument (nothing changed). Marks the
  /// covered path used now. Returns the number of blocks newly cached (fewer than the suffix
  /// when max_cached_blocks leaves no room).
  uint32_t insert(std::span<const int32_t> tokens, std::string_view ns,
                  std::span<const int32_t> blocks);

  /// Evicts up to `num_blocks` blocks from the tails of the least recently used unlocked leaves,
  /// dropping the tree's reference on each; emptied nodes are removed (their parent may become
  /// a leaf). Returns how many were evicted: exactly min(num_blocks, num_evictable_blocks()).
  uint32_t evict(uint32_t num_blocks);

  TreeStats stats() const;
  uint32_t num_cached_blocks() const { return num_cached_; }
  uint32_t num_evictable_blocks() const { return num_evictable_; }
  size_t num_handles() const { return handles_.size(); }
  /// Nodes below the roots (for tests).
  size_t num_nodes() const { return num_nodes_; }
  /// Every cached block id, in no particular order (for tests).
  std::vector<int32_t> cached_blocks() const;

  /// Recomputes every invariant from scratch and throws std::logic_error naming the first one
  /// broken: each node's lock_ref equals the number of handles whose path passes through it;
  /// evictable + locked == cached blocks; every edge holds k >= 1 blocks and k * block_size
  /// tokens; child keys equal their child's first block; parent links; no block id twice and the
  /// set matches the counters; every root has a child; a parent's tick >= its children's; the
  /// LRU set holds exactly the unlocked leaves under their current key; every handle's blocks
  /// equal its path's. O(nodes + handle path lengths); for tests.
  void check_invariants() const;

 private:
  // Lexicographic order over token ids, for a vector key and a span probe alike (no copy on find).
  struct TokensLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  struct Node {
    uint64_t id = 0;
    Node* parent = nullptr;       // nullptr for a root
    std::vector<int32_t> tokens;  // [k * block_size]
    std::vector<int32_t> blocks;  // [k]
    // Keyed by the child's first block of tokens; exact compare.
    std::map<std::vector<int32_t>, std::unique_ptr<Node>, TokensLess> children;
    std::string ns;  // a root's namespace (empty below the roots)
    uint32_t lock_ref = 0;
    uint64_t last_access = 0;
    bool in_lru = false;                    // listed in lru_ under lru_key
    std::pair<uint64_t, uint64_t> lru_key;  // (last_access, id) when listed
  };
  struct Lock {
    Node* node;                   // deepest node of the locked path
    std::vector<int32_t> blocks;  // the path's blocks, root first
  };
  // Where a walk from a root stops: the deepest node the tokens cover wholly, then possibly a
  // child of it they cover only partly (its first split_at blocks); num_blocks counts both.
  struct Walk {
    Node* node = nullptr;
    uint32_t num_blocks = 0;
    Node* partial = nullptr;
    uint32_t split_at = 0;
  };

  Walk walk(Node* root, std::span<const int32_t> tokens) const;
  std::span<const int32_t> first_block(std::span<const int32_t> tokens) const {
    return tokens.first(block_size_);
  }
  Node* root_for(std::string_view ns);
  Node* split(Node* node, uint32_t at);
  void touch_path(Node* node, uint64_t tick);
  void lock_path(Node* node);
  void unlock_path(Node* node);
  void update_lru(Node* node);
  void remove_node(Node* node);  // node still holds its tokens; frees it
  void destroy_all() noexcept;
  // check_invariants()'s parts (radix_tree_invariants.cpp); each throws std::logic_error naming
  // the broken invariant. What the walk over the nodes counts, for the totals' checks:
  struct Tally {
    size_t nodes = 0, leaves = 0, locked_nodes_seen = 0;
    uint64_t cached = 0, evictable = 0, locked = 0;
    std::unordered_set<int32_t> seen;  // blocks found in nodes
  };
  using LockCounts = std::unordered_map<const Node*, uint32_t>;
  LockCounts check_handles() const;  // the lock_ref every node should have
  void check_root(const std::string& ns, const Node* r) const;
  void check_edge(const Node* n, const std::vector<int32_t>& key, const Node* c) const;
  void check_node(const Node* c, const LockCounts& expected, Tally& t) const;
  void check_totals(const LockCounts& expected, const Tally& t) const;

  uint32_t block_size_;
  BlockRefs& refs_;
  uint32_t max_cached_;
  std::map<std::string, std::unique_ptr<Node>, std::less<>> roots_;
  std::map<std::pair<uint64_t, uint64_t>, Node*> lru_;  // (last_access, id) -> unlocked leaf
  std::unordered_map<uint64_t, Lock> handles_;
  std::unordered_set<int32_t> held_;  // every cached block id
  uint64_t clock_ = 0;
  uint64_t next_node_id_ = 1;
  uint64_t next_handle_ = 1;
  uint32_t num_cached_ = 0;
  uint32_t num_evictable_ = 0;
  size_t num_nodes_ = 0;  // below the roots
  TreeStats counters_;    // the cumulative fields
};

}  // namespace plinth::prefix_radix
