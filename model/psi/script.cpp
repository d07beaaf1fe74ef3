// PSI event scripts: the grammar on the script runtime, and the runner (see script.hpp).
#include "model/psi/script.hpp"

#include <fmt/format.h>

namespace kacct::model::psi {

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::Faithful: return "faithful";
    case Variant::NoLock: return "no-lock";
    case Variant::DoubleCount: return "double-count";
    case Variant::LostDelta: return "lost-delta";
    case Variant::NoNegGuard: return "no-neg-guard";
    case Variant::NoRecordTimes: return "no-record-times";
  }
  return "?";
}
bool parse_variant(std::string_view s, Variant& out) {
  for (auto v : {Variant::Faithful, Variant::NoLock, Variant::DoubleCount, Variant::LostDelta, Variant::NoNegGuard,
                 Variant::NoRecordTimes})
    if (variant_name(v) == s) {
      out = v;
      return true;
    }
  return false;
}

namespace {

using Grammar = script::Grammar<Script, Event>;
using script::Arg;

std::uint64_t cpu_of(const Script& s, const Arg& a) {
  const auto v = script::number(a, 0, UINT64_MAX, "CPU");
  if (v >= std::uint64_t(s.cpus)) a.fail(fmt::format("no cpu {} (cpus {})", v, s.cpus));
  return v;
}
std::uint64_t group_of(const Script& s, const Arg& a) {
  const auto v = script::number(a, 0, UINT64_MAX, "GROUP");
  if (v >= s.parent.size()) a.fail(fmt::format("no group {}", v));
  return v;
}
std::uint64_t task_of(const Script& s, const Arg& a, bool idle_ok) {
  const auto v = script::number(a, 0, UINT64_MAX, "TASK");
  if (v > s.task_group.size() || (v == 0 && !idle_ok))
    a.fail(fmt::format("no task {}{}", v, idle_ok ? "" : " (0 is the idle task)"));
  return v;
}

Grammar::Decl declare() {
  Grammar::Decl g;
  g.magic = "psi v1";
  g.header = {
      {"version", "MAJOR.MINOR", [](Script& s, std::span<const Arg> a) { s.version = script::version(a[0]); }},
      {"irqtime", "SWITCH", [](Script& s, std::span<const Arg> a) { s.irqtime = script::on_off(a[0]); }},
      {"variant", "NAME",
       [](Script& s, std::span<const Arg> a) {
         const std::string_view names[] = {
             variant_name(Variant::Faithful),    variant_name(Variant::NoLock),
             variant_name(Variant::DoubleCount), variant_name(Variant::LostDelta),
             variant_name(Variant::NoNegGuard),  variant_name(Variant::NoRecordTimes)};  // in enum order
         s.variant = Variant(script::choice(a[0], names, "variant"));
       }},
      {"cpus", "N", [](Script& s, std::span<const Arg> a) { s.cpus = int(script::number(a[0], 1, kMaxCpus, "cpus")); },
       true},
      {"group", "G parent P",
       [](Script& s, std::span<const Arg> a) {
         const auto g = script::number(a[0], 0, kMaxGroups - 1, "G");
         if (g != s.parent.size()) a[0].fail(fmt::format("groups are numbered in order: expected {}", s.parent.size()));
         const auto p = script::number(a[1], 0, kMaxGroups - 1, "P");
         if (p >= g) a[1].fail("parent must be an earlier group");
         s.parent.push_back(int(p));
       }},
      {"task", "T group G",
       [](Script& s, std::span<const Arg> a) {
         const auto t = script::number(a[0], 0, kMaxTasks, "T");
         if (t != s.task_group.size() + 1)
           a[0].fail(fmt::format("tasks are numbered in order from 1: expected {}", s.task_group.size() + 1));
         s.task_group.push_back(int(group_of(s, a[1])));
       }},
  };
  g.operands = {
      {"CPU", cpu_of},
      {"NS", [](const Script&, const Arg& a) { return script::number(a, 0, std::uint64_t{1} << 40, "NS"); }},
      {"TASK", [](const Script& s, const Arg& a) { return task_of(s, a, false); }},
      {"NEXT", [](const Script& s, const Arg& a) { return task_of(s, a, true); }},  // 0: the idle task
      {"GROUP", group_of},
      {"CHILD",  // a group other than the root
       [](const Script& s, const Arg& a) {
         const auto v = group_of(s, a);
         if (v == 0) a.fail("the root group's pressure cannot be switched");
         return v;
       }},
      {"SWITCH", [](const Script&, const Arg& a) -> std::uint64_t { return script::on_off(a); },
       [](std::uint64_t v) { return std::string(v ? "on" : "off"); }},
  };
  // The first name of a kind is the one written.
  g.events = {
      {"wait", int(Ev::Wait), "NS"},
      {"irq_enter", int(Ev::IrqEnter), "CPU [soft]"},
      {"irq_exit", int(Ev::IrqExit), "CPU"},
      {"irq", int(Ev::Irq), "CPU NS [soft]"},
      {"tick", int(Ev::Tick), "CPU"},
      {"schedule", int(Ev::Schedule), "CPU NEXT"},
      {"idle", int(Ev::Schedule), "CPU"},  // = schedule CPU 0
      {"clock_gettime", int(Ev::ClockGettime), "CPU"},
      {"wakeup", int(Ev::Wakeup), "CPU by CPU"},
      {"move", int(Ev::Move), "TASK GROUP by CPU"},
      {"pressure", int(Ev::Pressure), "CHILD SWITCH by CPU"},
      {"race_tick_move", int(Ev::RaceTickMove), "CPU TASK GROUP by CPU"},
  };
  // Operand values in signature order: a, b, c by position, `by` after the literal, soft last.
  g.make = [](int kind, std::span<const std::uint64_t> v) {
    Event e;
    e.kind = Ev(kind);
    switch (e.kind) {
      case Ev::Wait:
      case Ev::IrqExit:
      case Ev::Tick:
      case Ev::ClockGettime: e.a = v[0]; break;
      case Ev::IrqEnter:
        e.a = v[0];
        e.soft = v[1];
        break;
      case Ev::Irq:
        e.a = v[0];
        e.b = v[1];
        e.soft = v[2];
        break;
      case Ev::Schedule:
        e.a = v[0];
        e.b = v.size() > 1 ? v[1] : 0;
        break;
      case Ev::Wakeup:
        e.a = v[0];
        e.by = v[1];
        break;
      case Ev::Move:
      case Ev::Pressure:
        e.a = v[0];
        e.b = v[1];
        e.by = v[2];
        break;
      case Ev::RaceTickMove:
        e.a = v[0];
        e.b = v[1];
        e.c = v[2];
        e.by = v[3];
        break;
    }
    return e;
  };
  g.kind_of = [](const Event& e) { return int(e.kind); };
  g.values = [](const Event& e) -> std::vector<std::uint64_t> {
    switch (e.kind) {
      case Ev::Wait:
      case Ev::IrqExit:
      case Ev::Tick:
      case Ev::ClockGettime: return {e.a};
      case Ev::IrqEnter: return {e.a, e.soft};
      case Ev::Irq: return {e.a, e.b, e.soft};
      case Ev::Schedule: return {e.a, e.b};
      case Ev::Wakeup: return {e.a, e.by};
      case Ev::Move:
      case Ev::Pressure: return {e.a, e.b, e.by};
      case Ev::RaceTickMove: return {e.a, e.b, e.c, e.by};
    }
    return {};
  };
  g.write_header = [](const Script& s, std::string& o) {
    if (s.version) o += fmt::format("version {}\n", s.version->str());
    if (s.irqtime) o += fmt::format("irqtime {}\n", *s.irqtime ? "on" : "off");
    if (s.variant) o += fmt::format("variant {}\n", variant_name(*s.variant));
    o += fmt::format("cpus {}\n", s.cpus);
    for (std::size_t g = 1; g < s.parent.size(); ++g) o += fmt::format("group {} parent {}\n", g, s.parent[g]);
    for (std::size_t t = 0; t < s.task_group.size(); ++t)
      o += fmt::format("task {} group {}\n", t + 1, s.task_group[t]);
  };
  return g;
}
const Grammar& grammar() {
  static const Grammar g(declare());
  return g;
}

}  // namespace

