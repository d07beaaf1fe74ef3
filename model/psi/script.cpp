// PSI event scripts: parser, canonical writer, runner (see script.hpp).
#include "model/psi/script.hpp"
#include "model/trace/tokens.hpp"

#include <fmt/format.h>

#include <charconv>

namespace kacct::model::psi {

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::Faithful: return "faithful";
    case Variant::NoLock: return "no-lock";
    case Variant::DoubleCount: return "double-count";
    case Variant::LostDelta: return "lost-delta";
    case Variant::NoNegGuard: return "no-neg-guard";
  }
  return "?";
}
bool parse_variant(std::string_view s, Variant& out) {
  for (auto v : {Variant::Faithful, Variant::NoLock, Variant::DoubleCount, Variant::LostDelta, Variant::NoNegGuard})
    if (variant_name(v) == s) {
      out = v;
      return true;
    }
  return false;
}

std::string_view event_name(Ev e) {
  switch (e) {
    case Ev::Wait: return "wait";
    case Ev::IrqEnter: return "irq_enter";
    case Ev::IrqExit: return "irq_exit";
    case Ev::Irq: return "irq";
    case Ev::Tick: return "tick";
    case Ev::Schedule: return "schedule";
    case Ev::ClockGettime: return "clock_gettime";
    case Ev::Wakeup: return "wakeup";
    case Ev::Move: return "move";
    case Ev::Pressure: return "pressure";
    case Ev::RaceTickMove: return "race_tick_move";
  }
  return "?";
}

namespace {

using text::Tok;
std::vector<Tok> split(std::string_view line) { return text::split(line, true); }

class Parser {
 public:
  Parser(std::string_view text, std::size_t max_events) : max_(max_events) {
    std::size_t pos = 0;
    std::uint32_t n = 0;
    while (pos <= text.size()) {
      auto nl = text.find('\n', pos);
      auto line = text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
      ++n;
      auto toks = split(line);
      for (char ch : line)
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\r')
          throw ScriptError(n, std::uint32_t(line.find(ch) + 1), "control character in script");
      if (!toks.empty()) lines_.push_back({n, std::move(toks)});
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
    }
  }

  Script parse() {
    Script s;
    if (lines_.empty()) throw ScriptError(1, 1, "empty script: expected 'psi v1'");
    const auto& first = lines_[0];
    if (first.toks.size() != 2 || first.toks[0].s != "psi" || first.toks[1].s != "v1")
      throw ScriptError(first.n, 1, "expected 'psi v1' as the first line");
    std::size_t i = 1;
    bool cpus_seen = false;
    for (; i < lines_.size(); ++i) {
      const auto& l = lines_[i];
      auto kw = l.toks[0].s;
      if (kw == "version") {
        want(l, 2);
        auto t = l.toks[1];
        auto dot = t.s.find('.');
        if (dot == std::string_view::npos) throw ScriptError(l.n, t.col, "version: expected MAJOR.MINOR");
        auto ma = num(l.n, {t.s.substr(0, dot), t.col}, 9), mi = num(l.n, {t.s.substr(dot + 1), std::uint32_t(t.col + dot + 1)}, 99);
        s.version = arch::v(unsigned(ma), unsigned(mi));
      } else if (kw == "irqtime") {
        want(l, 2);
        s.irqtime = onoff(l.n, l.toks[1]);
      } else if (kw == "variant") {
        want(l, 2);
        Variant v;
        if (!parse_variant(l.toks[1].s, v))
          throw ScriptError(l.n, l.toks[1].col, "unknown variant '" + std::string(l.toks[1].s) +
                                                    "' (faithful, no-lock, double-count, lost-delta, no-neg-guard)");
        s.variant = v;
      } else if (kw == "cpus") {
        want(l, 2);
        if (cpus_seen) throw ScriptError(l.n, 1, "cpus given twice");
        s.cpus = int(num(l.n, l.toks[1], kMaxCpus));
        if (s.cpus < 1) throw ScriptError(l.n, l.toks[1].col, "cpus: at least 1");
        cpus_seen = true;
      } else if (kw == "group") {
        want(l, 4);
        kwd(l, 2, "parent");
        auto g = num(l.n, l.toks[1], kMaxGroups - 1);
        if (g != s.parent.size())
          throw ScriptError(l.n, l.toks[1].col, fmt::format("groups are numbered in order: expected {}", s.parent.size()));
        auto p = num(l.n, l.toks[3], kMaxGroups - 1);
        if (p >= g) throw ScriptError(l.n, l.toks[3].col, "parent must be an earlier group");
        s.parent.push_back(int(p));
      } else if (kw == "task") {
        want(l, 4);
        kwd(l, 2, "group");
        auto t = num(l.n, l.toks[1], kMaxTasks);
        if (t != s.task_group.size() + 1)
          throw ScriptError(l.n, l.toks[1].col, fmt::format("tasks are numbered in order from 1: expected {}", s.task_group.size() + 1));
        s.task_group.push_back(group(s, l.n, l.toks[3]));
      } else {
        break;
      }
    }
    events(s, i, lines_.size(), 0);
    return s;
  }

