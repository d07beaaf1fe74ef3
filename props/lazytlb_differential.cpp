// Lazy-TLB mm references (model/lazytlb): every event kind of Stepper, from structural states the
// explorer reaches (the first 1,500 states of 2 CPUs x 3 tasks x 2 mms and of 3 CPUs x 3 tasks
// x 2 mms), with mm_users / mm_count either as reached or arbitrary 32-bit values (0 and 2^32-1 included), in every
// mode and era (generic, ppc64 radix and hash at 6.3, 6.4, 6.6 and 6.12: refcount and shootdown, with and without
// CONFIG_DEBUG_VM_SHOOT_LAZIES) and in the three mutant variants, concretely and symbolically on the same values
// (props/differential.hpp).
//
// The symbolic form is proofs/jobs_lazytlb.cpp's: the structure stays concrete and each
// atomic_dec_and_test decision is taken from an oracle (Decider<Symbolic>), the path recording
// the decision as a condition. Here the oracle is searched so that every decision folds to true
// on the bound values; the structure, the cost counters and the step log (mask clears, WARNs)
// must then end equal, and the counters field by field.
#include <algorithm>
#include <list>
#include <map>
#include <set>
#include <sstream>

#include "model/lazytlb/explore.hpp"
#include "model/lazytlb/script.hpp"
#include "props/differential.hpp"

// Stepper<D> takes a Decider<D>: the perturbed domains decide as Symbolic does.
namespace kacct::model::lazytlb {
template <>
struct Decider<props::diff::SaturatingSub> : Decider<Symbolic> {};
template <>
struct Decider<props::diff::NoObligations> : Decider<Symbolic> {};
}  // namespace kacct::model::lazytlb

