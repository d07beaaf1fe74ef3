// Stateful property tests (rc::state) of the lazy-TLB model: random interleavings of every event
// kind over 2-4 CPUs, 2-5 tasks and 1-3 mms, in every mode/era. The model state decides which
// events are possible; the system under test runs each event through the checking step
// (obligations + every spec/lazytlb.hpp invariant) and must agree with the model state.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <cstdlib>
#include <sstream>

#include "model/lazytlb/explore.hpp"
#include "props/props.hpp"

namespace kacct::model::lazytlb {
inline void showValue(const Event& e, std::ostream& os) { os << event_text(e); }
}  // namespace kacct::model::lazytlb

namespace kacct::props {
namespace {
using namespace kacct::model::lazytlb;

// An oracle of what each event does to the structure and to mm_users, written from the
// events' definitions (model/lazytlb/lazytlb.hpp's Op comments), not by running the Stepper.
struct Oracle {
  std::vector<Ref> curr;
  std::vector<Hp> hp;
  std::vector<char> irqs_off;
  std::vector<TaskState> st;
  std::vector<Ref> mm;
  std::vector<char> exiting;
  std::vector<char> born;  // mm slot used (fork or exec took it)
  std::vector<int> ext_users, ext_grabs;

  explicit Oracle(const World<Concrete>& w) {
    for (const auto& c : w.cpus) curr.push_back(c.curr), hp.push_back(c.hp), irqs_off.push_back(c.irqs_off);
    for (const auto& t : w.tasks) st.push_back(t.st), mm.push_back(t.mm), exiting.push_back(t.exiting);
    for (const auto& m : w.mms)
      born.push_back(m.st != MmState::Unborn), ext_users.push_back(m.ext_users), ext_grabs.push_back(m.ext_grabs);
  }
  // mm_users: every task whose mm it is, plus the outside holders.
  int users(Ref m) const {
    int n = ext_users[m];
    for (Ref t : mm) n += t == m;
    return n;
  }
  Ref fresh_mm() {
    for (std::size_t i = 0; i < born.size(); ++i)
      if (!born[i]) {
        born[i] = 1;
        return Ref(i);
      }
    return kNull;
  }
  void apply(const Event& e, int ntasks) {
    const int c = e.cpu;
    const Ref cur = curr[c];
    switch (e.op) {
      case Op::Switch:
      case Op::Idle: {
        const Ref n = e.op == Op::Idle ? Ref(ntasks + c) : Ref(e.arg);
        st[cur] = exiting[cur] ? TaskState::Dead : TaskState::Runnable;
        st[n] = TaskState::Running;
        curr[c] = n;
        irqs_off[c] = 1;
        break;
      }
      case Op::Finish: irqs_off[c] = 0; break;
      case Op::Exit:
        mm[cur] = kNull;
        exiting[cur] = 1;
        break;
      case Op::Exec: mm[cur] = fresh_mm(); break;
      case Op::Fork:
      case Op::ForkVm:
        st[e.arg] = TaskState::Runnable;
        exiting[e.arg] = 0;
        mm[e.arg] = mm[cur] == kNull ? kNull : e.op == Op::ForkVm ? mm[cur] : fresh_mm();
        break;
      case Op::Use:
        if (users(Ref(e.arg)) > 0) mm[cur] = Ref(e.arg);
        break;
      case Op::Unuse: mm[cur] = kNull; break;
      case Op::MmGet:
        if (users(Ref(e.arg)) > 0) ++ext_users[e.arg];
        break;
      case Op::MmPut: --ext_users[e.arg]; break;
      case Op::MmGrab: ++ext_grabs[e.arg]; break;
      case Op::MmDrop: --ext_grabs[e.arg]; break;
      case Op::Flush: break;
      case Op::Offline: hp[c] = Hp::Dying; break;
      case Op::Dead: hp[c] = Hp::Dead; break;
      case Op::Online: hp[c] = Hp::Online; break;
    }
  }
  // Where the world disagrees with the oracle ("" if nowhere).
  std::string mismatch(const World<Concrete>& w) const {
    for (std::size_t c = 0; c < w.cpus.size(); ++c)
      if (w.cpus[c].curr != curr[c] || w.cpus[c].hp != hp[c] || w.cpus[c].irqs_off != bool(irqs_off[c]))
        return "CPU " + std::to_string(c) + " (curr, hotplug state or irqs)";
    for (std::size_t t = 0; t < w.tasks.size(); ++t)
      if (w.tasks[t].st != st[t] || w.tasks[t].mm != mm[t] || w.tasks[t].exiting != bool(exiting[t]))
        return "task " + std::to_string(t) + " (state, mm or exiting)";
    for (std::size_t m = 0; m < w.mms.size(); ++m) {
      if ((w.mms[m].st != MmState::Unborn) != bool(born[m]) || w.mms[m].ext_users != ext_users[m] ||
          w.mms[m].ext_grabs != ext_grabs[m])
        return "mm " + std::to_string(m) + " (born or outside holders)";
      if (w.mms[m].st == MmState::Live && w.cnt[m].mm_users != std::uint32_t(users(Ref(m))))
        return "mm " + std::to_string(m) + " mm_users " + std::to_string(w.cnt[m].mm_users) + ", expected " +
               std::to_string(users(Ref(m)));
    }
    return {};
  }
};

struct LtModel {
  World<Concrete> w;  // decides which events are enabled
  Cfg cfg;
  Oracle o{w};
};
struct LtSut {
  Script script;  // the events so far, for the failure message (replays with kacct lazy-tlb run)
  World<Concrete> w;
  Costs costs;
  spec::lazytlb::Checker checker{w, script.cfg()};  // the runner's incremental check, beside check()
};

struct Step : rc::state::Command<LtModel, LtSut> {
  Event e;
  explicit Step(Event ev) : e(ev) {}
  void checkPreconditions(const LtModel& m) const override { RC_PRE(not_enabled(m.w, m.cfg, e).empty()); }
  void apply(LtModel& m) const override {
    Concrete d;
    Decider<Concrete> dec;
    Costs c;
    StepLog log;
    Stepper<Concrete>(d, m.cfg, m.w, c, log, dec).run(e);
    m.o.apply(e, m.w.ntasks);
  }
  void run(const LtModel& m, LtSut& s) const override {
    s.script.events.push_back(e);
    Concrete d;
    Decider<Concrete> dec;
    StepLog log;
    Stepper<Concrete, true>(d, m.cfg, s.w, s.costs, log, dec).run(e);
    if (!d.failed.empty()) RC_FAIL("obligation " + std::string(d.failed.front()) + "\n" + write_script(s.script));
    auto bad = spec::lazytlb::check(s.w, m.cfg, log);
    // The runner's incremental check gives exactly check()'s verdicts, and its log named every
    // record the step wrote.
    std::vector<spec::lazytlb::Violation> inc;
    s.checker.check(s.w, log, inc);
    if (inc != bad) RC_FAIL("incremental check differs from check()\n" + write_script(s.script));
    if (!s.checker.describes(s.w)) RC_FAIL("the step wrote a record its log does not list\n" + write_script(s.script));
    if (s.checker.zombies() != spec::lazytlb::zombies(s.w)) RC_FAIL("zombies differ\n" + write_script(s.script));
    if (!bad.empty()) RC_FAIL(bad.front().invariant + ": " + bad.front().detail + "\n" + write_script(s.script));
    // The step did what the event means (an oracle independent of the Stepper).
    Oracle next = m.o;
    next.apply(e, s.w.ntasks);
    const auto why = next.mismatch(s.w);
    if (!why.empty()) RC_FAIL("oracle: " + why + " after " + event_text(e) + "\n" + write_script(s.script));
  }
  void show(std::ostream& os) const override { os << event_text(e); }
};

// One enabled event of the model state (every state has one: finish or a switch to idle).
rc::Gen<std::shared_ptr<const rc::state::Command<LtModel, LtSut>>> gen_step(const LtModel& m) {
  std::vector<Event> ok;
  for (const auto& e : candidate_events(m.w, m.cfg))
    if (not_enabled(m.w, m.cfg, e).empty()) ok.push_back(e);
  return rc::gen::map(rc::gen::elementOf(ok), [](Event e) {
    return std::shared_ptr<const rc::state::Command<LtModel, LtSut>>(std::make_shared<Step>(e));
  });
}

struct EraCase {
  Arch arch;
  int major, minor;
};
constexpr EraCase kEras[] = {{Arch::Generic, 6, 1},  {Arch::Generic, 6, 12},  {Arch::PpcRadix, 6, 1},
                             {Arch::PpcRadix, 6, 4}, {Arch::PpcRadix, 6, 12}, {Arch::PpcHash, 6, 12}};

TEST(LazyTlbState, RandomInterleavingsKeepEveryInvariant) {
  check(
      [] {
        const auto era = *rc::gen::elementOf(std::vector<EraCase>(std::begin(kEras), std::end(kEras)));
        Script h;
        h.sizes = {*rc::gen::inRange(2, 5), *rc::gen::inRange(2, 6), *rc::gen::inRange(1, 4)};
        h.arch = era.arch;
        h.version = arch::v(unsigned(era.major), unsigned(era.minor));
        h.debug_shoot_lazies = *rc::gen::arbitrary<bool>();
        LtModel m{initial(h.sizes), h.cfg()};
        LtSut s{h, m.w, {}};
        rc::state::check(m, s, gen_step);
      },
      200);
}

// The oracle is not vacuous: a world one step off (a switch that leaves rq->curr, a fork that
// shares the parent's mm instead of a new one, an mm_users one too high) is reported.
TEST(LazyTlbState, OracleSeesAWrongStep) {
  const Sizes sz{2, 3, 2};
  World<Concrete> w = initial(sz);
  Oracle o(w);
  EXPECT_EQ(o.mismatch(w), "");
  Cfg cfg = config_for(Arch::Generic, arch::v(6, 12));
  const auto step = [&](World<Concrete>& x, Event e) {
    Concrete d;
    Decider<Concrete> dec;
    Costs c;
    StepLog log;
    Stepper<Concrete>(d, cfg, x, c, log, dec).run(e);
  };
  const Event sw{Op::Switch, 0, 0}, fork{Op::Fork, 0, 1};
  step(w, sw);
  o.apply(sw, w.ntasks);
  EXPECT_EQ(o.mismatch(w), "");
  World<Concrete> stuck = w;
  stuck.cpus[0].curr = w.idle_of(0);
  EXPECT_NE(o.mismatch(stuck), "");
  step(w, Event{Op::Finish, 0, 0});
  o.apply(Event{Op::Finish, 0, 0}, w.ntasks);
  World<Concrete> shared = w;
  step(w, fork);
  o.apply(fork, w.ntasks);
  EXPECT_EQ(o.mismatch(w), "");
  shared.tasks[1] = w.tasks[1];
  shared.tasks[1].mm = shared.tasks[0].mm;
  shared.mms = w.mms;
  EXPECT_NE(o.mismatch(shared), "");
  World<Concrete> users = w;
  users.cnt[0].mm_users = users.cnt[0].mm_users + 1;
  EXPECT_NE(o.mismatch(users), "");
}

// The checks are not vacuous: the same random interleavings catch each mutant.
TEST(LazyTlbState, MutantsAreCaught) {
  for (const char* mut : {"no-lazy-grab", "shoot-skip-cpu", "clear-wrong-cpu"}) {
    Script h;
    h.sizes = {3, 3, 2};
    h.arch = std::string(mut) == "no-lazy-grab" ? Arch::Generic : Arch::PpcRadix;
    h.version = arch::v(6, 12);
    h.mutants = {mut};
    const auto result = rc::detail::checkProperty(rc::detail::toProperty([&] {
                                                    LtModel m{initial(h.sizes), h.cfg()};
                                                    LtSut s{h, m.w, {}};
                                                    rc::state::check(m, s, gen_step);
                                                  }),
                                                  rc::detail::TestMetadata{}, [] {
                                                    auto p = rc::detail::configuration().testParams;
                                                    p.maxSuccess = 300;
                                                    p.disableShrinking = true;
                                                    return p;
                                                  }());
    EXPECT_FALSE(result.template is<rc::detail::SuccessResult>()) << mut << " survived 300 random interleavings";
  }
}

}  // namespace
}  // namespace kacct::props
