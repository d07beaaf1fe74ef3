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

struct LtModel {
  World<Concrete> w;
  Cfg cfg;
};
struct LtSut {
  Script script;  // the events so far, for the failure message (replays with kacct lazy-tlb run)
  World<Concrete> w;
  Costs costs;
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
  }
  void run(const LtModel& m, LtSut& s) const override {
    s.script.events.push_back(e);
    Concrete d;
    Decider<Concrete> dec;
    StepLog log;
    Stepper<Concrete>(d, m.cfg, s.w, s.costs, log, dec).run(e);
    if (!d.failed.empty()) RC_FAIL("obligation " + std::string(d.failed.front()) + "\n" + write_script(s.script));
    auto bad = spec::lazytlb::check(s.w, m.cfg, log);
    if (!bad.empty()) RC_FAIL(bad.front().invariant + ": " + bad.front().detail + "\n" + write_script(s.script));
    // Same step on the model state gives the same world (determinism, no hidden state).
    LtModel next = m;
    apply(next);
    RC_ASSERT(next.w.cpus == s.w.cpus);
    RC_ASSERT(next.w.tasks == s.w.tasks);
    RC_ASSERT(next.w.mms == s.w.mms);
    for (std::size_t i = 0; i < s.w.cnt.size(); ++i) {
      RC_ASSERT(next.w.cnt[i].mm_users == s.w.cnt[i].mm_users);
      RC_ASSERT(next.w.cnt[i].mm_count == s.w.cnt[i].mm_count);
    }
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
