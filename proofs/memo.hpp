// Results computed once per process: the claims of several patches (and several claims of one
// patch) rest on the same per-version jobs and explorations, and validate judges them on several
// threads. The key must name everything the result depends on (version, variant, timeout, ...);
// a second caller of a key being computed waits for it instead of computing it again.
#pragma once
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>

namespace kacct::proofs {

template <class V>
class Memo {
 public:
  // The value for `key`, computed by `make` the first time; `fresh` tells the caller whether it
  // was computed by this call (a reused copy reports no solver time of its own).
  V get(const std::string& key, const std::function<V()>& make, bool* fresh = nullptr) {
    std::promise<V> mine;
    std::shared_future<V> f;
    bool first = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = m_.find(key);
      if (it == m_.end()) {
        f = mine.get_future().share();
        m_.emplace(key, f);
        first = true;
      } else {
        f = it->second;
      }
    }
    if (fresh) *fresh = first;
    if (first) {
      try {
        mine.set_value(make());
      } catch (...) { mine.set_exception(std::current_exception()); }
    }
    return f.get();
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_future<V>> m_;
};

}  // namespace kacct::proofs