 private:
  struct Line {
    std::uint32_t n;
    std::vector<Tok> toks;
  };
  std::vector<Line> lines_;
  std::size_t max_;

  static void want(const Line& l, std::size_t n) {
    if (l.toks.size() < n) throw ScriptError(l.n, l.toks.back().col + std::uint32_t(l.toks.back().s.size()), fmt::format("'{}': expected {} operand(s)", l.toks[0].s, n - 1));
    if (l.toks.size() > n) throw ScriptError(l.n, l.toks[n].col, fmt::format("'{}': unexpected '{}'", l.toks[0].s, l.toks[n].s));
  }
  static void kwd(const Line& l, std::size_t i, std::string_view k) {
    if (l.toks[i].s != k) throw ScriptError(l.n, l.toks[i].col, fmt::format("expected '{}'", k));
  }
  static std::uint64_t num(std::uint32_t n, const Tok& t, std::uint64_t max) {
    std::uint64_t v = 0;
    auto r = std::from_chars(t.s.data(), t.s.data() + t.s.size(), v);
    if (t.s.empty() || r.ec != std::errc() || r.ptr != t.s.data() + t.s.size())
      throw ScriptError(n, t.col, "expected an unsigned number, got '" + std::string(t.s) + "'");
    if (v > max) throw ScriptError(n, t.col, fmt::format("{} is out of range (at most {})", v, max));
    return v;
  }
  static bool onoff(std::uint32_t n, const Tok& t) {
    if (t.s == "on") return true;
    if (t.s == "off") return false;
    throw ScriptError(n, t.col, "expected 'on' or 'off'");
  }
  static int cpu(const Script& s, std::uint32_t n, const Tok& t) {
    auto v = num(n, t, kMaxCpus);
    if (v >= std::uint64_t(s.cpus)) throw ScriptError(n, t.col, fmt::format("no cpu {} (cpus {})", v, s.cpus));
    return int(v);
  }
  static int group(const Script& s, std::uint32_t n, const Tok& t) {
    auto v = num(n, t, kMaxGroups);
    if (v >= s.parent.size()) throw ScriptError(n, t.col, fmt::format("no group {}", v));
    return int(v);
  }
  static int task(const Script& s, std::uint32_t n, const Tok& t, bool idle_ok) {
    auto v = num(n, t, kMaxTasks);
    if (v > s.task_group.size() || (v == 0 && !idle_ok))
      throw ScriptError(n, t.col, fmt::format("no task {}{}", v, idle_ok ? "" : " (0 is the idle task)"));
    return int(v);
  }

