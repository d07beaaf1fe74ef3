// Trace builder: abstract actions -> legal events, guided by the Tracker (the one definition of
// legality). Every candidate event is applied to a Tracker; one it rejects is dropped, so the
// output is valid by construction, and the choices below only decide how often actions land.
#include "model/trace/builder.hpp"

#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "model/trace/tracker.hpp"

namespace kacct::trace {
namespace {

enum class Op : uint8_t { Tick, UserKernel, Irq, Softirq, Guest, Switch, Wakeup, Idle, Steal, Fork, Exit, Read };

// op % 32 -> what to do. 8 of 32 are ticks.
constexpr Op kOps[32] = {
    Op::Tick,       Op::Tick,       Op::Tick,       Op::Tick,   Op::Tick,   Op::Tick,    Op::Tick,  Op::Tick,
    Op::UserKernel, Op::UserKernel, Op::UserKernel, Op::Irq,    Op::Irq,    Op::Softirq, Op::Guest, Op::Guest,
    Op::Switch,     Op::Switch,     Op::Switch,     Op::Switch, Op::Wakeup, Op::Wakeup,  Op::Idle,  Op::Steal,
    Op::Steal,      Op::Fork,       Op::Exit,       Op::Read,   Op::Read,   Op::Read,    Op::Irq,   Op::UserKernel,
};

constexpr uint64_t kKthread = 2, kKsoftirqd = 10, kVcpu = 900, kFirstFork = 1000;
constexpr uint32_t kMaxIrqNest = 2;
constexpr size_t kMaxLiveTasks = 16;  // forks replace exited tasks up to this many

int clamp_nice(int n) { return std::clamp(n, -20, 19); }

class Builder {
 public:
  explicit Builder(const BuildSpec& s) : header_(build_header(s)), tr_(header_), hotplug_(s.hotplug) {
    for (const TaskDecl& d : header_.tasks) all_.push_back(d.tid);
    std::sort(all_.begin(), all_.end());
    live_.insert(all_.begin(), all_.end());
  }

