// The lazy-TLB event-script format: names, parser, canonical writer, and the checking runner
// (script.hpp).
#include <charconv>

#include "model/lazytlb/script.hpp"
#include "model/trace/tokens.hpp"

namespace kacct::lazytlb {

namespace {
constexpr std::array<std::string_view, kNumOps> kOpNames = {"switch", "finish", "idle",   "exit",  "exec",
                                                            "fork",   "forkvm", "use",    "unuse", "mmget",
                                                            "mmput",  "mmgrab", "mmdrop", "flush"};
// Which ops take a second argument, and of which kind.
enum class ArgKind { None, Task, Mm };
ArgKind arg_kind(Op op) {
  switch (op) {
    case Op::Switch: case Op::Fork: case Op::ForkVm: return ArgKind::Task;
    case Op::Use: case Op::MmGet: case Op::MmPut: case Op::MmGrab: case Op::MmDrop: case Op::Flush: return ArgKind::Mm;
    default: return ArgKind::None;
  }
}
}  // namespace

std::string_view op_name(Op op) { return kOpNames[int(op)]; }
std::string event_text(const Event& e) {
  std::string s = std::string(op_name(e.op)) + " " + std::to_string(e.cpu);
  if (arg_kind(e.op) != ArgKind::None) s += " " + std::to_string(e.arg);
  return s;
}

// ---- parser --------------------------------------------------------------------------------
namespace {
using text::Tok;
std::vector<Tok> split(std::string_view line) { return text::split(line, false); }  // comments stripped before
bool to_int(std::string_view s, long& v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace

Parsed parse_script(std::string_view text) {
  Parsed out;
  Script sc;
  auto fail = [&](std::uint32_t line, std::uint32_t col, std::string msg) {
    out.error = ParseError{line, col, std::move(msg)};
    return out;
  };
  bool header = false, in_events = false, seen_version = false;
  std::uint32_t lineno = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    if (auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
    for (unsigned char ch : line)
      if (ch >= 0x80 || (ch < 0x20 && ch != '\t' && ch != '\r'))
        return fail(lineno, 1, "non-ASCII or control character");
    auto toks = split(line);
    if (toks.empty()) {
      if (nl == text.size()) break;
      continue;
    }
    const Tok& k = toks[0];
    if (!header) {
      if (k.s != "lazytlb" || toks.size() != 2 || toks[1].s != "1")
        return fail(lineno, k.col, "expected header 'lazytlb 1'");
      header = true;
    } else if (!in_events) {
      auto want_args = [&](std::size_t n) { return toks.size() == n + 1; };
      if (k.s == "events") {
        if (!want_args(0)) return fail(lineno, toks[1].col, "'events' takes no argument");
        if (!seen_version) return fail(lineno, k.col, "'version' must come before 'events'");
        in_events = true;
      } else if (k.s == "cpus" || k.s == "tasks" || k.s == "mms") {
        long v = 0;
        if (!want_args(1)) return fail(lineno, k.col, std::string(k.s) + " takes one number");
        const long hi = k.s == "cpus" ? kMaxCpus : k.s == "tasks" ? 64 : 16;
        if (!to_int(toks[1].s, v) || v < 1 || v > hi)
          return fail(lineno, toks[1].col, std::string(k.s) + " must be a number in 1.." + std::to_string(hi));
        (k.s == "cpus" ? sc.sizes.cpus : k.s == "tasks" ? sc.sizes.tasks : sc.sizes.mms) = int(v);
      } else if (k.s == "arch") {
        if (!want_args(1)) return fail(lineno, k.col, "arch takes one name");
        auto a = parse_arch(toks[1].s);
        if (!a) return fail(lineno, toks[1].col, "unknown arch (generic, ppc64-radix, ppc64-hash)");
        sc.arch = *a;
      } else if (k.s == "version") {
        if (!want_args(1)) return fail(lineno, k.col, "version takes MAJOR.MINOR");
        auto s = toks[1].s;
        auto dot = s.find('.');
        long ma = 0, mi = 0;
        if (dot == std::string_view::npos || !to_int(s.substr(0, dot), ma) || !to_int(s.substr(dot + 1), mi) || ma < 2 ||
            ma > 9 || mi < 0 || mi > 99)
          return fail(lineno, toks[1].col, "version must be MAJOR.MINOR, e.g. 6.6");
        sc.version = arch::v(unsigned(ma), unsigned(mi));
        seen_version = true;
      } else if (k.s == "debug-shoot-lazies") {
        if (!want_args(0)) return fail(lineno, toks[1].col, "debug-shoot-lazies takes no argument");
        sc.debug_shoot_lazies = true;
      } else if (k.s == "mutant") {
        Cfg scratch;
        if (!want_args(1) || !apply_mutant(scratch, toks[1].s))
          return fail(lineno, toks.size() > 1 ? toks[1].col : k.col, "mutant must be one of no-lazy-grab, shoot-skip-cpu, clear-wrong-cpu");
        sc.mutants.emplace_back(toks[1].s);
      } else {
        return fail(lineno, k.col, "unknown header line '" + std::string(k.s) + "'");
      }
    } else {
      int op = -1;
      for (int i = 0; i < kNumOps; ++i)
        if (kOpNames[i] == k.s) op = i;
      if (op < 0) return fail(lineno, k.col, "unknown event '" + std::string(k.s) + "'");
      Event e;
      e.op = Op(op);
      const ArgKind ak = arg_kind(e.op);
      const std::size_t want = ak == ArgKind::None ? 2 : 3;
      if (toks.size() != want)
        return fail(lineno, toks.size() > want ? toks[want].col : k.col,
                    std::string(k.s) + (ak == ArgKind::None ? " takes CPU" : ak == ArgKind::Task ? " takes CPU TASK" : " takes CPU MM"));
      long cpu = 0, arg = 0;
      if (!to_int(toks[1].s, cpu) || cpu < 0 || cpu >= sc.sizes.cpus)
        return fail(lineno, toks[1].col, "CPU must be in 0.." + std::to_string(sc.sizes.cpus - 1));
      if (ak == ArgKind::Task && (!to_int(toks[2].s, arg) || arg < 0 || arg >= sc.sizes.tasks))
        return fail(lineno, toks[2].col, "TASK must be in 0.." + std::to_string(sc.sizes.tasks - 1));
      if (ak == ArgKind::Mm && (!to_int(toks[2].s, arg) || arg < 0 || arg >= sc.sizes.mms))
        return fail(lineno, toks[2].col, "MM must be in 0.." + std::to_string(sc.sizes.mms - 1));
      if (sc.events.size() >= 1'000'000) return fail(lineno, k.col, "more than 1000000 events");
      e.cpu = std::int16_t(cpu);
      e.arg = std::int16_t(arg);
      sc.events.push_back(e);
      sc.lines.push_back(lineno);
    }
    if (nl == text.size()) break;
  }
  if (!header) return fail(lineno ? lineno : 1, 1, "empty script (expected header 'lazytlb 1')");
  if (!in_events) return fail(lineno, 1, "missing 'events' line");
  out.script = std::move(sc);
  return out;
}

std::string write_script(const Script& s) {
  std::string o = "lazytlb 1\n";
  o += "cpus " + std::to_string(s.sizes.cpus) + "\n";
  o += "tasks " + std::to_string(s.sizes.tasks) + "\n";
  o += "mms " + std::to_string(s.sizes.mms) + "\n";
  o += "arch " + std::string(arch_name(s.arch)) + "\n";
  if (s.debug_shoot_lazies) o += "debug-shoot-lazies\n";
  for (const auto& m : s.mutants) o += "mutant " + m + "\n";
  o += "version " + s.version.str() + "\n";
  o += "events\n";
  for (const auto& e : s.events) o += event_text(e) + "\n";
  return o;
}

// ---- runner --------------------------------------------------------------------------------
bool checked_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                  std::vector<spec::Violation>& bad) {
  Concrete d;
  Decider<Concrete> dec;
  log.reset();
  Stepper<Concrete>(d, cfg, w, cost, log, dec).run(e);
  for (auto site : d.failed) bad.push_back({"lazytlb.obligation", std::string(site)});
  auto v = spec::check(w, cfg, log);
  bad.insert(bad.end(), v.begin(), v.end());
  return bad.empty();
}

RunResult run_script(const Script& s) {
  RunResult r;
  const Cfg cfg = s.cfg();
  r.world = initial(s.sizes);
  StepLog log;
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    if (auto why = not_enabled(r.world, cfg, s.events[i]); !why.empty()) {
      r.failed_at = i;
      r.not_enabled = why;
      return r;
    }
    std::vector<spec::Violation> bad;
    if (!checked_step(cfg, r.world, s.events[i], r.costs, log, bad)) {
      r.failed_at = i;
      r.violations = std::move(bad);
      r.steps = i + 1;
      return r;
    }
    r.steps = i + 1;
    int z = spec::zombies(r.world);
    r.max_zombies = std::max(r.max_zombies, z);
    r.zombie_steps += z > 0;
  }
  return r;
}

}  // namespace kacct::lazytlb
