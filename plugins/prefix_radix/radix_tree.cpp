#include "radix_tree.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace plinth::prefix_radix {

RadixTree::RadixTree(uint32_t block_size, BlockRefs& refs, uint32_t max_cached_blocks)
    : block_size_(block_size), refs_(refs), max_cached_(max_cached_blocks) {
  if (block_size == 0) throw std::invalid_argument("prefix_radix: block_size must be >= 1");
}

RadixTree::~RadixTree() {
  destroy_all();
}

RadixTree::Walk RadixTree::walk(Node* root, std::span<const int32_t> tokens) const {
  Walk w;
  w.node = root;
  const size_t bs = block_size_;
  const size_t full = tokens.size() / bs;
  size_t p = 0;  // blocks covered so far
  while (p < full) {
    auto it = w.node->children.find(first_block(tokens.subspan(p * bs)));
    if (it == w.node->children.end()) break;
    Node* c = it->second.get();
    const size_t k = c->blocks.size();
    size_t j = 1;  // the key is the first block, so that one matched
    while (j < k && p + j < full &&
           std::equal(c->tokens.begin() + static_cast<ptrdiff_t>(j * bs),
                      c->tokens.begin() + static_cast<ptrdiff_t>((j + 1) * bs),
                      tokens.begin() + static_cast<ptrdiff_t>((p + j) * bs))) {
      ++j;
    }
    p += j;
    if (j < k) {
      w.partial = c;
      w.split_at = static_cast<uint32_t>(j);
      break;
    }
    w.node = c;
  }
  w.num_blocks = static_cast<uint32_t>(p);
  return w;
}

RadixTree::Node* RadixTree::root_for(std::string_view ns) {
  auto it = roots_.find(ns);
  if (it != roots_.end()) return it->second.get();
  auto root = std::make_unique<Node>();
  root->ns = std::string(ns);
  Node* r = root.get();
  roots_.emplace(std::string(ns), std::move(root));
  return r;
}

RadixTree::Node* RadixTree::split(Node* node, uint32_t at) {
  // The existing object keeps the lower part (and its children, id, LRU entry): handles that
  // point at it or below still lock the whole path, now through the new upper node.
  Node* parent = node->parent;
  auto it = parent->children.find(first_block(node->tokens));
  const auto at_tokens = static_cast<ptrdiff_t>(size_t{at} * block_size_);
  auto upper = std::make_unique<Node>();
  upper->id = next_node_id_++;
  upper->parent = parent;
  upper->tokens.assign(node->tokens.begin(), node->tokens.begin() + at_tokens);
  upper->blocks.assign(node->blocks.begin(), node->blocks.begin() + at);
  upper->lock_ref = node->lock_ref;
  upper->last_access = node->last_access;
  std::vector<int32_t> lower_key(node->tokens.begin() + at_tokens,
                                 node->tokens.begin() + at_tokens + block_size_);
  std::unique_ptr<Node> lower = std::move(it->second);
  lower->tokens.erase(lower->tokens.begin(), lower->tokens.begin() + at_tokens);
  lower->blocks.erase(lower->blocks.begin(), lower->blocks.begin() + at);
  lower->parent = upper.get();
  Node* u = upper.get();
  u->children.emplace(std::move(lower_key), std::move(lower));
  it->second = std::move(upper);  // same key: the upper part starts with the same block
  ++num_nodes_;
  return u;
}

void RadixTree::update_lru(Node* n) {
  const bool eligible = n->parent != nullptr && n->children.empty() && n->lock_ref == 0;
  const std::pair<uint64_t, uint64_t> key{n->last_access, n->id};
  if (n->in_lru && (!eligible || n->lru_key != key)) {
    lru_.erase(n->lru_key);
    n->in_lru = false;
  }
  if (eligible && !n->in_lru) {
    lru_.emplace(key, n);
    n->lru_key = key;
    n->in_lru = true;
  }
}

void RadixTree::touch_path(Node* node, uint64_t tick) {
  for (Node* n = node; n->parent != nullptr; n = n->parent) {
    n->last_access = tick;
    update_lru(n);
  }
}

