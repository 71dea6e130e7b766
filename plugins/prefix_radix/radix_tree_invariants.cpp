// prefix_radix — RadixTree::check_invariants: every invariant of the tree recomputed from scratch,
// for the unit and random-operation tests. Kept apart from the operations it checks.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "radix_tree.hpp"

namespace plinth::prefix_radix {

namespace {
[[noreturn]] void broken(const std::string& what) {
  throw std::logic_error("prefix_radix: tree invariant broken: " + what);
}
}  // namespace

// Locks every outstanding handle implies, and each handle's blocks against its path.
RadixTree::LockCounts RadixTree::check_handles() const {
  LockCounts expected_locks;
  for (const auto& [handle, lock] : handles_) {
    std::vector<const Node*> path;
    const Node* n = lock.node;
    for (; n->parent != nullptr; n = n->parent) {
      ++expected_locks[n];
      path.push_back(n);
    }
    auto root = roots_.find(n->ns);
    if (root == roots_.end() || root->second.get() != n) {
      broken("handle " + std::to_string(handle) + " locks a path outside the tree");
    }
    std::vector<int32_t> blocks;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      blocks.insert(blocks.end(), (*it)->blocks.begin(), (*it)->blocks.end());
    }
    if (blocks != lock.blocks) {
      broken("handle " + std::to_string(handle) + " returned blocks its path no longer holds");
    }
  }
  return expected_locks;
}

void RadixTree::check_root(const std::string& ns, const Node* r) const {
  if (r->parent != nullptr || r->ns != ns || !r->tokens.empty() || !r->blocks.empty() ||
      r->lock_ref != 0 || r->in_lru) {
    broken("root of namespace '" + ns + "' is not a bare root");
  }
  if (r->children.empty()) broken("root of namespace '" + ns + "' has no child");
}

// The edge from n to its child c under `key`: links, sizes, key and recency.
void RadixTree::check_edge(const Node* n, const std::vector<int32_t>& key, const Node* c) const {
  const std::string at = "node " + std::to_string(c->id);
  if (c->parent != n) broken(at + ": wrong parent link");
  if (c->blocks.empty()) broken(at + ": empty edge");
  if (c->tokens.size() != c->blocks.size() * block_size_) {
    broken(at + ": " + std::to_string(c->tokens.size()) + " tokens for " +
           std::to_string(c->blocks.size()) + " blocks of " + std::to_string(block_size_));
  }
  if (key.size() != block_size_ || !std::equal(key.begin(), key.end(), c->tokens.begin())) {
    broken(at + ": child key differs from its first block");
  }
  if (n->parent != nullptr && c->last_access > n->last_access) {
    broken(at + ": used more recently than its parent");
  }
}

// Node c's lock count, blocks and LRU listing; adds it to the tally.
void RadixTree::check_node(const Node* c, const LockCounts& expected, Tally& t) const {
  const std::string at = "node " + std::to_string(c->id);
  ++t.nodes;
  auto e = expected.find(c);
  const uint32_t want = e == expected.end() ? 0 : e->second;
  if (c->lock_ref != want) {
    broken(at + ": lock_ref " + std::to_string(c->lock_ref) + ", handles imply " +
           std::to_string(want));
  }
  if (want > 0) ++t.locked_nodes_seen;
  for (int32_t b : c->blocks) {
    if (!t.seen.insert(b).second) broken("block " + std::to_string(b) + " cached twice");
    if (held_.count(b) == 0) broken("block " + std::to_string(b) + " missing from held set");
  }
  t.cached += c->blocks.size();
  (c->lock_ref == 0 ? t.evictable : t.locked) += c->blocks.size();
  const bool leaf = c->children.empty() && c->lock_ref == 0;
  if (leaf) {
    ++t.leaves;
    auto l = lru_.find({c->last_access, c->id});
    if (!c->in_lru || l == lru_.end() || l->second != c) {
      broken(at + ": unlocked leaf not listed in the LRU set under its key");
    }
  } else if (c->in_lru) {
    broken(at + ": listed in the LRU set but locked or not a leaf");
  }
}

// The counters the tree keeps against what the walk found.
void RadixTree::check_totals(const LockCounts& expected, const Tally& t) const {
  if (t.locked_nodes_seen != expected.size()) broken("a handle locks a node not in the tree");
  if (t.nodes != num_nodes_) {
    broken("node count " + std::to_string(num_nodes_) + " != " + std::to_string(t.nodes) +
           " found");
  }
  if (t.seen.size() != held_.size()) broken("held set lists blocks no node holds");
  if (t.cached != num_cached_) {
    broken("num_cached " + std::to_string(num_cached_) + " != " + std::to_string(t.cached) +
           " found");
  }
  if (t.evictable != num_evictable_) {
    broken("num_evictable " + std::to_string(num_evictable_) +
           " != " + std::to_string(t.evictable) + " found");
  }
  if (t.evictable + t.locked != num_cached_) broken("evictable + locked != cached");
  if (lru_.size() != t.leaves) broken("LRU set lists nodes that are not unlocked leaves");
  if (max_cached_ > 0 && num_cached_ > max_cached_) {
    broken(std::to_string(num_cached_) + " cached blocks exceed max_cached_blocks " +
           std::to_string(max_cached_));
  }
}

void RadixTree::check_invariants() const {
  const LockCounts expected = check_handles();
  Tally t;
  std::vector<const Node*> stack;
  for (const auto& [ns, root] : roots_) {
    check_root(ns, root.get());
    stack.push_back(root.get());
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      for (const auto& [key, child] : n->children) {
        check_edge(n, key, child.get());
        check_node(child.get(), expected, t);
        stack.push_back(child.get());
      }
    }
  }
  check_totals(expected, t);
}

}  // namespace plinth::prefix_radix