std::string_view event_name(Ev e) { return grammar().name_of(int(e)); }

script::Result<Script> parse_script(std::string_view text, std::size_t max_events) {
  return grammar().parse(text, max_events);
}
std::string write_script(const Script& s) { return grammar().write(s); }

PsiCfg script_cfg(const Script& s, PsiCfg base) {
  if (s.version) base.ver = *s.version;
  if (s.irqtime) base.irqtime = *s.irqtime;
  if (s.variant) base.variant = *s.variant;
  return base;
}

namespace {
// before <- w's values, pressure flags and lock owners, both shaped alike (the same run).
void copy_values(World<Concrete>& before, const World<Concrete>& w) {
  before.v.now = w.v.now;
  for (std::size_t c = 0; c < w.v.cpu.size(); ++c) before.v.cpu[c] = w.v.cpu[c];
  for (std::size_t g = 0; g < w.v.gc.size(); ++g) {
    const auto* from = w.v.gc[g].data();
    auto* to = before.v.gc[g].data();
    for (std::size_t c = 0; c < w.v.gc[g].size(); ++c) to[c] = from[c];
  }
  for (std::size_t g = 0; g < w.c.enabled.size(); ++g) before.c.enabled[g] = w.c.enabled[g];
  for (std::size_t c = 0; c < w.c.lock_owner.size(); ++c) before.c.lock_owner[c] = w.c.lock_owner[c];
}
}  // namespace