  // Events in lines [i, end), recursively for repeat blocks; returns the index after `end`.
  std::size_t events(Script& s, std::size_t i, std::size_t end, int depth) {
    while (i < end) {
      const auto& l = lines_[i];
      auto kw = l.toks[0].s;
      Event e;
      e.line = l.n;
      e.col = 1;
      auto by = [&](std::size_t at) {
        kwd(l, at, "by");
        return std::uint64_t(cpu(s, l.n, l.toks[at + 1]));
      };
      if (kw == "end") {
        if (depth == 0) throw ScriptError(l.n, 1, "'end' without 'repeat'");
        want(l, 1);
        return i + 1;
      } else if (kw == "repeat") {
        want(l, 2);
        if (depth >= 4) throw ScriptError(l.n, 1, "repeat nested too deep (at most 4)");
        auto count = num(l.n, l.toks[1], kMaxEvents);
        const std::size_t start = s.events.size();
        std::size_t after = events(s, i + 1, end, depth + 1);
        if (after == 0) throw ScriptError(l.n, 1, "'repeat' without 'end'");
        const std::size_t len = s.events.size() - start;
        if (count == 0) s.events.resize(start);
        else if (len * (count - 1) + s.events.size() > max_)
          throw ScriptError(l.n, l.toks[1].col, fmt::format("expands to more than {} events", max_));
        for (std::uint64_t k = 1; k < count; ++k)
          for (std::size_t j = 0; j < len; ++j) s.events.push_back(s.events[start + j]);
        i = after;
        continue;
      } else if (kw == "wait") {
        want(l, 2);
        e.kind = Ev::Wait;
        e.a = num(l.n, l.toks[1], std::uint64_t{1} << 40);
      } else if (kw == "irq" || kw == "irq_enter") {
        const bool dur = kw == "irq";
        const std::size_t base = dur ? 3 : 2;
        if (l.toks.size() == base + 1) {
          if (l.toks[base].s != "soft") throw ScriptError(l.n, l.toks[base].col, "expected 'soft' or nothing");
          e.soft = true;
          want(l, base + 1);
        } else {
          want(l, base);
        }
        e.kind = dur ? Ev::Irq : Ev::IrqEnter;
        e.a = cpu(s, l.n, l.toks[1]);
        if (dur) e.b = num(l.n, l.toks[2], std::uint64_t{1} << 40);
      } else if (kw == "irq_exit" || kw == "tick" || kw == "clock_gettime" || kw == "idle") {
        want(l, 2);
        e.kind = kw == "irq_exit" ? Ev::IrqExit : kw == "tick" ? Ev::Tick : kw == "idle" ? Ev::Schedule : Ev::ClockGettime;
        e.a = cpu(s, l.n, l.toks[1]);
      } else if (kw == "schedule") {
        want(l, 3);
        e.kind = Ev::Schedule;
        e.a = cpu(s, l.n, l.toks[1]);
        e.b = task(s, l.n, l.toks[2], true);
      } else if (kw == "wakeup") {
        want(l, 4);
        e.kind = Ev::Wakeup;
        e.a = cpu(s, l.n, l.toks[1]);
        e.by = by(2);
      } else if (kw == "move") {
        want(l, 5);
        e.kind = Ev::Move;
        e.a = task(s, l.n, l.toks[1], false);
        e.b = group(s, l.n, l.toks[2]);
        e.by = by(3);
      } else if (kw == "pressure") {
        want(l, 5);
        e.kind = Ev::Pressure;
        e.a = group(s, l.n, l.toks[1]);
        if (e.a == 0) throw ScriptError(l.n, l.toks[1].col, "the root group's pressure cannot be switched");
        e.b = onoff(l.n, l.toks[2]);
        e.by = by(3);
      } else if (kw == "race_tick_move") {
        want(l, 6);
        e.kind = Ev::RaceTickMove;
        e.a = cpu(s, l.n, l.toks[1]);
        e.b = task(s, l.n, l.toks[2], false);
        e.c = group(s, l.n, l.toks[3]);
        e.by = by(4);
      } else if (kw == "version" || kw == "irqtime" || kw == "variant" || kw == "cpus" || kw == "group" || kw == "task") {
        throw ScriptError(l.n, 1, fmt::format("'{}' must come before the first event", kw));
      } else {
        throw ScriptError(l.n, 1, "unknown statement '" + std::string(kw) + "'");
      }
      if (s.events.size() >= max_) throw ScriptError(l.n, 1, fmt::format("more than {} events", max_));
      s.events.push_back(e);
      ++i;
    }
    if (depth > 0) return 0;
    return i;
  }
};

}  // namespace

Script parse_script(std::string_view text, std::size_t max_events) { return Parser(text, max_events).parse(); }

std::string write_script(const Script& s) {
  std::string o = "psi v1\n";
  if (s.version) o += fmt::format("version {}\n", s.version->str());
  if (s.irqtime) o += fmt::format("irqtime {}\n", *s.irqtime ? "on" : "off");
  if (s.variant) o += fmt::format("variant {}\n", variant_name(*s.variant));
  o += fmt::format("cpus {}\n", s.cpus);
  for (std::size_t g = 1; g < s.parent.size(); ++g) o += fmt::format("group {} parent {}\n", g, s.parent[g]);
  for (std::size_t t = 0; t < s.task_group.size(); ++t) o += fmt::format("task {} group {}\n", t + 1, s.task_group[t]);
  for (const auto& e : s.events) {
    switch (e.kind) {
      case Ev::Wait: o += fmt::format("wait {}\n", e.a); break;
      case Ev::IrqEnter: o += fmt::format("irq_enter {}{}\n", e.a, e.soft ? " soft" : ""); break;
      case Ev::Irq: o += fmt::format("irq {} {}{}\n", e.a, e.b, e.soft ? " soft" : ""); break;
      case Ev::IrqExit: case Ev::Tick: case Ev::ClockGettime:
        o += fmt::format("{} {}\n", event_name(e.kind), e.a);
        break;
      case Ev::Schedule: o += fmt::format("schedule {} {}\n", e.a, e.b); break;
      case Ev::Wakeup: o += fmt::format("wakeup {} by {}\n", e.a, e.by); break;
      case Ev::Move: o += fmt::format("move {} {} by {}\n", e.a, e.b, e.by); break;
      case Ev::Pressure: o += fmt::format("pressure {} {} by {}\n", e.a, e.b ? "on" : "off", e.by); break;
      case Ev::RaceTickMove: o += fmt::format("race_tick_move {} {} {} by {}\n", e.a, e.b, e.c, e.by); break;
    }
  }
  return o;
}

