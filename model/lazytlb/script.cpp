// The lazy-TLB event-script format on the script runtime, and the checking runner (script.hpp).
#include "model/lazytlb/script.hpp"

#include "model/trace/tokens.hpp"

namespace kacct::model::lazytlb {

namespace {
constexpr std::array<std::string_view, kNumOps> kOpNames = {"switch", "finish", "idle",    "exit",  "exec",  "fork",
                                                            "forkvm", "use",    "unuse",   "mmget", "mmput", "mmgrab",
                                                            "mmdrop", "flush",  "offline", "dead",  "online"};
// Which ops take a second operand, and of which kind.
enum class ArgKind { None, Task, Mm };
ArgKind arg_kind(Op op) {
  switch (op) {
    case Op::Switch:
    case Op::Fork:
    case Op::ForkVm: return ArgKind::Task;
    case Op::Use:
    case Op::MmGet:
    case Op::MmPut:
    case Op::MmGrab:
    case Op::MmDrop:
    case Op::Flush: return ArgKind::Mm;
    default: return ArgKind::None;
  }
}

using Grammar = script::Grammar<Script, Event>;
using script::Arg;

Grammar::Decl declare() {
  Grammar::Decl g;
  g.magic = "lazytlb 1";
  g.events_marker = "events";
  g.required = {"version"};
  auto size = [](int Sizes::*field, long hi, std::string_view name) {
    return [=](Script& s, std::span<const Arg> a) {
      s.sizes.*field = int(script::number(a[0], 1, std::uint64_t(hi), name));
    };
  };
  g.header = {
      {"cpus", "N", size(&Sizes::cpus, kMaxCpus, "cpus"), true},
      {"tasks", "N", size(&Sizes::tasks, 64, "tasks"), true},
      {"mms", "N", size(&Sizes::mms, 16, "mms"), true},
      {"arch", "NAME",
       [](Script& s, std::span<const Arg> a) {
         const std::string_view names[] = {arch_name(Arch::Generic), arch_name(Arch::PpcRadix),
                                           arch_name(Arch::PpcHash)};
         s.arch = Arch(script::choice(a[0], names, "arch"));
       },
       true},
      {"version", "MAJOR.MINOR", [](Script& s, std::span<const Arg> a) { s.version = script::version(a[0]); }, true},
      {"debug-shoot-lazies", "", [](Script& s, std::span<const Arg>) { s.debug_shoot_lazies = true; }, true},
      {"mutant", "NAME",
       [](Script& s, std::span<const Arg> a) {
         s.mutants.emplace_back(kMutants[script::choice(a[0], kMutants, "mutant")]);
       }},
  };
  auto below = [](int Sizes::*field, std::string_view what) {
    return [=](const Script& s, const Arg& a) { return script::number(a, 0, std::uint64_t(s.sizes.*field - 1), what); };
  };
  g.operands = {
      {"CPU", below(&Sizes::cpus, "CPU")}, {"TASK", below(&Sizes::tasks, "TASK")}, {"MM", below(&Sizes::mms, "MM")}};
  for (int i = 0; i < kNumOps; ++i) {
    const auto k = arg_kind(Op(i));
    g.events.push_back({kOpNames[i], i, k == ArgKind::None ? "CPU" : k == ArgKind::Task ? "CPU TASK" : "CPU MM"});
  }
  g.make = [](int kind, std::span<const std::uint64_t> v) {
    return Event{Op(kind), std::int16_t(v[0]), std::int16_t(v.size() > 1 ? v[1] : 0)};
  };
  g.kind_of = [](const Event& e) { return int(e.op); };
  g.values = [](const Event& e) {
    std::vector<std::uint64_t> v{std::uint64_t(e.cpu)};
    if (arg_kind(e.op) != ArgKind::None) v.push_back(std::uint64_t(e.arg));
    return v;
  };
  g.write_header = [](const Script& s, std::string& o) {
    o += "cpus " + std::to_string(s.sizes.cpus) + "\n";
    o += "tasks " + std::to_string(s.sizes.tasks) + "\n";
    o += "mms " + std::to_string(s.sizes.mms) + "\n";
    o += "arch " + std::string(arch_name(s.arch)) + "\n";
    if (s.debug_shoot_lazies) o += "debug-shoot-lazies\n";
    for (const auto& m : s.mutants) o += "mutant " + m + "\n";
    o += "version " + s.version.str() + "\n";
  };
  return g;
}
const Grammar& grammar() {
  static const Grammar g(declare());
  return g;
}
}  // namespace

std::string_view op_name(Op op) { return kOpNames[int(op)]; }
std::string event_text(const Event& e) { return grammar().event_text(e); }

// The column of the CPU operand of an event on source line `line` (1 if not found).
std::uint32_t cpu_col(std::string_view text, std::uint32_t line) {
  std::uint32_t n = 1;
  std::size_t i = 0;
  while (n < line && i < text.size()) {
    if (text[i++] == '\n') ++n;
  }
  const auto end = text.find('\n', i);
  const auto toks = text::split(text.substr(i, end == std::string_view::npos ? text.npos : end - i), true);
  return toks.size() >= 2 ? toks[1].col : 1;
}

script::Result<Script> parse_script(std::string_view text) {
  auto r = grammar().parse(text, kMaxEvents);
  if (!r) return r;
  // Hotplug events follow offline -> dead -> online per CPU, starting online; CPU 0 stays. The
  // order is fixed by the text alone (repeat blocks expanded), so a wrong one is a parse error.
  const Script& s = r.value();
  std::vector<Hp> hp(std::size_t(s.sizes.cpus), Hp::Online);
  std::vector<std::uint32_t> since(hp.size(), 0);
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const Event& e = s.events[i];
    if (e.op != Op::Offline && e.op != Op::Dead && e.op != Op::Online) continue;
    const auto c = std::size_t(e.cpu);
    const std::uint32_t line = script::line_of(s, i);
    const std::string cpu = "CPU " + std::to_string(c);
    const std::string at = since[c] ? " (line " + std::to_string(since[c]) + ")" : "";
    std::string why;
    if (e.op == Op::Offline && c == 0)
      why = "CPU 0 is the boot CPU: it does not go offline";
    else if (e.op == Op::Offline && hp[c] != Hp::Online)
      why = cpu + " is already offline" + at;
    else if (e.op == Op::Dead && hp[c] != Hp::Dying)
      why = cpu + (hp[c] == Hp::Dead ? " is already dead" + at
                                     : " is not going offline (no 'offline " + std::to_string(c) + "' before)");
    else if (e.op == Op::Online && hp[c] != Hp::Dead)
      why = cpu + (hp[c] == Hp::Online ? " is online" : " has not died yet ('dead " + std::to_string(c) + "' first)");
    if (!why.empty()) return script::ParseError{line, line ? cpu_col(text, line) : 0, why};
    hp[c] = e.op == Op::Offline ? Hp::Dying : e.op == Op::Dead ? Hp::Dead : Hp::Online;
    since[c] = line;
  }
  return r;
}
std::string write_script(const Script& s) { return grammar().write(s); }