  void step(const Action& a) {
    now_ += a.dt;
    const uint32_t cpu = a.cpu % tr_.ncpus();
    const CpuContext& c = tr_.cpu(cpu);
    const TaskState& cur = tr_.current(cpu);
    const bool process = c.irq_depth == 0 && !c.in_softirq;
    const bool live = c.current != 0 && !cur.exiting;
    const uint16_t arg = a.arg;
    Event e;
    e.ts = now_;
    e.cpu = cpu;

    if (hotplug_ && c.offline) {  // any other event there is illegal: a tick or idle action brings it back
      if (kOps[a.op % 32] != Op::Tick && kOps[a.op % 32] != Op::Idle) return;
      e.kind = Kind::CpuOnline;
      if (tr_.apply(e)) return;
      events_.push_back(std::move(e));
      return;
    }
    switch (kOps[a.op % 32]) {
      case Op::Tick:
        e.kind = c.nohz_idle ? Kind::IdleExit : Kind::Tick;  // the tick restarts on nohz exit
        break;
      case Op::UserKernel:
        if (!process || !live) return;
        if (c.mode == Mode::User) {
          if (arg & 1) {
            e.kind = Kind::SyscallEnter;
            e.a = (arg >> 1) % 450;
          } else {
            e.kind = Kind::ExcEnter;
            e.exc_kind = (arg & 2) ? ExcKind::PageFault : ExcKind::Other;
          }
        } else if (c.mode == Mode::Kernel && !cur.kthread) {
          e.kind = (arg & 1) ? Kind::SyscallExit : Kind::ExcExit;
        } else {
          return;
        }
        break;
      case Op::Irq:
        if (c.irq_depth == 0 || (c.irq_depth < kMaxIrqNest && (arg & 1))) {
          e.kind = Kind::IrqEnter;
          e.a = (arg >> 1) % 256;
        } else {
          e.kind = Kind::IrqExit;
        }
        break;
      case Op::Softirq:
        if (c.irq_depth > 0)
          e.kind = Kind::IrqExit;
        else if (c.in_softirq)
          e.kind = Kind::SoftirqExit;
        else {
          e.kind = Kind::SoftirqEnter;
          e.a = arg % 10;
        }
        break;
      case Op::Guest:
        if (c.current == kVcpu) {
          if (!process || cur.exiting) return;
          if (c.mode == Mode::Guest)
            e.kind = Kind::GuestExit;
          else if (c.mode == Mode::Kernel)
            e.kind = Kind::GuestEnter;
          else {
            e.kind = Kind::SyscallEnter;  // ioctl(KVM_RUN)
            e.a = 16;
          }
          break;
        }
        if (!switch_to(e, c, cur, kVcpu, arg)) return;
        break;
      case Op::Switch: {
        std::vector<uint64_t> cand;
        if (c.current != 0) cand.push_back(0);
        for (uint64_t tid : live_)
          if (const TaskState* t = tr_.task(tid); !t->running && !t->sleeping) cand.push_back(tid);
        if (cand.empty()) return;
        if (!switch_to(e, c, cur, cand[(arg & 0xff) % cand.size()], arg)) return;
        break;
      }
      case Op::Wakeup: {
        std::vector<uint64_t> cand;
        for (uint64_t tid : live_)
          if (tr_.task(tid)->sleeping) cand.push_back(tid);
        if (cand.empty()) return;
        e.kind = Kind::Wakeup;
        e.a = cand[arg % cand.size()];
        break;
      }
      case Op::Idle:
        if (hotplug_ && arg % 2 == 1) {
          if (c.current != 0 || c.nohz_idle || !process) {
            if (!switch_to(e, c, cur, 0, arg)) return;
          } else
            e.kind = Kind::CpuOffline;
          break;
        }
        if (c.current != 0 || !process) return;
        e.kind = c.nohz_idle ? Kind::IdleExit : Kind::IdleEnter;
        break;
      case Op::Steal: {
        const uint64_t interval = now_ - c.steal_base();
        const uint64_t ns = interval / 16 * (arg % 17) + interval % 16 * (arg % 17) / 16;
        if (ns == 0) return;
        e.kind = Kind::Steal;
        e.a = ns;
        break;
      }
      case Op::Fork:
        if (!process || (c.current != 0 && cur.exiting)) return;
        if (c.mode == Mode::User) {
          e.kind = Kind::SyscallEnter;  // clone()
          e.a = 56;
          break;
        }
        if (c.mode != Mode::Kernel || live_tasks() >= kMaxLiveTasks) return;
        e.kind = Kind::Fork;
        e.a = c.current;
        e.b = next_tid_;
        if (c.current == 0 || cur.kthread) {
          e.fork_kthread = true;
          e.fork_comm = "kworker/" + std::to_string(cpu) + ":" + std::to_string((next_tid_ - kFirstFork) % 1000);
        } else if (arg & 1) {
          e.fork_pid = cur.pid;  // a new thread of the parent's process
        } else {
          e.fork_mm = next_mm_;  // a new process
        }
        break;
      case Op::Exit:
        if (!process || !live || arg % 4 != 0) return;
        if (c.mode == Mode::User) {
          e.kind = Kind::SyscallEnter;  // exit()
          e.a = 60;
        } else if (c.mode == Mode::Kernel) {
          e.kind = Kind::Exit;
        } else {
          return;
        }
        break;
      case Op::Read: {
        if (!process || !live) return;
        if (c.mode == Mode::User) {
          e.kind = Kind::SyscallEnter;  // getrusage() / clock_gettime() / read()
          e.a = 98;
          break;
        }
        if (c.mode == Mode::Guest) {
          e.kind = Kind::GuestExit;
          break;
        }
        e.kind = Kind::Read;
        e.read_kind = ReadKind(arg % kReadKindCount);
        e.read_id = ++reads_;
        const unsigned sel = (arg >> 3) % 4;
        const bool any_tid = e.read_kind == ReadKind::TaskStat || e.read_kind == ReadKind::ThreadCputime ||
                             e.read_kind == ReadKind::ProcessCputime || e.read_kind == ReadKind::Taskstats;
        if (sel == 2 && e.read_kind != ReadKind::ProcStat) {
          e.a = c.current;
        } else if (sel == 3 && any_tid) {
          e.a = all_[(arg >> 5) % all_.size()];  // exited tasks included
        }
        break;
      }
    }
    if (tr_.apply(e)) return;  // not legal after all: skip
    if (e.kind == Kind::Fork) {
      all_.push_back(e.b);  // forked tids grow past every declared one: all_ stays sorted
      live_.insert(e.b);
      ++next_tid_;
      if (e.fork_mm) ++next_mm_;
    } else if (e.kind == Kind::Switch && e.prev_state == PrevState::Dead) {
      live_.erase(e.a);
    }
    events_.push_back(std::move(e));
  }

