#include "model/sim/machine_impl.hpp"

#include <stdexcept>

#include "arch/registry.hpp"
#include "model/trace/tracker.hpp"
#include "spec/invariants.hpp"

namespace kacct::sim {

ModelCfg model_cfg(const arch::CpuFacts& cpu, const arch::Config& cfg) {
  ModelCfg m;
  m.acct = cfg.acct;
  m.tick.irq_time = cfg.irq_time;
  m.tick.steal = cfg.steal;
  m.tick.tick_nsec = arch::tick_nsec(cfg.hz);
  m.tick.steal_drop_excess = arch::applied("108ad0999085", KACCT_MUTANT(806, cfg.version, cfg.version.series()));
  m.adjust = model::adjust_cfg(cfg.version, KACCT_MUTANT(728, cpu.exact_mul_u64_u64_div_u64, false));
  with_backend(cfg.acct, [&](auto b) { decltype(b)::configure(m, cpu, cfg); });
  return m;
}

void apply_fix(ModelCfg& m, std::string_view id) {
  const auto p = arch::find_patch(id);
  if (!p || !p->local || p->id != id) throw std::invalid_argument("'" + std::string(id) + "' is not a kacct-local fix");
  if (id == "kacct-gen-fork-residues" && m.acct == arch::Accounting::Gen) {
    m.gen.fork_copies_residues = false;
    return;
  }
  if (id == "kacct-ppc-idle-steal" && m.acct == arch::Accounting::Native) {
    m.native.idle_steal_out = true;
    return;
  }
  if (id == "kacct-ppc-user-exit-split" && m.acct == arch::Accounting::Native) {
    m.native.split_at_user_exit = true;
    return;
  }
  // 77baa5bafcbe's clamp on the 4.8 .. 5.8 cputime_adjust with the scale_stime() loop
  if (id == "kacct-scale-stime-clamp" && m.adjust.era == model::AdjustEra::ClampAlways &&
      m.adjust.div == model::ScaleDiv::Loop32) {
    m.adjust.era = model::AdjustEra::ClampToRtime;
    return;
  }
  throw std::invalid_argument("the fix " + std::string(id) + " does not apply to this configuration's model (" +
                              std::string(p->why) + ")");
}

Compiler::Compiler(const trace::Header& h) : tr_(h) {
  p_.header = h;
  const std::uint32_t ncpus = h.ncpus;
  for (std::uint32_t c = 0; c < ncpus; ++c) {
    TaskInfo idle{0, 0, "swapper/" + std::to_string(c), true, false, 0, 0};
    p_.tasks.push_back(idle);
  }
  groups_.emplace(0, 0);
  for (const auto& d : h.tasks) add_task(d.tid, d.pid, d.kthread, d.comm, d.nice);
  p_.ngroups = std::uint32_t(groups_.size());
}

void Compiler::add_task(std::uint64_t tid, std::uint64_t pid, bool kthread, const std::string& comm, int nice) {
  TaskInfo ti{tid, pid, comm, kthread, kthread && comm.rfind("ksoftirqd/", 0) == 0, nice, 0};
  auto [it, fresh] = groups_.emplace(pid, std::uint32_t(groups_.size()));
  ti.group = it->second;
  p_.tasks.push_back(std::move(ti));
}

std::optional<trace::Error> Compiler::add(const trace::Event& e) {
  if (auto err = tr_.apply(e)) return err;
  auto& p = p_;
  CEvent ce{e.ts, 0, std::uint16_t(e.cpu), e.kind, 0};
  // Dense task indices: CPU c's idle task is c, the tracker's task k is ncpus + k (both number
  // the declared tasks, then the forks, in order), so no tid is looked up here.
  const std::uint32_t ncpus = p.header.ncpus;
  const auto dense = [&](const trace::TaskState* t) -> std::uint32_t { return t ? ncpus + t->index : e.cpu; };
  switch (e.kind) {
    case Kind::Switch:
      // prev's index is the CPU's current task; the machine knows it. arg = next.
      ce.arg = dense(tr_.named());
      ce.flags =
          std::uint8_t((e.prev_state == trace::PrevState::Dead ? 1 : 0) | (e.iowait ? 2 : 0) | (e.switch_gap ? 4 : 0));
      if (e.switch_gap) {  // side vector, filled on the first gap seen
        p.gap.resize(p.events.size() + 1);
        p.gap.back() = *e.switch_gap;
      }
      break;
    case Kind::Wakeup: ce.arg = dense(tr_.named()); break;
    case Kind::Fork: {
      const auto* child = tr_.named();
      add_task(e.b, child->pid, child->kthread, child->comm, child->nice);
      p.ngroups = std::uint32_t(groups_.size());
      ce.arg = dense(child);
      break;
    }
    case Kind::Steal:
      ce.arg = std::uint32_t(p.wide.size());
      p.wide.push_back(e.a);
      break;
    case Kind::Runtime:  // arg = index of (task, ns) in wide
      ce.arg = std::uint32_t(p.wide.size());
      p.wide.push_back(dense(tr_.named()));
      p.wide.push_back(e.b);
      break;
    case Kind::Read: {
      // the target: the task named, else the reader (a task: reads need one)
      ce.arg = std::uint32_t(p.reads.size());
      p.reads.push_back({e.read_kind, dense(e.a != 0 ? tr_.named() : &tr_.current(e.cpu)), e.read_id, e.line});
      break;
    }
    default: break;
  }
  if (e.hw.tb || e.hw.purr || e.hw.spurr) {  // side vectors, filled on the first counter seen
    p.hw.resize(p.events.size() + 1);
    p.hw_mask.resize(p.events.size() + 1);
    p.hw.back() = {e.hw.tb.value_or(0), e.hw.purr.value_or(0), e.hw.spurr.value_or(0)};
    p.hw_mask.back() = std::uint8_t((e.hw.tb ? 1 : 0) | (e.hw.purr ? 2 : 0) | (e.hw.spurr ? 4 : 0));
  }
  p.events.push_back(ce);
  p.lines.push_back(e.line);
  return std::nullopt;
}

Program& Compiler::program() {
  // The side vectors cover every event of the chunk once one is filled.
  if (!p_.hw.empty()) {
    p_.hw.resize(p_.events.size());
    p_.hw_mask.resize(p_.events.size());
  }
  if (!p_.gap.empty()) p_.gap.resize(p_.events.size());
  return p_;
}

void Compiler::next_chunk() {
  p_.base += p_.events.size();
  p_.events.clear();
  p_.lines.clear();
  p_.wide.clear();
  p_.reads.clear();
  p_.hw.clear();
  p_.hw_mask.clear();
  p_.gap.clear();
}

void Compiler::begin_batch() {
  mark_ = {p_.events.size(), p_.wide.size(), p_.reads.size(), p_.tasks.size(), p_.ngroups};
  tr_.begin_batch();
}
void Compiler::commit() { tr_.commit(); }
void Compiler::rollback() {
  tr_.rollback();
  const auto n = mark_.events;
  p_.events.resize(n);
  p_.lines.resize(n);
  if (p_.hw.size() > n) p_.hw.resize(n);
  if (p_.hw_mask.size() > n) p_.hw_mask.resize(n);
  if (p_.gap.size() > n) p_.gap.resize(n);
  p_.wide.resize(mark_.wide);
  p_.reads.resize(mark_.reads);
  p_.tasks.resize(mark_.tasks);
  std::erase_if(groups_, [&](const auto& g) { return g.second >= mark_.ngroups; });
  p_.ngroups = mark_.ngroups;
}

// flatten: Compiler::add() inlined into the loop (called once per event it costs ~10% more
// instructions than 7b75005's loop, which had the step inline; bench_parse BM_Compile).
[[gnu::flatten]] trace::Result<Program> compile(const trace::Trace& t) {
  if (auto e = trace::check_header(t.header)) return *e;
  if (t.header.ncpus > 0xffff)
    return trace::Error{0, 0, "ncpus above 65535 is not supported by the simulator", "ncpus"};
  Compiler c(t.header);
  c.program().events.reserve(t.events.size());
  c.program().lines.reserve(t.events.size());
  for (const auto& e : t.events)
    if (auto err = c.add(e)) return *err;
  return std::move(c.program());
}

RunResult run(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  std::optional<RunResult> r;
  if (!with_backend(cfg.acct, [&](auto b) { r = decltype(b)::run(p, cfg, o); }))
    throw std::logic_error("kacct: no simulator backend for this accounting mode yet");
  return std::move(*r);
}

LiveRun::LiveRun(const Program& p, const ModelCfg& cfg, const RunOptions& o) {
  if (!with_backend(cfg.acct, [&](auto b) { m_ = decltype(b)::live(p, cfg, o); }))
    throw std::logic_error("kacct: no simulator backend for this accounting mode yet");
}
LiveRun::~LiveRun() = default;
LiveRun::LiveRun(LiveRun&&) noexcept = default;
LiveRun& LiveRun::operator=(LiveRun&&) noexcept = default;
bool LiveRun::advance() { return m_->advance(); }
bool LiveRun::stopped() const { return m_->stopped(); }
const RunResult& LiveRun::partial() const { return m_->partial(); }
RunResult& LiveRun::partial() { return m_->partial(); }
BackendResult LiveRun::backend_now() const { return m_->backend_now(); }
std::vector<std::string> LiveRun::obligations_now() const { return m_->obligations_now(); }
RunResult LiveRun::finish() && { return m_->finish(); }

}  // namespace kacct::sim
