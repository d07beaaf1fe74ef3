// fuzz_trace's oracle (the same LLVMFuzzerTestOneInput) with a structure-aware mutator: inputs
// are mutated as traces, at the event level, and stay valid, so that the fuzzer spends its runs
// in the model rather than in the parser's error paths.
//
// LLVMFuzzerCustomMutator parses the input with the model's own parser (trace::load; an
// actions input is built with trace::build), applies one edit to the event list (delete, swap
// two neighbours, retime, change a field within its domain, insert a copy of an event, change
// the CPU x config combo), keeps it only if trace::validate accepts it and writes it back with
// trace::write (as many events as fit the length limit): no second grammar. 1 in 8 mutations, or an input that does not
// parse, goes to libFuzzer's byte-level mutator, which keeps the parser itself fuzzed. The environment variable
// KACCT_FUZZ_BYTES_ONLY=1 turns the edits off (the same binary, for comparison).
#include <cstdlib>
#include <cstring>
#include <random>

#include "fuzz_trace.cpp"  // NOLINT: the same target, one definition of its oracle

// Weak: the replay build (replay_main.cpp) has no libFuzzer and never calls the mutator.
extern "C" __attribute__((weak)) std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size,
                                                              std::size_t max_size);

namespace {

using kacct::trace::Event;
using kacct::trace::Kind;
using kacct::trace::Trace;

// The tids an event may name: declared tasks and forked children (so far in the list).
std::vector<std::uint64_t> tids_of(const Trace& t) {
  std::vector<std::uint64_t> v{0};
  for (const auto& d : t.header.tasks) v.push_back(d.tid);
  for (const auto& e : t.events)
    if (e.kind == Kind::Fork) v.push_back(e.b);
  return v;
}

// One edit of t's events; false if there is nothing to edit.
bool edit(Trace& t, unsigned& sel, std::mt19937_64& rng) {
  auto& ev = t.events;
  auto pick = [&](std::size_t n) { return std::size_t(rng() % n); };
  auto lo = [&](std::size_t i) { return i == 0 ? std::uint64_t{0} : ev[i - 1].ts; };
  auto hi = [&](std::size_t i) { return i + 1 < ev.size() ? ev[i + 1].ts : ev[i].ts + 4'000'000; };
  switch (rng() % 7) {
    case 0:  // delete
      if (ev.empty()) return false;
      ev.erase(ev.begin() + pick(ev.size()));
      return true;
    case 1: {  // swap two neighbours, each keeping its place in time
      if (ev.size() < 2) return false;
      const std::size_t i = pick(ev.size() - 1);
      std::swap(ev[i], ev[i + 1]);
      std::swap(ev[i].ts, ev[i + 1].ts);
      return true;
    }
    case 2: {  // retime: within its neighbours, or shift the rest of the trace
      if (ev.empty()) return false;
      const std::size_t i = pick(ev.size());
      if (rng() & 1) {
        ev[i].ts = lo(i) + rng() % (hi(i) - lo(i) + 1);
      } else {
        const std::uint64_t d = rng() % 4'000'000;
        for (std::size_t j = i; j < ev.size(); ++j) ev[j].ts += d;
      }
      return true;
    }
    case 3: {  // change one field within its domain
      if (ev.empty()) return false;
      Event& e = ev[pick(ev.size())];
      const auto tids = tids_of(t);
      switch (rng() % 6) {
        case 0: e.cpu = std::uint32_t(pick(t.header.ncpus)); break;
        case 1:
          if (e.kind == Kind::Switch || e.kind == Kind::Wakeup || e.kind == Kind::Read || e.kind == Kind::Fork ||
              e.kind == Kind::Runtime)
            e.a = tids[pick(tids.size())];
          else if (e.kind == Kind::Steal || e.kind == Kind::SyscallEnter || e.kind == Kind::IrqEnter ||
                   e.kind == Kind::SoftirqEnter)
            e.a = rng() % (rng() & 1 ? 64 : 2'000'000);
          else
            return false;
          break;
        case 2:
          if (e.kind == Kind::Switch)
            e.b = tids[pick(tids.size())];
          else if (e.kind == Kind::Runtime)
            e.b = rng() % 4'000'000;
          else
            return false;
          break;
        case 3:
          if (e.kind == Kind::Switch) {
            e.prev_state = kacct::trace::PrevState(pick(4));
            e.iowait = rng() & 1;
          } else if (e.kind == Kind::Read) {
            e.read_kind = kacct::trace::ReadKind(pick(kacct::trace::kReadKindCount));
          } else if (e.kind == Kind::ExcEnter) {
            e.exc_kind = kacct::trace::ExcKind(pick(2));
          } else {
            return false;
          }
          break;
        case 4:
          if (e.kind != Kind::Switch) return false;
          e.switch_gap = (rng() & 3) ? std::optional<std::uint64_t>(rng() % 20'000) : std::nullopt;
          break;
        default: e.kind = Kind(pick(kacct::trace::kKindCount)); break;
      }
      return true;
    }
    case 4: {  // insert a copy of an event elsewhere, retimed to fit, maybe on another CPU
      if (ev.empty() || ev.size() >= kMaxTextEvents) return false;
      Event e = ev[pick(ev.size())];
      const std::size_t i = pick(ev.size() + 1);
      const std::uint64_t a = i == 0 ? 0 : ev[i - 1].ts, b = i < ev.size() ? ev[i].ts : a + 4'000'000;
      e.ts = a + rng() % (b - a + 1);
      if (rng() & 1) e.cpu = std::uint32_t(pick(t.header.ncpus));
      e.line = 0;
      ev.insert(ev.begin() + i, e);
      return true;
    }
    case 5: {  // insert a tick or a read: the events that fit almost anywhere
      const std::size_t i = ev.empty() ? 0 : pick(ev.size() + 1);
      Event e;
      e.ts = i == 0 ? 0 : ev[i - 1].ts;
      e.cpu = std::uint32_t(pick(t.header.ncpus));
      if (rng() & 1) {
        e.kind = Kind::Read;
        e.read_kind = kacct::trace::ReadKind(pick(kacct::trace::kReadKindCount));
        e.read_id = rng() % 100;
      }
      ev.insert(ev.begin() + i, e);
      return true;
    }
    default:  // another CPU x config combo
      sel = 0x8000 | unsigned(rng() % 0x8000);
      return true;
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  using namespace kacct;
  static const bool bytes_only = [] {
    const char* v = std::getenv("KACCT_FUZZ_BYTES_ONLY");
    return v && *v && *v != '0';
  }();
  std::mt19937_64 rng(seed);
  if (bytes_only || size < 2 || rng() % 8 == 0) return LLVMFuzzerMutate(data, size, max_size);
  unsigned sel = unsigned(data[0]) | unsigned(data[1]) << 8;
  const std::span<const std::uint8_t> rest(data + 2, size - 2);
  // The trace this mutator wrote last: libFuzzer mutates its own output again (-mutate_depth,
  // 5 by default), so an input equal to it byte for byte is that trace, not parsed again.
  static std::string last_text;
  static Trace last;
  Trace t;
  if (!last_text.empty() && std::string_view(reinterpret_cast<const char*>(data), size) == last_text) {
    t = last;
  } else if (sel & 0x8000) {
    auto r = trace::load(std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()));
    if (!r.ok() || r.value().events.size() > kMaxTextEvents || r.value().header.ncpus > kMaxTextCpus)
      return LLVMFuzzerMutate(data, size, max_size);
    t = std::move(r).value();
  } else {
    if (rest.size() < 2) return LLVMFuzzerMutate(data, size, max_size);
    const auto& combos = arch::combos();
    const auto spec =
        trace::spec_from_bytes(rest[0], rest[1], std::string(combos[(sel & 0x7fff) % combos.size()].cpu.name));
    auto actions = trace::actions_from_bytes(rest.subspan(2));
    if (actions.size() > kMaxActions) actions.resize(kMaxActions);
    t = trace::build(spec, actions);
    sel |= 0x8000;
  }
  for (int attempt = 0; attempt < 16; ++attempt) {
    Trace u = t;
    unsigned s = sel;
    const int edits = 1 + int(rng() % 3);
    bool changed = false;
    for (int k = 0; k < edits; ++k) changed = edit(u, s, rng) || changed;
    if (!changed || trace::validate(u)) continue;
    std::string text;
    trace::append_header(text, u.header);
    const std::size_t header = text.size();
    if (header + 2 > max_size) break;
    // Events while they fit libFuzzer's length limit (-max_len, which len_control lowers at first):
    // a prefix of a valid trace is valid (trace::validate checks event by event). Trying again
    // instead wasted 16 validations and writes on most inputs built from actions, whose text is
    // longer than the limit, and then left them to the byte mutator.
    std::size_t n = 0;
    for (; n < u.events.size(); ++n) {
      const std::size_t before = text.size();
      trace::append_event(text, u.events[n]);
      if (text.size() + 2 > max_size) {
        text.resize(before);
        break;
      }
    }
    if (n == 0 && !u.events.empty()) break;
    u.events.resize(n);
    data[0] = std::uint8_t(s);
    data[1] = std::uint8_t(s >> 8);
    std::memcpy(data + 2, text.data(), text.size());
    last_text.assign(reinterpret_cast<const char*>(data), text.size() + 2);
    last = std::move(u);
    return text.size() + 2;
  }
  last_text.clear();
  return LLVMFuzzerMutate(data, size, max_size);
}
