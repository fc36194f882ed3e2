// Objects a command leaves for the process's exit to free.
//
// Freeing a large graph node by node is work nobody waits for: 0.1 s of a
// 165,000-node run (issue 39's --time-limit 0.5 ran past its bound partly on
// it). Like clang's -disable-free, a command hands its largest results here
// once they are written; the memory goes back with the process. They stay
// reachable from a static, so a leak checker does not count them.
#pragma once

#include <memory>
#include <utility>
#include <vector>

namespace sator::cli {

// Moves `value` into the keep and returns it there.
template <class T>
std::decay_t<T>& keep_until_exit(T&& value) {
  static auto* kept = new std::vector<std::shared_ptr<void>>();
  auto held = std::make_shared<std::decay_t<T>>(std::forward<T>(value));
  kept->push_back(held);
  return *held;
}

}  // namespace sator::cli
