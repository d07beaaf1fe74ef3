// libFuzzer target for the C API (capi/, include/kacct/kacct.h): both feeds, against the library.
//
// Input: byte 0 = selector: bit 7 set -> text feed, clear -> struct feed; bits 0-6 pick the
// CPU x config combo (index mod arch::combos()). Byte 1: text feed -> chunk length 1..256
// (the text is fed in pieces split anywhere, even inside a line); struct feed -> ncpus 1..4.
//  (a) text: the rest is trace text. No call may abort; a failure names its status and has a
//      message; a trace accepted whole must also load with trace::load.
//  (b) structs: the builder's header (tasks declared by kacct_add_task), then 40 bytes per
//      kacct_event (ts delta, cpu, kind, a, b, enums and read fields), fed one at a time; an
//      impossible event is rejected and leaves the trace as it was.
// Whatever was accepted is then queried (every CPU's cpustat, every read, the verdict), and
// the verdict must equal the library's own run of the same trace (sim::run with checks).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "arch/registry.hpp"
#include "heap.hpp"
#include "kacct/kacct.h"
#include "model/sim/machine.hpp"
#include "model/trace/builder.hpp"

namespace {

constexpr std::size_t kMaxEvents = 3000;
constexpr std::size_t kMaxText = 64 * 1024;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "kacct fuzz_capi: %s\n", what.c_str());
  std::abort();
}
void expect_failure_described(kacct_model* m, kacct_status s) {
  if (s == KACCT_OK) return;
  if (s == KACCT_E_INTERNAL || s == KACCT_E_NO_MEMORY)
    die(std::string(kacct_status_name(s)) + ": " + kacct_error_message(m));
  if (kacct_error_code(m) != s) die("kacct_error_code differs from the status returned");
  if (!*kacct_error_message(m)) die(std::string(kacct_status_name(s)) + " without a message");
}
std::uint64_t le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kacct;
  if (size < 2) return 0;
  const auto& combos = arch::combos();
  const arch::Combo& combo = combos[(data[0] & 0x7f) % combos.size()];
  const std::string cpu(combo.cpu.name), cfg = combo.cfg.name();
  kacct_model* m = nullptr;
  if (kacct_open(cpu.c_str(), cfg.c_str(), &m) != KACCT_OK)
    die("kacct_open " + cpu + " " + cfg + ": " + kacct_last_error());
  bool whole = true;  // every feed call accepted
  std::string text;
  if (data[0] & 0x80) {
    if (size - 2 > kMaxText) {
      kacct_close(m);
      return 0;
    }
    text.assign(reinterpret_cast<const char*>(data + 2), size - 2);
    const std::size_t chunk = std::size_t(data[1]) + 1;
    for (std::size_t at = 0; at < text.size(); at += chunk) {
      const auto s = kacct_feed_text(m, text.data() + at, std::min(chunk, text.size() - at));
      expect_failure_described(m, s);
      if (s != KACCT_OK) {
        whole = false;
        break;
      }
    }
  } else {
    trace::BuildSpec spec;
    spec.cpu_model = cpu;
    spec.ncpus = 1 + data[1] % 4;
    const auto h = trace::build_header(spec);
    expect_failure_described(m, kacct_set_ncpus(m, h.ncpus));
    for (const auto& t : h.tasks) {
      kacct_task k{t.tid, t.pid, t.comm.c_str(), t.nice, t.kthread, t.mm.value_or(0)};
      if (const auto s = kacct_add_task(m, &k); s != KACCT_OK)
        die(std::string("kacct_add_task: ") + kacct_error_message(m));
    }
    std::uint64_t ts = 0;
    std::size_t n = 0;
    for (std::size_t at = 2; at + 40 <= size && n < kMaxEvents; at += 40, ++n) {
      const std::uint8_t* p = data + at;
      kacct_event e{};
      ts += le64(p) >> 40;  // up to ~16 ms per event
      e.ts = ts;
      e.cpu = p[8] % 5;  // one beyond ncpus at most: rejected
      e.kind = p[9] % (KACCT_NR_KINDS + 1);
      e.a = le64(p + 16) % 1024;  // tids and vectors near the declared ones
      e.b = le64(p + 24) % 1024;
      e.prev_state = p[10] % 5;
      e.iowait = p[11] & 1;
      e.exc_kind = p[12] % 3;
      e.read_kind = p[13] % 8;
      e.read_id = p[14];
      e.fork_pid = p[15] & 1 ? e.b : 0;
      e.fork_kthread = p[32] & 1;
      e.fork_has_mm = p[32] & 2;
      e.fork_mm = p[33];
      e.fork_comm = (p[32] & 4) ? "child" : nullptr;
      const auto s = kacct_feed_event(m, &e);
      expect_failure_described(m, s);
      whole = whole && s == KACCT_OK;
    }
  }
  // Queries: never abort, whatever was accepted.
  std::uint32_t ncpus = 0;
  const auto sn = kacct_ncpus(m, &ncpus);
  kacct_verdict v{};
  const auto sv = kacct_check(m, &v);
  if (sn == KACCT_OK && sv == KACCT_OK) {
    for (std::uint32_t c = 0; c <= ncpus; ++c) {
      kacct_cpustat st{};
      const auto s = kacct_get_cpustat(m, c, &st);
      if ((s == KACCT_OK) != (c < ncpus))
        die("kacct_get_cpustat on CPU " + std::to_string(c) + " of " + std::to_string(ncpus));
    }
    std::size_t nreads = 0;
    if (kacct_read_count(m, &nreads) != KACCT_OK) die("kacct_read_count failed after kacct_check succeeded");
    for (std::size_t i = 0; i < nreads; ++i) {
      kacct_read r{};
      if (kacct_get_read(m, i, &r) != KACCT_OK) die("kacct_get_read " + std::to_string(i));
    }
  }
  // The library on the same text: the API is a view of it, not a second model. The first query
  // (kacct_ncpus) completes an unterminated last line; if that line is rejected, it reports the
  // error and the line is dropped (documented), so only a trace accepted whole is compared.
  if ((data[0] & 0x80) && whole && sn == KACCT_OK && sv == KACCT_OK) {
    auto t = trace::load(text);
    if (!t) die("the API accepted text that trace::load rejects: " + t.error().to_string());
    if (t.value().events.size() <= kMaxEvents) {
      auto p = sim::compile(t.value());
      if (!p) die("a trace the API accepted does not compile: " + p.error().to_string());
      const auto r = sim::run(p.value(), sim::model_cfg(combo.cpu, combo.cfg), {.check = true});
      const bool holds = !r.violation && r.obligations_failed.empty();
      if (holds != bool(v.holds))
        die(std::string("verdicts differ: API holds=") + std::to_string(v.holds) + " (" + v.invariant + ": " +
            v.detail + "), library " + (r.violation ? r.violation->invariant : std::string("holds")));
    }
  }
  kacct_close(m);
  return 0;
}