  Trace finish() && { return Trace{std::move(header_), std::move(events_)}; }
  // Hands the events built so far to `sink` and forgets them (the tracker keeps the state).
  size_t drain(const std::function<void(const Event&)>& sink) {
    for (const Event& e : events_) sink(e);
    const size_t n = events_.size();
    events_.clear();
    return n;
  }

 private:
  size_t live_tasks() const { return live_.size(); }
  // A switch to `next`, or the event that has to come first on this CPU.
  bool switch_to(Event& e, const CpuContext& c, const TaskState& cur, uint64_t next, uint16_t arg) {
    if (c.irq_depth > 0)
      e.kind = Kind::IrqExit;
    else if (c.in_softirq)
      e.kind = Kind::SoftirqExit;
    else if (c.mode == Mode::Guest)
      e.kind = Kind::GuestExit;
    else if (c.current == 0 && c.nohz_idle)
      e.kind = Kind::IdleExit;
    else {
      if (next == c.current) return false;
      if (next != 0) {
        const TaskState* n = tr_.task(next);
        if (!n || n->running || n->sleeping || n->exited) return false;
      }
      e.kind = Kind::Switch;
      e.a = c.current;
      e.b = next;
      if (cur.exiting) {
        e.prev_state = PrevState::Dead;
      } else if (c.current != 0) {
        switch ((arg >> 8) % 8) {
          case 4: e.prev_state = PrevState::Sleeping; break;
          case 5: e.prev_state = PrevState::Sleeping, e.iowait = true; break;
          case 6: e.prev_state = PrevState::DiskSleep; break;
          case 7: e.prev_state = PrevState::DiskSleep, e.iowait = true; break;
          default: break;  // preempted: R
        }
      }
    }
    return true;
  }