namespace kacct::props {
namespace {
using namespace kacct::model::lazytlb;
using namespace diff;

constexpr int kCases = 20;

// The concrete part of a world, and what the step records beside it.
struct Structure {
  std::vector<Cpu> cpus;
  std::vector<Task> tasks;
  std::vector<Mm> mms;
  int ntasks = 0;
  Costs cost;
  StepLog log;
};
std::string structure_text(const Structure& s) {
  std::ostringstream o;
  o << "{cpus=";
  for (const auto& c : s.cpus) o << "(" << c.curr << "," << c.prev_mm << "," << c.irqs_off << ")";
  o << " tasks=";
  for (const auto& t : s.tasks)
    o << "(" << int(t.st) << t.kthread << t.idle << t.exiting << "," << t.mm << "," << t.active_mm << ")";
  o << " mms=";
  for (const auto& m : s.mms)
    o << "(" << int(m.st) << ",mask=" << std::hex << m.mask.w[0] << std::dec << "," << int(m.ext_users) << ","
      << int(m.ext_grabs) << ")";
  const auto& k = s.cost;
  o << " costs=" << k.count_atomics << "," << k.users_atomics << "," << k.ipis << "," << k.mask_updates << ","
    << k.switches << "," << k.frees << " clears=";
  for (const auto& c : s.log.clears) o << "(" << c.by << "," << c.bit << "," << c.mm << ")";
  o << " warns=";
  for (auto w : s.log.warns) o << w << ";";
  o << "}";
  return o.str();
}

template <class D>
void run_event(D& d, const Cfg& cfg, World<D>& w, Costs& cost, StepLog& log, const Event& e) {
  if constexpr (!D::is_symbolic) {
    Decider<Concrete> dec;
    Stepper<Concrete>(d, cfg, w, cost, log, dec).run(e);
  } else {
    // Search the oracle: run, find the first decision that folds to false on the bound values,
    // flip it, run again from the start (each decision flips at most once).
    const World<D> w0 = w;
    const Costs cost0 = cost;
    const StepLog log0 = log;
    const std::size_t ob0 = d.obligations.size();
    std::vector<bool> oracle;
    for (;;) {
      Decider<D> dec;
      dec.oracle = oracle;
      Stepper<D>(d, cfg, w, cost, log, dec).run(e);
      std::size_t flip = dec.path.size();
      for (std::size_t i = 0; i < dec.path.size() && flip == dec.path.size(); ++i) {
        const z3::expr v = dec.path[i].e().simplify();
        if (v.is_false())
          flip = i;
        else if (!v.is_true())
          RC_FAIL("decision " + std::to_string(i) + " does not fold: " + v.to_string());
      }
      if (flip == dec.path.size()) return;
      oracle.resize(flip + 1, false);
      for (std::size_t i = 0; i < flip; ++i) oracle[i] = i < dec.oracle.size() && dec.oracle[i];
      oracle[flip] = !(flip < dec.oracle.size() && dec.oracle[flip]);
      w = w0;
      cost = cost0;
      log = log0;
      d.obligations.erase(d.obligations.begin() + std::ptrdiff_t(ob0), d.obligations.end());
    }
  }
}

struct Mode {
  std::string name;
  Script header;  // arch, version, flags, mutants
  Cfg cfg;
};
std::vector<Mode> modes() {
  std::vector<Mode> out;
  std::vector<Cfg> seen;
  for (Arch a : {Arch::Generic, Arch::PpcRadix, Arch::PpcHash})
    for (auto ver : {arch::v(6, 3), arch::v(6, 4), arch::v(6, 6), arch::v(6, 12)})
      for (bool debug : {false, true}) {
        Script h;
        h.arch = a;
        h.version = ver;
        h.debug_shoot_lazies = debug;
        const Cfg c = h.cfg();
        if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
        seen.push_back(c);
        out.push_back(
            {std::string(arch_name(a)) + " " + ver.str() + " " + mode_name(c) + (debug ? " debug" : ""), h, c});
      }
  for (Arch a : {Arch::Generic, Arch::PpcRadix})
    for (auto m : kMutants) {
      Script h;
      h.arch = a;
      h.version = arch::v(6, 12);
      h.mutants = {std::string(m)};
      out.push_back({std::string(arch_name(a)) + " 6.12 mutant " + std::string(m), h, h.cfg()});
    }
  return out;
}

// The states an exploration keeps, one per distinct structural shape (the first), once per
// configuration: the mutant modes start where the real code of their release does.
const std::vector<World<Concrete>>& shapes_reached(const ExploreOptions& o) {
  static std::list<std::pair<std::pair<Cfg, Sizes>, std::vector<World<Concrete>>>> cache;  // stable references
  const std::pair key{o.header.cfg(), o.header.sizes};
  for (const auto& [k, v] : cache)
    if (k == key) return v;
  std::vector<World<Concrete>> out;
  std::set<std::string> shapes;
  for (auto& w : explore(o, true).sample)
    if (shapes.insert(structure_text(Structure{w.cpus, w.tasks, w.mms, w.ntasks, {}, {}})).second)
      out.push_back(std::move(w));
  cache.emplace_back(key, std::move(out));
  return cache.back().second;
}

// Per mode and event kind: (world, event) instances, one per distinct structural shape, from
// the reachable states of the real code (a mutant changes the step, not where it starts).
using Instances = std::vector<std::pair<World<Concrete>, Event>>;
const Instances& instances(const Mode& m, Op op) {
  static std::map<std::pair<std::string, int>, Instances> cache;
  const std::pair key{m.name, int(op)};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Instances& out = cache[key];
  for (Sizes sz : {Sizes{2, 3, 2}, Sizes{3, 3, 2}}) {
    ExploreOptions o;
    o.header = m.header;
    o.header.mutants.clear();
    o.header.sizes = sz;
    o.max_states = 1'500;
    o.stop_when_full = true;  // the same first 1,500 states, without expanding them all
    for (const auto& w : shapes_reached(o))
      for (const auto& e : candidate_events(w, m.cfg))
        if (e.op == op && why_not_enabled(w, m.cfg, e).empty()) {
          out.push_back({w, e});
          break;
        }
  }
  return out;
}

// One event of kind `op` in every mode where it can happen, from a random reachable shape.
template <class SD>
void event_in_every_mode(Op op) {
  const bool arbitrary_counters = *rc::gen::arbitrary<bool>();
  bool any = false;
  for (const auto& m : modes()) {
    const auto& all = instances(m, op);
    if (all.empty()) continue;
    any = true;
    const auto& inst = all[*rc::gen::inRange<std::size_t>(0, all.size())];
    const World<Concrete>& w = inst.first;
    const Event e = inst.second;
    auto cnt = w.cnt;
    if (arbitrary_counters) fill(cnt);
    const Cfg& cfg = m.cfg;
    differential<SD>(
        event_text(e) + " in " + m.name,
        [&](auto& d, auto& counters, Structure& s) {
          using D = std::remove_reference_t<decltype(d)>;
          World<D> x;
          x.cpus = s.cpus;
          x.tasks = s.tasks;
          x.mms = s.mms;
          x.ntasks = s.ntasks;
          x.cnt = counters;
          run_event(d, cfg, x, s.cost, s.log, e);
          s.cpus = x.cpus;
          s.tasks = x.tasks;
          s.mms = x.mms;
          counters = x.cnt;
        },
        val("counters", cnt), fixed("structure", Structure{w.cpus, w.tasks, w.mms, w.ntasks, {}, {}}, structure_text));
  }
  RC_ASSERT(any);
}

class LazyTlbDifferential : public ::testing::TestWithParam<Op> {};
TEST_P(LazyTlbDifferential, EveryMode) {
  const Op op = GetParam();
  check([op] { event_in_every_mode<Symbolic>(op); }, kCases);
}
INSTANTIATE_TEST_SUITE_P(EveryEventKind, LazyTlbDifferential,
                         ::testing::Values(Op::Switch, Op::Finish, Op::Idle, Op::Exit, Op::Exec, Op::Fork, Op::ForkVm,
                                           Op::Use, Op::Unuse, Op::MmGet, Op::MmPut, Op::MmGrab, Op::MmDrop, Op::Flush),
                         [](const auto& info) { return std::string(op_name(info.param)); });

// The check can fail: on the counters (saturating subtraction: mmdrop of a zero count) and on
// the obligations (underflow and use-after-free requirements dropped).
TEST(LazyTlbDifferentialMutants, CatchesSaturatingSub) {
  expect_caught([] { event_in_every_mode<SaturatingSub>(Op::MmDrop); }, 20, "the domains disagree");
}
TEST(LazyTlbDifferentialMutants, CatchesLostObligations) {
  expect_caught([] { event_in_every_mode<NoObligations>(Op::MmDrop); }, 20, "field failed obligations");
}

}  // namespace
}  // namespace kacct::props