void RadixTree::lock_path(Node* node) {
  for (Node* n = node; n->parent != nullptr; n = n->parent) {
    if (n->lock_ref++ == 0) num_evictable_ -= static_cast<uint32_t>(n->blocks.size());
    update_lru(n);
  }
}

void RadixTree::unlock_path(Node* node) {
  for (Node* n = node; n->parent != nullptr; n = n->parent) {
    if (--n->lock_ref == 0) num_evictable_ += static_cast<uint32_t>(n->blocks.size());
    update_lru(n);
  }
}

TreeMatch RadixTree::match(std::span<const int32_t> tokens, std::string_view ns) {
  counters_.num_queried_tokens += tokens.size();
  auto r = roots_.find(ns);
  if (r == roots_.end()) return {};
  const Walk w = walk(r->second.get(), tokens);
  if (w.num_blocks == 0) return {};
  Node* node = w.partial != nullptr ? split(w.partial, w.split_at) : w.node;

  std::vector<const Node*> path;
  for (const Node* n = node; n->parent != nullptr; n = n->parent) path.push_back(n);
  Lock lock{node, {}};
  lock.blocks.reserve(w.num_blocks);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    lock.blocks.insert(lock.blocks.end(), (*it)->blocks.begin(), (*it)->blocks.end());
  }
  const uint64_t handle = next_handle_++;
  const Lock& stored = handles_.emplace(handle, std::move(lock)).first->second;
  touch_path(node, ++clock_);
  lock_path(node);
  counters_.num_hit_tokens += uint64_t{w.num_blocks} * block_size_;
  TreeMatch m;
  m.num_tokens = w.num_blocks * block_size_;
  m.blocks = stored.blocks;
  m.handle = handle;
  return m;
}

void RadixTree::release(uint64_t handle) {
  auto it = handles_.find(handle);
  if (it == handles_.end()) return;
  unlock_path(it->second.node);
  handles_.erase(it);
}

uint32_t RadixTree::insert(std::span<const int32_t> tokens, std::string_view ns,
                           std::span<const int32_t> blocks) {
  const size_t full = tokens.size() / block_size_;
  if (full > blocks.size()) {
    throw std::invalid_argument("prefix_radix: insert of " + std::to_string(tokens.size()) +
                                " tokens (" + std::to_string(full) + " full blocks of " +
                                std::to_string(block_size_) + ") needs >= " + std::to_string(full) +
                                " block ids, got " + std::to_string(blocks.size()));
  }
  auto r = roots_.find(ns);
  const Walk w = r != roots_.end() ? walk(r->second.get(), tokens) : Walk{};
  std::span<const int32_t> fresh = blocks.subspan(w.num_blocks, full - w.num_blocks);
  std::unordered_set<int32_t> seen;
  for (int32_t b : fresh) {
    if (b < 0) {
      throw std::invalid_argument("prefix_radix: insert: negative block id " + std::to_string(b));
    }
    if (held_.count(b) != 0) {
      throw std::invalid_argument("prefix_radix: insert: block " + std::to_string(b) +
                                  " is cached already under another prefix (a block holds one "
                                  "prefix's KV; pass the sequence's own block table)");
    }
    if (!seen.insert(b).second) {
      throw std::invalid_argument("prefix_radix: insert: block " + std::to_string(b) +
                                  " is listed twice");
    }
  }

  // Validated: from here on the tree changes.
  const uint64_t tick = ++clock_;
  Node* at = nullptr;  // the node the new suffix hangs from; nullptr = the namespace's root
  if (r != roots_.end()) {
    at = w.partial != nullptr ? split(w.partial, w.split_at) : w.node;
    touch_path(at, tick);
    if (at->parent == nullptr) at = nullptr;  // a root may go away while evicting below
  }
  if (fresh.empty()) return 0;
  if (max_cached_ > 0 && num_cached_ + fresh.size() > max_cached_) {
    if (at != nullptr) lock_path(at);  // never evict the path being extended
    try {
      evict(static_cast<uint32_t>(num_cached_ + fresh.size() - max_cached_));
    } catch (...) {
      if (at != nullptr) unlock_path(at);
      throw;
    }
    if (at != nullptr) unlock_path(at);
    fresh = fresh.first(std::min<size_t>(fresh.size(), max_cached_ - num_cached_));
    if (fresh.empty()) return 0;
  }
  const auto take = static_cast<uint32_t>(fresh.size());
  const auto begin = static_cast<ptrdiff_t>(size_t{w.num_blocks} * block_size_);
  auto node = std::make_unique<Node>();
  node->id = next_node_id_++;
  node->tokens.assign(tokens.begin() + begin,
                      tokens.begin() + begin + static_cast<ptrdiff_t>(take) * block_size_);
  node->blocks.assign(fresh.begin(), fresh.end());
  node->last_access = tick;
  std::vector<int32_t> key(node->tokens.begin(), node->tokens.begin() + block_size_);
  refs_.ref(fresh);  // throws: nothing cached (the split and recency changes are harmless)

  if (at == nullptr) at = root_for(ns);
  node->parent = at;
  Node* n = node.get();
  at->children.emplace(std::move(key), std::move(node));
  ++num_nodes_;
  held_.insert(fresh.begin(), fresh.end());
  num_cached_ += take;
  num_evictable_ += take;
  counters_.num_inserted_blocks += take;
  update_lru(at);
  update_lru(n);
  return take;
}

