// Lazy-TLB model: names, configs by arch and release, the initial world, the event-script
// parser/writer, the checking runner, the exhaustive explorer and the seed scenario.
#include <charconv>
#include <deque>
#include <unordered_map>

#include "model/lazytlb/script.hpp"
#include "model/trace/tokens.hpp"

namespace kacct::lazytlb {

std::string_view arch_name(Arch a) {
  switch (a) {
    case Arch::Generic: return "generic";
    case Arch::PpcRadix: return "ppc64-radix";
    case Arch::PpcHash: return "ppc64-hash";
  }
  return "generic";
}
std::optional<Arch> parse_arch(std::string_view s) {
  for (Arch a : {Arch::Generic, Arch::PpcRadix, Arch::PpcHash})
    if (arch_name(a) == s) return a;
  return std::nullopt;
}

Cfg config_for(Arch a, arch::KVersion ver) {
  Cfg c;
  c.arch = a;
  const bool book3s64 = a == Arch::PpcRadix || a == Arch::PpcHash;
  c.shootdown = book3s64 && arch::applied("2655421ae69f", ver) && arch::applied("77f68ebeee20", ver);
  c.use_mm_always_grabs = arch::applied("6cad87b0d216", ver);
  c.exit_flush_shoots = a == Arch::PpcRadix && arch::applied("e43c0a0c3c28", ver);
  return c;
}
std::string mode_name(const Cfg& c) { return c.shootdown ? "shootdown" : "refcount"; }

bool apply_mutant(Cfg& c, std::string_view n) {
  if (n == "no-lazy-grab") c.mut_no_lazy_grab = true;
  else if (n == "shoot-skip-cpu") c.mut_shoot_skip_cpu = true;
  else if (n == "clear-wrong-cpu") c.mut_clear_wrong_cpu = true;
  else return false;
  return true;
}
Cfg Script::cfg() const {
  Cfg c = config_for(arch, version);
  c.debug_shoot_lazies = debug_shoot_lazies && c.shootdown;
  for (const auto& m : mutants) apply_mutant(c, m);
  return c;
}

World<Concrete> initial(const Sizes& s) {
  World<Concrete> w;
  w.ntasks = s.tasks;
  w.cpus.resize(s.cpus);
  w.tasks.resize(s.tasks + s.cpus);
  w.mms.resize(s.mms);
  w.cnt.resize(s.mms, Counters<Concrete>{0, 0});
  for (int c = 0; c < s.cpus; ++c) {
    Task& idle = w.tasks[w.idle_of(c)];
    idle.st = TaskState::Running;
    idle.kthread = idle.idle = true;
    idle.active_mm = kInitMm;
    w.cpus[c].curr = w.idle_of(c);
  }
  w.mms[0].st = MmState::Live;
  w.cnt[0] = {1, 1};
  Task& t0 = w.tasks[0];
  t0.st = TaskState::Runnable;
  t0.mm = t0.active_mm = 0;
  if (s.tasks >= 2) {
    Task& k = w.tasks[s.tasks - 1];
    k.st = TaskState::Runnable;
    k.kthread = true;
  }
  return w;
}

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
namespace {
// One checked step: obligations and invariants; true if everything held.
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
}  // namespace

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

// ---- explorer ------------------------------------------------------------------------------
std::vector<Event> candidate_events(const World<Concrete>& w, const Cfg& cfg) {
  std::vector<Event> out;
  const int nc = int(w.cpus.size()), nm = int(w.mms.size());
  int free_task = -1;
  for (int t = 0; t < w.ntasks; ++t)
    if (w.tasks[t].st == TaskState::Unborn) { free_task = t; break; }
  for (int c = 0; c < nc; ++c) {
    auto add = [&](Op op, int arg = 0) { out.push_back({op, std::int16_t(c), std::int16_t(arg)}); };
    add(Op::Finish);
    add(Op::Idle);
    for (int t = 0; t < w.ntasks; ++t) add(Op::Switch, t);
    add(Op::Exit);
    add(Op::Exec);
    if (free_task >= 0) { add(Op::Fork, free_task); add(Op::ForkVm, free_task); }
    add(Op::Unuse);
    for (int m = 0; m < nm; ++m) {
      add(Op::Use, m);
      if (w.mms[m].ext_users == 0) add(Op::MmGet, m);
      add(Op::MmPut, m);
      if (w.mms[m].ext_grabs == 0) add(Op::MmGrab, m);
      add(Op::MmDrop, m);
      if (cfg.arch == Arch::PpcRadix) add(Op::Flush, m);
    }
  }
  return out;
}

namespace {
std::string key_of(const World<Concrete>& w) {
  std::string k;
  k.reserve(w.cpus.size() * 5 + w.tasks.size() * 6 + w.mms.size() * 20);
  auto put16 = [&](std::int16_t v) { k.push_back(char(v & 0xff)); k.push_back(char(v >> 8)); };
  for (const auto& c : w.cpus) { put16(c.curr); put16(c.prev_mm); k.push_back(char(c.irqs_off)); }
  for (const auto& t : w.tasks) {
    k.push_back(char(int(t.st) | (t.kthread << 2) | (t.idle << 3) | (t.exiting << 4)));
    put16(t.mm);
    put16(t.active_mm);
  }
  for (std::size_t m = 0; m < w.mms.size(); ++m) {
    const auto& mm = w.mms[m];
    k.push_back(char(mm.st));
    for (auto x : mm.mask.w) k.append(reinterpret_cast<const char*>(&x), sizeof x);
    k.push_back(char(mm.ext_users));
    k.push_back(char(mm.ext_grabs));
    k.append(reinterpret_cast<const char*>(&w.cnt[m].mm_users), 4);
    k.append(reinterpret_cast<const char*>(&w.cnt[m].mm_count), 4);
  }
  return k;
}
}  // namespace

ExploreResult explore(const ExploreOptions& o, bool keep_states) {
  ExploreResult r;
  struct Node {
    World<Concrete> w;
    std::uint32_t parent;
    Event via;
    std::uint32_t depth;
  };
  std::vector<Node> nodes;
  std::unordered_map<std::string, std::uint32_t> seen;
  const Cfg cfg = o.header.cfg();
  nodes.push_back({initial(o.header.sizes), UINT32_MAX, {}, 0});
  seen.emplace(key_of(nodes[0].w), 0);
  StepLog log;
  auto trace_to = [&](std::uint32_t i, const Event& last) {
    Script s = o.header;
    s.events.clear();
    s.lines.clear();
    std::vector<Event> ev{last};
    for (std::uint32_t j = i; nodes[j].parent != UINT32_MAX; j = nodes[j].parent) ev.push_back(nodes[j].via);
    s.events.assign(ev.rbegin(), ev.rend());
    return s;
  };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    r.depth = std::max<std::size_t>(r.depth, nodes[i].depth);
    if (spec::zombies(nodes[i].w) > 0) ++r.zombie_states;
    const auto cands = candidate_events(nodes[i].w, cfg);
    for (const auto& e : cands) {
      if (!not_enabled(nodes[i].w, cfg, e).empty()) continue;
      World<Concrete> w = nodes[i].w;
      Costs cost;
      std::vector<spec::Violation> bad;
      ++r.transitions;
      const bool ok = checked_step(cfg, w, e, cost, log, bad);
      r.frees += cost.frees;
      r.max_ipis_step = std::max(r.max_ipis_step, cost.ipis);
      if (!ok) {
        r.violation = bad.front();
        r.counterexample = trace_to(std::uint32_t(i), e);
        r.states = nodes.size();
        return r;
      }
      auto [it, fresh] = seen.emplace(key_of(w), std::uint32_t(nodes.size()));
      if (!fresh) continue;
      if (nodes.size() >= o.max_states) {
        r.truncated = true;
        continue;
      }
      nodes.push_back({std::move(w), std::uint32_t(i), e, nodes[i].depth + 1});
    }
  }
  r.states = nodes.size();
  if (keep_states)
    for (auto& n : nodes) r.sample.push_back(std::move(n.w));
  return r;
}

// ---- seed scenario -------------------------------------------------------------------------
Seed seed_scenario(int n, int rounds, Arch a, arch::KVersion ver) {
  Seed s;
  Script& sc = s.script;
  sc.sizes = {n, n + 1, 1};
  sc.arch = a;
  sc.version = ver;
  auto ev = [&](Op op, int c, int arg = 0) { sc.events.push_back({op, std::int16_t(c), std::int16_t(arg)}); };
  ev(Op::Switch, 0, 0);
  ev(Op::Finish, 0);
  for (int t = 1; t < n; ++t) ev(Op::ForkVm, 0, t);
  for (int c = 1; c < n; ++c) { ev(Op::Switch, c, c); ev(Op::Finish, c); }
  s.loop_begin = sc.events.size();
  for (int r = 0; r < rounds; ++r)
    for (int c = 0; c < n; ++c) {
      ev(Op::Idle, c);
      ev(Op::Finish, c);
      ev(Op::Switch, c, c);
      ev(Op::Finish, c);
    }
  s.loop_end = sc.events.size();
  for (int c = n - 1; c >= 0; --c) { ev(Op::Exit, c); ev(Op::Idle, c); ev(Op::Finish, c); }
  return s;
}

}  // namespace kacct::lazytlb
