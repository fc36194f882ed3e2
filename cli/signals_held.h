// While one of these lives, SIGINT, SIGTERM, SIGHUP and SIGQUIT wait: a
// command's outputs (the graph, then its report) are committed together, so
// an interrupt never leaves one without the other. A signal that arrives
// meanwhile is delivered when the last one ends (the process then stops as
// it would have, its outputs complete).
#pragma once

#include <signal.h>

namespace sator::cli {

class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsHeld() { sigprocmask(SIG_SETMASK, &old_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t old_;
};

}  // namespace sator::cli