void RadixTree::remove_node(Node* node) {
  Node* parent = node->parent;
  if (node->in_lru) lru_.erase(node->lru_key);
  node->in_lru = false;
  parent->children.erase(parent->children.find(first_block(node->tokens)));  // frees node
  --num_nodes_;
  if (parent->parent == nullptr) {
    if (parent->children.empty()) roots_.erase(roots_.find(parent->ns));
  } else {
    update_lru(parent);
  }
}

uint32_t RadixTree::evict(uint32_t num_blocks) {
  uint32_t evicted = 0;
  while (evicted < num_blocks && !lru_.empty()) {
    Node* leaf = lru_.begin()->second;
    const size_t k = leaf->blocks.size();
    const size_t t = std::min<size_t>(num_blocks - evicted, k);
    std::span<const int32_t> tail(leaf->blocks.data() + (k - t), t);
    refs_.unref(tail);  // throws: this leaf unchanged
    for (int32_t b : tail) held_.erase(b);
    num_cached_ -= static_cast<uint32_t>(t);
    num_evictable_ -= static_cast<uint32_t>(t);
    counters_.num_evicted_blocks += t;
    evicted += static_cast<uint32_t>(t);
    if (t == k) {
      remove_node(leaf);
    } else {
      leaf->blocks.resize(k - t);
      leaf->tokens.resize((k - t) * block_size_);
    }
  }
  return evicted;
}

TreeStats RadixTree::stats() const {
  TreeStats s = counters_;
  s.num_cached_blocks = num_cached_;
  s.num_evictable_blocks = num_evictable_;
  return s;
}

std::vector<int32_t> RadixTree::cached_blocks() const {
  return std::vector<int32_t>(held_.begin(), held_.end());
}

void RadixTree::destroy_all() noexcept {
  // Iterative: a long conversation cached turn by turn is a chain thousands of nodes deep.
  std::vector<std::unique_ptr<Node>> stack;
  for (auto& [ns, root] : roots_) stack.push_back(std::move(root));
  roots_.clear();
  lru_.clear();
  handles_.clear();
  std::vector<int32_t> blocks;
  try {
    blocks.reserve(num_cached_);
  } catch (...) {
  }
  while (!stack.empty()) {
    std::unique_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    try {
      blocks.insert(blocks.end(), n->blocks.begin(), n->blocks.end());
      for (auto& [key, child] : n->children) stack.push_back(std::move(child));
    } catch (...) {  // out of memory while tearing down: leak rather than crash
    }
  }
  try {
    refs_.unref(blocks);
  } catch (...) {
    for (int32_t b : blocks) {  // give back what can be given back, one by one
      try {
        refs_.unref(std::span<const int32_t>(&b, 1));
      } catch (...) {
      }
    }
  }
  held_.clear();
  num_cached_ = num_evictable_ = 0;
  num_nodes_ = 0;
}

}  // namespace plinth::prefix_radix
