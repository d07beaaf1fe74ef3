// Ground-truth accounting: every interval between two events on a CPU is
// charged, exactly, to the context that CPU was in during the interval.
#include "model/trace/ledger.hpp"

namespace kacct::trace {

std::string_view name(Bucket b) {
  static constexpr std::string_view names[] = {"user", "nice",   "system", "softirq", "irq",
                                               "idle", "iowait", "steal",  "guest",   "guest_nice"};
  return size_t(b) < kBuckets ? names[size_t(b)] : "?";
}

Accountant::Accountant(const Header& h) : tracker_(h) {
  charged_.cpu.resize(tracker_.ncpus());
  charged_.offline.resize(tracker_.ncpus());
  for (const auto& t : tracker_.tasks()) charged_.task[t.tid];  // listed even if idle
}

void Accountant::charge(Ledger& l, uint32_t c, const CpuContext& ctx, uint64_t dt, uint64_t steal) const {
  if (ctx.offline) {  // the CPU does not exist for accounting: no bucket, no task
    l.offline[c] += dt;
    return;
  }
  const TaskState* cur = ctx.current == 0 ? nullptr : tracker_.task(ctx.current);
  bool nice = cur && cur->nice > 0;
  Bucket b;
  uint64_t TaskTruth::*field = nullptr;
  if (ctx.irq_depth > 0) {
    b = Bucket::Irq, field = &TaskTruth::irq;
  } else if (ctx.in_softirq) {
    b = Bucket::Softirq, field = &TaskTruth::softirq;
  } else if (!cur) {
    b = ctx.nr_iowait > 0 ? Bucket::Iowait : Bucket::Idle;
  } else if (ctx.mode == Mode::User) {
    b = nice ? Bucket::Nice : Bucket::User, field = &TaskTruth::user;
  } else if (ctx.mode == Mode::Guest) {
    b = nice ? Bucket::GuestNice : Bucket::Guest, field = &TaskTruth::guest;  // kernel also adds this to USER
  } else {
    b = Bucket::System, field = &TaskTruth::system;
  }
  auto& row = l.cpu[c];
  row[size_t(b)] += dt - steal;
  row[size_t(Bucket::Steal)] += steal;
  if (cur) {
    TaskTruth& t = l.task[cur->tid];
    t.*field += dt - steal;
    t.steal += steal;
  }
}

std::optional<Error> Accountant::apply(const Event& e) {
  if (e.cpu >= tracker_.ncpus()) return tracker_.apply(e);  // reports the error
  const CpuContext before = tracker_.cpu(e.cpu);
  if (auto err = tracker_.apply(e)) return err;
  // Charge with the pre-event context; the tracker has already checked steal.
  charge(charged_, e.cpu, before, e.ts - before.last_ts, e.kind == Kind::Steal ? e.a : 0);
  if (e.kind == Kind::Fork) charged_.task[e.b];  // listed even if it never runs
  return std::nullopt;
}

Ledger Accountant::snapshot(uint64_t ts) const {
  Ledger l = charged_;
  l.end_ts = ts;
  for (uint32_t c = 0; c < tracker_.ncpus(); ++c) {
    const CpuContext& ctx = tracker_.cpu(c);
    if (ts > ctx.last_ts) charge(l, c, ctx, ts - ctx.last_ts, 0);
  }
  return l;
}

Result<Ledger> ground_truth(const Trace& t) {
  if (auto err = check_header(t.header)) return *err;
  Accountant acc(t.header);
  for (const Event& e : t.events)
    if (auto err = acc.apply(e)) return *err;
  return acc.snapshot(acc.tracker().now());
}

}  // namespace kacct::trace
