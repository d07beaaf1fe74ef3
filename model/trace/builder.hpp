// Trace builder: turns a small header spec and a vector of abstract actions into a trace that
// always passes validate(). Used by the property tests (RapidCheck shrinks the action vector),
// the fuzzer (actions decoded from bytes) and `kacct gen` (random_trace).
//
// Each action advances time by `dt` ns and then asks for one kind of event on CPU
// `cpu % ncpus`; `arg` chooses among the legal variants (which task to switch to, which read,
// how much steal...). The builder looks at the current Tracker state and emits a legal event,
// a nearby legal event that unblocks the CPU (e.g. irq_exit before a switch), or nothing.
// Because illegal actions are skipped, every sub-vector of actions also builds a valid trace.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "model/trace/trace.hpp"

namespace kacct::trace {

struct BuildSpec {
  std::string cpu_model = "POWER9";
  uint32_t ncpus = 2;      // clamped to 1..4
  uint32_t processes = 2;  // user processes, clamped to 1..4
  uint32_t threads = 1;    // threads per process, clamped to 1..3
  bool kthread = true;     // a plain kthread ("kthreadd", tid 2)
  bool ksoftirqd = true;   // "ksoftirqd/0" (tid 10)
  bool vcpu = true;        // a vcpu task ("qemu-kvm", tid 900); the only task that enters guest mode
  int nice = 0;            // nice of the odd-numbered processes (1, 3); clamped to -20..19
  int vcpu_nice = 0;       // nice of the vcpu task; clamped to -20..19
  // CPU hotplug: an idle action with an odd arg takes its CPU offline (via idle_exit / a switch
  // to idle first); on an offline CPU a tick or idle action brings it back and every other action
  // is dropped. Off by default: existing seeds build the same traces.
  bool hotplug = false;
  bool operator==(const BuildSpec&) const = default;
};

struct Action {
  uint8_t op = 0;    // what to do (op % 32 selects; ~1/4 of the range are ticks)
  uint8_t cpu = 0;   // on which CPU (cpu % ncpus)
  uint16_t arg = 0;  // which variant
  uint32_t dt = 0;   // ns to advance before the action
  bool operator==(const Action&) const = default;
};

// The header the builder declares for a spec (tids: processes 100, 200, ... with threads
// 100+j; kthreadd 2; ksoftirqd/0 10; qemu-kvm 900; forked tasks from 1000 up).
Header build_header(const BuildSpec&);

// Pure and deterministic: the same spec and actions give the same trace, and
// validate(build(...)) never fails.
Trace build(const BuildSpec&, std::span<const Action>);

// Actions drawn from std::mt19937_64(seed) with the builder's intended mix of op and dt
// (dt: 1/4 zero, 1/4 up to 20 us, 1/2 in 0.1 .. 4 ms).
std::vector<Action> random_actions(uint64_t seed, size_t n_actions);
Trace random_trace(uint64_t seed, const BuildSpec&, size_t n_actions);
// The same actions, built one at a time: each event goes to `sink` as soon as it exists, so
// memory does not grow with the trace. Stops after n_events events or max_actions actions;
// returns the number of events. The events are a prefix of random_trace(seed, s, m)'s for
// any m >= the actions drawn.
size_t random_trace_stream(uint64_t seed, const BuildSpec&, size_t n_events, size_t max_actions,
                           const std::function<void(const Event&)>& sink);

// Byte decoders (fuzzer, seed files): a spec from two bytes (bit 0x20 of the second: hotplug), and 8 bytes per action
// (op, cpu, arg little-endian, dt little-endian); a trailing partial action is dropped.
BuildSpec spec_from_bytes(uint8_t a, uint8_t b, std::string cpu_model);
std::vector<Action> actions_from_bytes(std::span<const uint8_t>);

}  // namespace kacct::trace