RunResult run_script(const Script& s, const PsiCfg& cfg_in, bool check, bool incremental) {
  const PsiCfg cfg = PsiCfg(cfg_in).resolve();  // the version's facts asked of the table once
  Concrete d;
  RunResult r;
  r.world = make_world(d, s.cpus, s.parent, int(s.task_group.size()));
  auto& w = r.world;
  for (std::size_t t = 0; t < s.task_group.size(); ++t) w.c.tasks[t + 1].group = s.task_group[t];
  spec::psi::Checker checker(cfg, w);
  checker.set_incremental(incremental);
  std::vector<std::uint64_t> irq_start(s.cpus, 0);
  // One event: why it cannot happen (checked before it changes anything), or nothing.
  auto step = [&](const Event& e, spec::psi::Checker::EventInfo& info) -> std::optional<std::string> {
    const int cpu = int(e.a);
    const bool in_irq =
        (e.kind == Ev::IrqEnter || e.kind == Ev::Irq || e.kind == Ev::Schedule || e.kind == Ev::ClockGettime) &&
        w.c.in_irq[cpu];
    if (in_irq)
      return fmt::format("cpu {} is inside an irq{}", cpu,
                         e.kind == Ev::IrqEnter ? " (irqs do not nest in this model)" : "");
    switch (e.kind) {
      case Ev::Wait: w.v.now += e.a; break;
      case Ev::IrqEnter:
        irq_boundary(d, cfg, w, cpu, IrqClass::None);
        w.c.in_irq[cpu] = e.soft ? 2 : 1;
        irq_start[cpu] = w.v.now;
        break;
      case Ev::IrqExit:
        if (!w.c.in_irq[cpu]) return fmt::format("cpu {} is not in an irq", cpu);
        irq_boundary(d, cfg, w, cpu, w.c.in_irq[cpu] == 2 ? IrqClass::Softirq : IrqClass::Hardirq);
        if (cfg.irqtime) checker.add_irq(cpu, w.v.now - irq_start[cpu], w.c.curr[cpu] == 0);
        w.c.in_irq[cpu] = 0;
        break;
      case Ev::Irq:
        irq_boundary(d, cfg, w, cpu, IrqClass::None);
        w.v.now += e.b;
        irq_boundary(d, cfg, w, cpu, e.soft ? IrqClass::Softirq : IrqClass::Hardirq);
        if (cfg.irqtime) checker.add_irq(cpu, e.b, w.c.curr[cpu] == 0);
        break;
      case Ev::Tick:
        info.kind = spec::psi::Checker::EventInfo::Tick;
        info.rq_clock.push_back(cpu);
        sched_tick(d, cfg, w, cpu);
        break;
      case Ev::Schedule: {
        const int next = int(e.b);
        for (int o = 0; o < s.cpus; ++o)
          if (o != cpu && next != 0 && w.c.curr[o] == next) return fmt::format("task {} is running on cpu {}", next, o);
        info.kind = spec::psi::Checker::EventInfo::Switch;
        info.prev = w.c.curr[cpu];
        info.next = next;
        info.rq_clock.push_back(cpu);
        schedule(d, cfg, w, cpu, next);
        break;
      }
      case Ev::ClockGettime:
        if (w.c.curr[cpu] == 0) return fmt::format("cpu {} runs the idle task", cpu);
        info.rq_clock.push_back(cpu);
        clock_gettime_thread(d, cfg, w, cpu);
        break;
      case Ev::Wakeup:
        info.rq_clock.push_back(cpu);
        wakeup(d, cfg, w, cpu, int(e.by));
        break;
      case Ev::Move: cgroup_move(d, w, int(e.a), int(e.b), int(e.by)); break;
      case Ev::Pressure: set_pressure(d, w, int(e.a), e.b != 0, int(e.by)); break;
      case Ev::RaceTickMove:
        if (w.c.tasks[e.b].cpu != cpu)
          return fmt::format("task {} last ran on cpu {}, not {}", e.b, w.c.tasks[e.b].cpu, cpu);
        if (int(e.by) == cpu) return std::string("the move must come from another cpu");
        info.kind = spec::psi::Checker::EventInfo::Tick;
        info.rq_clock.push_back(cpu);  // the tick's (the NoLock overlap's second one is 6.10+ only)
        race_tick_move(d, cfg, w, cpu, int(e.b), int(e.c), int(e.by));
        break;
    }
    return std::nullopt;
  };
  // Per-event scratch kept across events, shaped once (the numbers of CPUs, groups and tasks
  // are the script's): copied element by element, no allocation and no library copy per
  // event; and each kind's cost entry found once. Only the checker reads `before` and the
  // event's truth (the groups and rq->curr before it).
  spec::psi::Checker::EventInfo info;
  info.group_before.assign(w.c.tasks.size(), 0);
  info.curr_before.assign(w.c.curr.size(), 0);
  World<Concrete> before;  // the values and the lock/pressure state (not the growing logs)
  before.v = w.v;
  before.c.enabled = w.c.enabled;
  before.c.lock_owner = w.c.lock_owner;
  std::vector<KindCosts*> kind_costs;
  static_cast<script::RunStatus&>(r) = grammar().run(s, [&](std::size_t, const Event& e) {
    info.kind = spec::psi::Checker::EventInfo::Other;
    info.cpu = int(e.a);
    info.prev = info.next = 0;
    info.rq_clock.clear();  // as a fresh EventInfo: only the event's own clock updates
    w.c.gc_writes.clear();  // the records this event writes (the checker's; bounded per event)
    if (check) {
      for (std::size_t t = 1; t < w.c.tasks.size(); ++t) info.group_before[t] = w.c.tasks[t].group;
      for (std::size_t c = 0; c < w.c.curr.size(); ++c) info.curr_before[c] = w.c.curr[c];
      copy_values(before, w);
    }
    const Costs c0 = w.c.costs;
    if (auto why = step(e, info)) return script::impossible(std::move(*why));
    const auto ki = std::size_t(e.kind);
    if (ki >= kind_costs.size()) kind_costs.resize(ki + 1, nullptr);
    if (!kind_costs[ki]) kind_costs[ki] = &r.per_kind[std::string(event_name(e.kind))];
    auto& k = *kind_costs[ki];
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
        return script::violated();
      }
    }
    return script::ok();
  });
  r.accrued = checker.accrued();
  for (int c = 0; c < s.cpus; ++c) r.charged.push_back(check ? checker.charged(c) : 0);
  r.max_pending = checker.max_pending();
  r.idle_irq_charged = checker.idle_irq_charged();
  r.idle_irq_finding = checker.idle_irq_finding();
  return r;
}

nlohmann::ordered_json RunResult::json(const PsiCfg& cfg) const {
  nlohmann::ordered_json j;
  j["version"] = cfg.ver.str();
  j["irqtime"] = cfg.irqtime;
  j["variant"] = std::string(variant_name(cfg.variant));
  if (violation) {
    j["violation"] = {{"invariant", violation->invariant},
                      {"message", violation->message},
                      {"event", failed_at.value_or(0)},
                      {"line", line}};
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
  j["idle_irq_charged_ns"] = idle_irq_charged;  // finding: irq time from idle charged to a task's group
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
  o += fmt::format(
      "repeat {}\n  tick 0\n  irq 0 2000\n  repeat {}\n    wait 243\n    clock_gettime 0\n  end\n  wait {}\nend\n",
      ticks, calls_per_tick, rest);
  return o;
}

}  // namespace kacct::model::psi
