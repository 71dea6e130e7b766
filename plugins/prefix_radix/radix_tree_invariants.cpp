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

void RadixTree::check_invariants() const {
  // Locks every outstanding handle implies, and each handle's blocks against its path.
  std::unordered_map<const Node*, uint32_t> expected_locks;
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

  size_t nodes = 0, leaves = 0, locked_nodes_seen = 0;
  uint64_t cached = 0, evictable = 0, locked = 0;
  std::unordered_set<int32_t> seen;
  std::vector<const Node*> stack;
  for (const auto& [ns, root] : roots_) {
    const Node* r = root.get();
    if (r->parent != nullptr || r->ns != ns || !r->tokens.empty() || !r->blocks.empty() ||
        r->lock_ref != 0 || r->in_lru) {
      broken("root of namespace '" + ns + "' is not a bare root");
    }
    if (r->children.empty()) broken("root of namespace '" + ns + "' has no child");
    stack.push_back(r);
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      for (const auto& [key, child] : n->children) {
        const Node* c = child.get();
        const std::string at = "node " + std::to_string(c->id);
        ++nodes;
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
        auto e = expected_locks.find(c);
        const uint32_t want = e == expected_locks.end() ? 0 : e->second;
        if (c->lock_ref != want) {
          broken(at + ": lock_ref " + std::to_string(c->lock_ref) + ", handles imply " +
                 std::to_string(want));
        }
        if (want > 0) ++locked_nodes_seen;
        for (int32_t b : c->blocks) {
          if (!seen.insert(b).second) broken("block " + std::to_string(b) + " cached twice");
          if (held_.count(b) == 0) broken("block " + std::to_string(b) + " missing from held set");
        }
        cached += c->blocks.size();
        (c->lock_ref == 0 ? evictable : locked) += c->blocks.size();
        const bool leaf = c->children.empty() && c->lock_ref == 0;
        if (leaf) {
          ++leaves;
          auto l = lru_.find({c->last_access, c->id});
          if (!c->in_lru || l == lru_.end() || l->second != c) {
            broken(at + ": unlocked leaf not listed in the LRU set under its key");
          }
        } else if (c->in_lru) {
          broken(at + ": listed in the LRU set but locked or not a leaf");
        }
        stack.push_back(c);
      }
    }
  }
  if (locked_nodes_seen != expected_locks.size()) broken("a handle locks a node not in the tree");
  if (nodes != num_nodes_)
    broken("node count " + std::to_string(num_nodes_) + " != " + std::to_string(nodes) + " found");
  if (seen.size() != held_.size()) broken("held set lists blocks no node holds");
  if (cached != num_cached_) {
    broken("num_cached " + std::to_string(num_cached_) + " != " + std::to_string(cached) +
           " found");
  }
  if (evictable != num_evictable_) {
    broken("num_evictable " + std::to_string(num_evictable_) + " != " + std::to_string(evictable) +
           " found");
  }
  if (evictable + locked != num_cached_) broken("evictable + locked != cached");
  if (lru_.size() != leaves) broken("LRU set lists nodes that are not unlocked leaves");
  if (max_cached_ > 0 && num_cached_ > max_cached_) {
    broken(std::to_string(num_cached_) + " cached blocks exceed max_cached_blocks " +
           std::to_string(max_cached_));
  }
}

}  // namespace plinth::prefix_radix