namespace {
// The step and its obligations.
template <bool ListWrites>
void obliged_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                  std::vector<spec::lazytlb::Violation>& bad) {
  Concrete d;
  Decider<Concrete> dec;
  log.reset();
  Stepper<Concrete, ListWrites>(d, cfg, w, cost, log, dec).run(e);
  for (auto site : d.failed) bad.push_back({"lazy_tlb.obligation", std::string(site)});
}
}  // namespace

bool checked_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                  std::vector<spec::lazytlb::Violation>& bad) {
  obliged_step<false>(cfg, w, e, cost, log, bad);
  auto v = spec::lazytlb::check(w, cfg, log);
  bad.insert(bad.end(), v.begin(), v.end());
  return bad.empty();
}

bool transition_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                     std::vector<spec::lazytlb::Violation>& bad) {
  obliged_step<true>(cfg, w, e, cost, log, bad);
  spec::lazytlb::detail::check_log(log, bad);  // check()'s last part: what the step did
  return bad.empty();
}

bool checked_step(const Cfg& cfg, World<Concrete>& w, const Event& e, Costs& cost, StepLog& log,
                  spec::lazytlb::Checker& checker, std::vector<spec::lazytlb::Violation>& bad) {
  obliged_step<true>(cfg, w, e, cost, log, bad);
  checker.check(w, log, bad);
  return bad.empty();
}

RunResult run_script(const Script& s) {
  RunResult r;
  const Cfg cfg = s.cfg();
  r.world = initial(s.sizes);
  StepLog log;
  spec::lazytlb::Checker checker(r.world, cfg);
  std::vector<spec::lazytlb::Violation> bad;
  static_cast<script::RunStatus&>(r) = grammar().run(s, [&](std::size_t, const Event& e) {
    if (!why_not_enabled(r.world, cfg, e).empty()) return script::impossible(not_enabled(r.world, cfg, e));
    bad.clear();
    if (!checked_step(cfg, r.world, e, r.costs, log, checker, bad)) {
      r.violations = std::move(bad);
      return script::violated();
    }
    const int z = checker.zombies();
    r.max_zombies = std::max(r.max_zombies, z);
    r.zombie_steps += z > 0;
    return script::ok();
  });
  return r;
}

}  // namespace kacct::model::lazytlb
