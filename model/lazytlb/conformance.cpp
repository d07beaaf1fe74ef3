// A real kernel's mm references against the lazy-TLB model (conformance.hpp).
#include "model/lazytlb/conformance.hpp"

#include <charconv>

#include "model/trace/tokens.hpp"

namespace kacct::model::lazytlb {

namespace {
struct Fail {
  script::ParseError e;
};
[[noreturn]] void fail(std::uint32_t line, std::uint32_t col, std::string m) { throw Fail{{line, col, std::move(m)}}; }

template <class T>
T num(const text::Tok& t, std::uint32_t line, int base, std::string_view what) {
  T v{};
  auto [p, ec] = std::from_chars(t.s.data(), t.s.data() + t.s.size(), v, base);
  if (ec != std::errc{} || p != t.s.data() + t.s.size())
    fail(line, t.col,
         "expected " + std::string(base == 16 ? "a hex number" : "an unsigned number") + " for " + std::string(what) +
             ", got '" + std::string(t.s) + "'");
  return v;
}
}  // namespace

script::Result<Expected> parse_expected(std::string_view text) {
  Expected e;
  try {
    std::uint32_t line = 0;
    bool magic = false;
    std::size_t last = 0;
    std::size_t i = 0;
    while (i <= text.size()) {
      const auto end = std::min(text.find('\n', i), text.size());
      const auto raw = text.substr(i, end - i);
      i = end + 1;
      ++line;
      const auto t = text::split(raw, true);
      if (t.empty()) {
        if (end == text.size()) break;
        continue;
      }
      if (!magic) {
        if (t.size() != 2 || t[0].s != "lazytlb-expect" || t[1].s != "1")
          fail(line, t[0].col, "expected 'lazytlb-expect 1' first");
        magic = true;
        continue;
      }
      if (t[0].s == "prefix") {
        if (t.size() != 2) fail(line, t[0].col, "'prefix' takes one number");
        e.prefix = num<std::size_t>(t[1], line, 10, "prefix");
        continue;
      }
      const bool ipi = t.size() == 3 && t[1].s == "ipis";
      if (t.size() != 7 && t.size() != 8 && !ipi)
        fail(line, t[0].col, "expected STEP CPU TASK MM USERS COUNT MASK [exit@S|fork@S], or STEP ipis N");
      Expectation x;
      x.line = line;
      x.step = num<std::size_t>(t[0], line, 10, "STEP");
      if (x.step == 0) fail(line, t[0].col, "STEP counts from 1");
      if (x.step < last) fail(line, t[0].col, "STEP goes backwards");
      last = x.step;
      if (ipi) {
        x.ipi_row = true;
        x.count = num<std::uint32_t>(t[2], line, 10, "N");
        e.rows.push_back(x);
        if (end == text.size()) break;
        continue;
      }
      x.cpu = num<int>(t[1], line, 10, "CPU");
      if (x.cpu >= kMaxCpus) fail(line, t[1].col, "CPU must be below " + std::to_string(kMaxCpus));
      x.task = t[2].s == "idle" ? kNull : Ref(num<std::uint16_t>(t[2], line, 10, "TASK"));
      if (x.task > 63) fail(line, t[2].col, "TASK must be in 0..63 or idle");
      if (t[3].s == "init") {
        x.mm = kInitMm;
        for (int k = 4; k < 7; ++k)
          if (t[k].s != "-") fail(line, t[k].col, "init_mm's counters are not tracked: expected '-'");
      } else {
        x.mm = Ref(num<std::uint16_t>(t[3], line, 10, "MM"));
        if (x.mm > 15) fail(line, t[3].col, "MM must be in 0..15 or init");
        x.users = num<std::uint32_t>(t[4], line, 10, "USERS");
        x.count = num<std::uint32_t>(t[5], line, 10, "COUNT");
        x.mask = num<std::uint64_t>(t[6], line, 16, "MASK");
      }
      if (t.size() == 8) {
        const auto at = t[7].s.substr(0, 5);
        if ((at != "exit@" && at != "fork@") || x.mm == kInitMm)
          fail(line, t[7].col, "expected exit@STEP or fork@STEP on an mm row");
        text::Tok s = t[7];
        s.s.remove_prefix(5);
        s.col += 5;
        auto& step = at == "exit@" ? x.exit_step : x.fork_step;
        step = num<std::size_t>(s, line, 10, at == "exit@" ? "exit@STEP" : "fork@STEP");
        if (step <= x.step)
          fail(line, s.col,
               std::string("the ") + (at == "exit@" ? "exit" : "fork") + " step must come after the row's");
      }
      e.rows.push_back(x);
      if (end == text.size()) break;
    }
    if (!magic) fail(line ? line : 1, 1, "empty: expected 'lazytlb-expect 1'");
  } catch (const Fail& f) { return f.e; }
  return e;
}

namespace {
std::string ref_text(Ref r, bool mm) {
  if (r == kInitMm) return "init_mm";
  if (r == kNull) return mm ? "NULL" : "idle";
  return std::to_string(r);
}
}  // namespace

Comparison compare(const Script& s, const Expected& e) {
  Comparison c;
  const Cfg cfg = s.cfg();
  World<Concrete> w = initial(s.sizes);
  Costs costs;
  StepLog log;
  std::size_t next = 0;
  std::uint64_t ipi_base = 0;  // the model's IPIs at the end of the prefix
  // exit@S rows not exact at their step: judged when the run reaches S
  struct Later {
    Expectation x;
    std::uint32_t users, count;  // the model's at the row's step
  };
  std::vector<Later> later;
  auto judge_later = [&](std::size_t step) {
    for (auto it = later.begin(); it != later.end();) {
      if ((it->x.exit_step ? it->x.exit_step : it->x.fork_step) != step) {
        ++it;
        continue;
      }
      const auto& k = w.cnt[it->x.mm];
      const Expectation& x = it->x;
      if (x.fork_step) {  // copy_mm()'s mmget() done, the fork's step not yet: one user more
        if (x.users == it->users + 1 && x.count == it->count && k.mm_users == x.users)
          ++c.counts_bound;
        else if (c.off.size() < 50)
          c.off.push_back({x, "mm " + std::to_string(x.mm) + " mm_users/mm_count before a fork: model " +
                                  std::to_string(it->users) + "/" + std::to_string(it->count) + ", " +
                                  std::to_string(k.mm_users) + "/" + std::to_string(k.mm_count) + " after step " +
                                  std::to_string(step) + ", kernel " + std::to_string(x.users) + "/" +
                                  std::to_string(x.count)});
        it = later.erase(it);
        continue;
      }
      const bool ok = (x.users == it->users && x.count == it->count + 1) ||  // after the lazy grab
                      (x.users == k.mm_users &&
                       (x.count == k.mm_count || x.count == k.mm_count + 1));  // after S, or before its mmdrop
      if (ok)
        ++c.counts_bound;
      else if (c.off.size() < 50)
        c.off.push_back({x, "mm " + std::to_string(x.mm) + " mm_users/mm_count inside an exit: model " +
                                std::to_string(it->users) + "/" + std::to_string(it->count) + " before, " +
                                std::to_string(k.mm_users) + "/" + std::to_string(k.mm_count) + " after step " +
                                std::to_string(step) + ", kernel " + std::to_string(x.users) + "/" +
                                std::to_string(x.count)});
      it = later.erase(it);
    }
  };
  auto check_rows = [&](std::size_t step) {
    if (step == e.prefix) ipi_base = costs.ipis;
    for (; next < e.rows.size() && e.rows[next].step == step; ++next) {
      const Expectation& x = e.rows[next];
      ++c.rows;
      auto off = [&](std::string what) {
        if (c.off.size() < 50) c.off.push_back({x, std::move(what)});
      };
      if (x.ipi_row) {
        ++c.ipi_rows;
        const std::uint64_t mine = costs.ipis - ipi_base;
        if (mine == x.count)
          ++c.ipi_exact;
        else
          off("IPIs since the trace start: model " + std::to_string(mine) + ", kernel " + std::to_string(x.count));
        continue;
      }
      if (x.cpu >= int(w.cpus.size())) {
        off("no CPU " + std::to_string(x.cpu) + " in the model");
        continue;
      }
      const Ref curr = w.cpus[x.cpu].curr;
      const Ref want_task = x.task == kNull ? w.idle_of(x.cpu) : x.task;
      const Task& t = w.tasks[curr];
      if (curr != want_task) {
        off("current task: model " + ref_text(curr >= w.ntasks ? kNull : curr, false) + ", kernel " +
            ref_text(x.task, false));
        continue;
      }
      if (t.active_mm != x.mm) {
        off("active_mm: model " + ref_text(t.active_mm, true) + ", kernel " + ref_text(x.mm, true));
        continue;
      }
      ++c.place;
      if (x.mm == kInitMm) continue;
      ++c.counted;
      const auto& k = w.cnt[x.mm];
      if (k.mm_users == x.users && k.mm_count == x.count)
        ++c.counts_exact;
      else if (x.exit_step || x.fork_step)
        later.push_back({x, k.mm_users, k.mm_count});
      else
        off("mm " + std::to_string(x.mm) + " mm_users/mm_count: model " + std::to_string(k.mm_users) + "/" +
            std::to_string(k.mm_count) + ", kernel " + std::to_string(x.users) + "/" + std::to_string(x.count));
      const std::uint64_t mine = w.mms[x.mm].mask.w[0];
      c.mask_exact += mine == x.mask;
      c.mask_subset += (x.mask & ~mine) == 0;
      if (mine != x.mask && c.mask_off.size() < 50) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "mm %d mm_cpumask: model %llx, kernel %llx", int(x.mm),
                      static_cast<unsigned long long>(mine), static_cast<unsigned long long>(x.mask));
        c.mask_off.push_back({x, buf});
      }
    }
  };
  check_rows(0);
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const Event& ev = s.events[i];
    const std::uint32_t line = i < s.lines.size() ? s.lines[i] : 0;
    if (auto why = not_enabled(w, cfg, ev); !why.empty()) {
      c.run.failed_at = i;
      c.run.line = line;
      c.run.error = script::ParseError{line, 1, "event '" + event_text(ev) + "' cannot happen: " + why};
      return c;
    }
    std::vector<spec::lazytlb::Violation> bad;
    if (!checked_step(cfg, w, ev, costs, log, bad)) {
      c.run.failed_at = i;
      c.run.line = line;
      c.run.steps = i + 1;
      c.violations = std::move(bad);
      check_rows(i + 1);
      return c;
    }
    c.run.steps = i + 1;
    check_rows(i + 1);
    judge_later(i + 1);
  }
  for (const auto& l : later)  // the run ended before their exit or fork step
    if (c.off.size() < 50)
      c.off.push_back({l.x, (l.x.exit_step ? "exit step " + std::to_string(l.x.exit_step)
                                           : "fork step " + std::to_string(l.x.fork_step)) +
                                " never reached"});
  return c;
}

}  // namespace kacct::model::lazytlb
