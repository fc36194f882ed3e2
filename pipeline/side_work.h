// Work a pipeline step hands to a second thread while it goes on with its
// own, where the graph is large enough to be worth a thread: estimates that
// read only what they are given (the input's peak while the extraction
// runs, the output's shape check while its cost is estimated).
#pragma once

#include <cstddef>
#include <future>
#include <system_error>
#include <type_traits>

namespace sator::pipeline {

// Below this many nodes the work takes milliseconds, less than a thread is
// worth, and a small graph run under an address-space limit (batch
// --graph-memory) starts no thread at all.
constexpr size_t kSideWorkNodes = 20000;

// `work` on a second thread for a graph of `nodes` nodes, else (a small
// graph, or no thread could be started) run where its result is asked for.
// `work` is taken by value: a launch that failed has not consumed it.
template <class Work>
std::future<std::invoke_result_t<Work>> beside(size_t nodes, Work work) {
  if (nodes >= kSideWorkNodes) {
    try {
      return std::async(std::launch::async, work);
    } catch (const std::system_error&) {
      // no thread to be had: in place, below
    }
  }
  return std::async(std::launch::deferred, work);
}

}  // namespace sator::pipeline