PsiCfg script_cfg(const Script& s, PsiCfg base) {
  if (s.version) base.ver = *s.version;
  if (s.irqtime) base.irqtime = *s.irqtime;
  if (s.variant) base.variant = *s.variant;
  return base;
}

RunResult run_script(const Script& s, const PsiCfg& cfg, bool check) {
  Concrete d;
  RunResult r;
  r.world = make_world(d, s.cpus, s.parent, int(s.task_group.size()));
  auto& w = r.world;
  for (std::size_t t = 0; t < s.task_group.size(); ++t) w.c.tasks[t + 1].group = s.task_group[t];
  spec::Checker checker(cfg, w);
  std::vector<std::uint64_t> irq_start(s.cpus, 0);
  auto fail = [](const Event& e, const std::string& m) { return ScriptError(e.line, e.col, m); };
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const auto& e = s.events[i];
    const int cpu = int(e.a);
    spec::Checker::EventInfo info;
    info.cpu = cpu;
    for (const auto& t : w.c.tasks) info.group_before.push_back(t.group);
    info.group_before[0] = 0;
    info.curr_before = w.c.curr;
    World<Concrete> before;  // the values and the lock/pressure state (not the growing logs)
    if (check) {
      before.v = w.v;
      before.c.enabled = w.c.enabled;
      before.c.lock_owner = w.c.lock_owner;
    }
    const Costs c0 = w.c.costs;
    auto in_irq = [&](const char* what) {
      if (w.c.in_irq[cpu]) throw fail(e, fmt::format("{}: cpu {} is inside an irq", what, cpu));
    };
    switch (e.kind) {
      case Ev::Wait: w.v.now += e.a; break;
      case Ev::IrqEnter:
        in_irq("irq_enter (no nesting in this model)");
        irq_boundary(d, cfg, w, cpu, IrqClass::None);
        w.c.in_irq[cpu] = e.soft ? 2 : 1;
        irq_start[cpu] = w.v.now;
        break;
      case Ev::IrqExit:
        if (!w.c.in_irq[cpu]) throw fail(e, fmt::format("irq_exit: cpu {} is not in an irq", cpu));
        irq_boundary(d, cfg, w, cpu, w.c.in_irq[cpu] == 2 ? IrqClass::Softirq : IrqClass::Hardirq);
        if (cfg.irqtime) checker.add_irq(cpu, w.v.now - irq_start[cpu]);
        w.c.in_irq[cpu] = 0;
        break;
      case Ev::Irq:
        in_irq("irq");
        irq_boundary(d, cfg, w, cpu, IrqClass::None);
        w.v.now += e.b;
        irq_boundary(d, cfg, w, cpu, e.soft ? IrqClass::Softirq : IrqClass::Hardirq);
        if (cfg.irqtime) checker.add_irq(cpu, e.b);
        break;
      case Ev::Tick:
        info.kind = spec::Checker::EventInfo::Tick;
        sched_tick(d, cfg, w, cpu);
        break;
      case Ev::Schedule: {
        in_irq("schedule");
        const int next = int(e.b);
        for (int o = 0; o < s.cpus; ++o)
          if (o != cpu && next != 0 && w.c.curr[o] == next) throw fail(e, fmt::format("task {} is running on cpu {}", next, o));
        info.kind = spec::Checker::EventInfo::Switch;
        info.prev = w.c.curr[cpu];
        info.next = next;
        schedule(d, cfg, w, cpu, next);
        break;
      }
      case Ev::ClockGettime:
        in_irq("clock_gettime");
        if (w.c.curr[cpu] == 0) throw fail(e, fmt::format("clock_gettime: cpu {} runs the idle task", cpu));
        clock_gettime_thread(d, cfg, w, cpu);
        break;
      case Ev::Wakeup: wakeup(d, cfg, w, cpu, int(e.by)); break;
      case Ev::Move: cgroup_move(d, w, int(e.a), int(e.b), int(e.by)); break;
      case Ev::Pressure: set_pressure(d, w, int(e.a), e.b != 0, int(e.by)); break;
      case Ev::RaceTickMove:
        if (w.c.tasks[e.b].cpu != cpu) throw fail(e, fmt::format("race_tick_move: task {} last ran on cpu {}, not {}", e.b, w.c.tasks[e.b].cpu, cpu));
        if (int(e.by) == cpu) throw fail(e, "race_tick_move: the move must come from another cpu");
        info.kind = spec::Checker::EventInfo::Tick;
        race_tick_move(d, cfg, w, cpu, int(e.b), int(e.c), int(e.by));
        break;
    }
    auto& k = r.per_kind[std::string(event_name(e.kind))];
    k.calls++;
    Costs dc;
    dc.clock_reads = w.c.costs.clock_reads - c0.clock_reads;
    dc.irq_reads = w.c.costs.irq_reads - c0.irq_reads;
    dc.levels = w.c.costs.levels - c0.levels;
    dc.seq_sections = w.c.costs.seq_sections - c0.seq_sections;
    dc.psi_calls = w.c.costs.psi_calls - c0.psi_calls;
    k.costs += dc;
    if (check) {
      if (auto v = checker.after(before, w, info)) {
        r.violation = v;
        r.event = i;
        r.line = e.line;
        break;
      }
    }
  }
  r.accrued = checker.accrued();
  for (int c = 0; c < s.cpus; ++c) r.charged.push_back(check ? checker.charged(c) : 0);
  r.max_pending = checker.max_pending();
  return r;
}