  Header header_;
  Tracker tr_;
  // The tracker keeps exited tasks for ever; walking them on every action made a trace of
  // n events cost O(n^2). Both lists are in tid order.
  std::vector<uint64_t> all_;
  std::set<uint64_t> live_;
  std::vector<Event> events_;
  uint64_t now_ = 0;
  uint64_t next_tid_ = kFirstFork;
  uint64_t next_mm_ = 100;
  uint64_t reads_ = 0;
  bool hotplug_ = false;
};

}  // namespace

Header build_header(const BuildSpec& s) {
  Header h;
  h.cpu_model = s.cpu_model.empty() ? "POWER9" : s.cpu_model;
  h.ncpus = std::clamp<uint32_t>(s.ncpus, 1, 4);
  if (s.kthread) h.tasks.push_back(task_decl(kKthread, kKthread, true, "kthreadd", 0, std::nullopt));
  if (s.ksoftirqd) h.tasks.push_back(task_decl(kKsoftirqd, kKsoftirqd, true, "ksoftirqd/0", 0, std::nullopt));
  const uint32_t procs = std::clamp<uint32_t>(s.processes, 1, 4);
  const uint32_t threads = std::clamp<uint32_t>(s.threads, 1, 3);
  for (uint32_t p = 0; p < procs; ++p) {
    const uint64_t pid = 100 * (p + 1);
    const int nice = p % 2 == 1 ? clamp_nice(s.nice) : 0;
    for (uint32_t t = 0; t < threads; ++t)
      h.tasks.push_back(task_decl(pid + t, pid, false, "app" + std::to_string(p), nice, p + 1));
  }
  if (s.vcpu) h.tasks.push_back(task_decl(kVcpu, kVcpu, false, "qemu-kvm", clamp_nice(s.vcpu_nice), 90));
  return h;
}

Trace build(const BuildSpec& s, std::span<const Action> actions) {
  Builder b(s);
  for (const Action& a : actions) b.step(a);
  return std::move(b).finish();
}

namespace {
// One action from the generator; a fixed draw count per action keeps every prefix of the
// action sequence the same whatever length is asked for.
Action draw_action(std::mt19937_64& rng) {
  const uint64_t r = rng();
  Action a;
  a.op = uint8_t(r);
  a.cpu = uint8_t(r >> 8);
  a.arg = uint16_t(r >> 16);
  switch ((r >> 32) & 3) {
    case 0: a.dt = 0; break;
    case 1: a.dt = uint32_t(1 + rng() % 20'000); break;
    default: a.dt = uint32_t(100'000 + rng() % 3'900'001); break;
  }
  return a;
}
}  // namespace

std::vector<Action> random_actions(uint64_t seed, size_t n_actions) {
  std::mt19937_64 rng(seed);
  std::vector<Action> out;
  out.reserve(n_actions);
  for (size_t i = 0; i < n_actions; ++i) out.push_back(draw_action(rng));
  return out;
}

size_t random_trace_stream(uint64_t seed, const BuildSpec& s, size_t n_events, size_t max_actions,
                           const std::function<void(const Event&)>& sink) {
  std::mt19937_64 rng(seed);
  Builder b(s);
  size_t n = 0;
  for (size_t i = 0; i < max_actions && n < n_events; ++i) {
    b.step(draw_action(rng));
    n += b.drain(sink);
  }
  return n;
}

Trace random_trace(uint64_t seed, const BuildSpec& s, size_t n_actions) {
  const auto actions = random_actions(seed, n_actions);
  return build(s, actions);
}

BuildSpec spec_from_bytes(uint8_t a, uint8_t b, std::string cpu_model) {
  static constexpr int nices[8] = {0, 0, 5, 19, -5, 1, 10, -20};
  BuildSpec s;
  s.cpu_model = std::move(cpu_model);
  s.ncpus = 1 + (a & 3);
  s.processes = 1 + ((a >> 2) & 3);
  s.threads = 1 + ((a >> 4) & 3) % 3;
  s.kthread = (a & 0x40) != 0;
  s.ksoftirqd = (a & 0x80) != 0;
  s.vcpu = (b & 1) != 0;
  s.nice = nices[(b >> 1) & 7];
  s.vcpu_nice = (b & 0x10) ? 7 : 0;
  s.hotplug = (b & 0x20) != 0;
  return s;
}

std::vector<Action> actions_from_bytes(std::span<const uint8_t> bytes) {
  std::vector<Action> out;
  out.reserve(bytes.size() / 8);
  for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    const uint8_t* p = bytes.data() + i;
    Action a;
    a.op = p[0];
    a.cpu = p[1];
    a.arg = uint16_t(p[2] | p[3] << 8);
    a.dt = uint32_t(p[4]) | uint32_t(p[5]) << 8 | uint32_t(p[6]) << 16 | uint32_t(p[7]) << 24;
    out.push_back(a);
  }
  return out;
}

}  // namespace kacct::trace
