// libFuzzer target for the trace parser and the simulator's invariant checks.
//
// Input: bytes 0-1 = selector (little-endian u16): bit 15 set -> the rest is trace text,
// clear -> the rest is a builder spec (2 bytes) and actions (8 bytes each, see
// model/trace/builder.hpp); bits 0-14 pick the CPU x config combo (index mod arch::combos()).
//  (a) text: trace::load must never crash; a trace it accepts (within realistic bounds) is run.
//  (b) actions: the built trace must validate and compile.
// Every trace is run with check=true on the combo; a violated invariant or failed obligation
// prints the combo, the invariant and the trace text, then aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "model/domain/reflect.hpp"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace {

constexpr std::size_t kMaxActions = 2000;
constexpr std::size_t kMaxTextEvents = 5000;
constexpr std::uint32_t kMaxTextCpus = 64;
constexpr std::uint64_t kMaxTs = std::uint64_t{1} << 50;  // ~13 days of ns: no counter wraps

[[noreturn]] void die(const kacct::arch::Combo& c, const std::string& what, const kacct::trace::Trace& t) {
  std::fprintf(stderr, "kacct fuzz: %.*s %s: %s\n--- trace ---\n%s--- end ---\n", int(c.cpu.name.size()),
               c.cpu.name.data(), c.cfg.name().c_str(), what.c_str(), kacct::trace::write(t).c_str());
  std::abort();
}

// KACCT_FUZZ_DUMP=1: print what the run computed (or why the input was rejected) on stdout, for
// the gcc-vs-clang differential (tools/fuzz/gcc-vs-clang.sh): both builds must print the same bytes.
bool dumping() {
  static const bool v = [] {
    const char* e = std::getenv("KACCT_FUZZ_DUMP");
    return e && *e && *e != '0';
  }();
  return v;
}
void dump(const kacct::arch::Combo& c, const kacct::sim::RunResult& r) {
  std::printf("combo %.*s %s events %llu\n", int(c.cpu.name.size()), c.cpu.name.data(), c.cfg.name().c_str(),
              (unsigned long long)r.events);
  std::printf("cpus %s\ntasks %s\n", kacct::to_json(r.cpus).dump().c_str(), kacct::to_json(r.tasks).dump().c_str());
  for (const auto& x : r.reads)
    std::printf("read %llu kind=%d tid=%llu ts=%llu utime=%llu stime=%llu rtime=%llu\n", (unsigned long long)x.id,
                int(x.kind), (unsigned long long)x.tid, (unsigned long long)x.ts, (unsigned long long)x.utime,
                (unsigned long long)x.stime, (unsigned long long)x.rtime);
  if (r.violation) std::printf("violation %s: %s\n", r.violation->invariant.c_str(), r.violation->detail.c_str());
  for (const auto& k : r.known_bugs) std::printf("known bug %s: %s\n", k.invariant.c_str(), k.detail.c_str());
  for (const auto& o : r.obligations_failed) std::printf("obligation %s\n", o.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  if (size < 2) return 0;
  const unsigned sel = unsigned(data[0]) | unsigned(data[1]) << 8;
  const auto& combos = arch::combos();
  const arch::Combo& combo = combos[(sel & 0x7fff) % combos.size()];
  const std::span<const std::uint8_t> rest(data + 2, size - 2);

  trace::Trace t;
  if (sel & 0x8000) {
    auto r = trace::load(std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()));
    if (!r.ok()) {
      const std::string why = r.error().to_string();
      if (dumping()) std::printf("rejected: %s\n", why.c_str());
      return 0;
    }
    t = std::move(r).value();
    if (trace::write(t).empty()) std::abort();  // the canonical writer accepts whatever load accepts
    if (t.header.ncpus > kMaxTextCpus || t.events.size() > kMaxTextEvents ||
        (!t.events.empty() && t.events.back().ts > kMaxTs)) {
      if (dumping()) std::printf("beyond the bounds run\n");
      return 0;
    }
  } else {
    if (rest.size() < 2) return 0;
    const auto spec = trace::spec_from_bytes(rest[0], rest[1], std::string(combo.cpu.name));
    auto actions = trace::actions_from_bytes(rest.subspan(2));
    if (actions.size() > kMaxActions) actions.resize(kMaxActions);
    t = trace::build(spec, actions);
    if (auto err = trace::validate(t)) die(combo, "builder produced an invalid trace: " + err->to_string(), t);
  }
  auto prog = sim::compile(t);
  if (!prog.ok()) die(combo, "a valid trace did not compile: " + prog.error().to_string(), t);
  const auto res =
      sim::run(prog.value(), sim::model_cfg(combo.cpu, combo.cfg), {.check = true, .tolerate_known_bugs = true});
  if (dumping()) dump(combo, res);
  if (res.violation)
    die(combo,
        "invariant " + res.violation->invariant + " violated (" + res.violation->detail + ") at event " +
            std::to_string(res.violation->event),
        t);
  if (!res.obligations_failed.empty())
    die(combo, "obligation failed: " + std::string(res.obligations_failed.front()), t);
  return 0;
}