nlohmann::ordered_json RunResult::json(const PsiCfg& cfg) const {
  nlohmann::ordered_json j;
  j["version"] = cfg.ver.str();
  j["irqtime"] = cfg.irqtime;
  j["variant"] = std::string(variant_name(cfg.variant));
  if (violation) {
    j["violation"] = {{"invariant", violation->invariant}, {"message", violation->message}, {"event", event}, {"line", line}};
  } else {
    j["violation"] = nullptr;
  }
  auto& pk = j["per_call"];
  pk = nlohmann::ordered_json::object();
  for (const auto& entry : per_kind) {  // (no structured binding: clang 14 cannot capture one)
    const auto& name = entry.first;
    const auto& k = entry.second;
    auto per = [&](std::uint64_t x) { return k.calls ? double(x) / double(k.calls) : 0.0; };
    pk[name] = {{"calls", k.calls},
                {"clock_reads", per(k.costs.clock_reads)},
                {"irq_time_reads", per(k.costs.irq_reads)},
                {"cgroup_levels", per(k.costs.levels)},
                {"seq_write_sections", per(k.costs.seq_sections)},
                {"psi_account_irqtime_calls", per(k.costs.psi_calls)}};
  }
  j["irq_accrued_ns"] = accrued;
  j["irq_charged_ns"] = charged;
  j["max_pending_ns"] = max_pending;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (std::size_t g = 0; g < world.v.gc.size(); ++g) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (const auto& c : world.v.gc[g]) row.push_back(c.irq_full);
    groups.push_back(row);
  }
  j["irq_full_ns"] = groups;  // [group][cpu]
  return j;
}

std::string seed_script_text(unsigned calls_per_tick, unsigned ticks) {
  std::string o =
      "psi v1\n"
      "# Seed scenario (52b1364ba0b1 / ddae0ca2a8fe): a task three cgroup levels deep (root,\n"
      "# a slice, its leaf) calls clock_gettime(CLOCK_THREAD_CPUTIME_ID) in a loop, 243 ns apart\n"
      "# (the 5.10 / 6.1+fix cost per call), then sleeps to the next tick (HZ=250); a 2 us device\n"
      "# irq once per tick.\n"
      "cpus 1\n"
      "group 1 parent 0\n"
      "group 2 parent 1\n"
      "task 1 group 2\n"
      "schedule 0 1\n";
  const std::uint64_t rest = 4'000'000 - std::min<std::uint64_t>(4'000'000 - 2000, 243ull * calls_per_tick) - 2000;
  o += fmt::format("repeat {}\n  tick 0\n  irq 0 2000\n  repeat {}\n    wait 243\n    clock_gettime 0\n  end\n  wait {}\nend\n",
                   ticks, calls_per_tick, rest);
  return o;
}

}  // namespace kacct::model::psi
