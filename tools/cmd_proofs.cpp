// kacct prove / kacct validate: front ends of proofs::prove() and proofs::validate().
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

#include "common.hpp"
#include "proofs/verdict.hpp"

namespace kacct::cli {
namespace {
using json = nlohmann::ordered_json;

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

// `text` after `first` (the first line's start), broken at blanks into lines of at most `width`
// columns (a word longer than a line stays whole), continuation lines after `cont`.
std::string wrap(const std::string& text, const std::string& first, const std::string& cont, std::size_t width) {
  std::string out, line = first;
  bool empty = true;  // nothing of text on this line yet
  std::size_t i = 0;
  while (i < text.size()) {
    const auto j = std::min(text.find(' ', i), text.size());
    const auto word = text.substr(i, j - i);
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = cont;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
    i = j + 1;
  }
  return out + line + "\n";
}

std::string known_patches() {
  std::string s;
  for (const auto& p : arch::patches) s += fmt::format("\n  {}  {}", p.id, p.title);
  return s;
}

// A counterexample trace, indented; long ones (tens of thousands of ticks) are cut in the
// middle: the full text is in --json.
void print_trace(const std::string& ce, std::string_view indent) {
  std::vector<std::string_view> lines;
  std::string_view v(ce);
  while (!v.empty()) {
    auto end = v.find('\n');
    lines.push_back(v.substr(0, end));
    if (end == std::string_view::npos) break;
    v.remove_prefix(end + 1);
  }
  constexpr std::size_t kHead = 40, kTail = 10;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines.size() > kHead + kTail + 1 && i == kHead) {
      fmt::print("{}... {} lines omitted (--json has the full trace)\n", indent, lines.size() - kHead - kTail);
      i = lines.size() - kTail - 1;
      continue;
    }
    fmt::print("{}{}\n", indent, lines[i]);
  }
}

// --save-counterexamples: each counterexample to DIR/<safe stem>.<ext>; returns the path.
std::string save_counterexample(const std::string& dir, const std::string& stem, const proofs::Result& r) {
  if (dir.empty() || !r.counterexample) return {};
  std::string safe;
  for (char c : stem) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  std::string ext = r.command.ext;
  if (ext.empty()) {
    const auto& t = *r.counterexample;
    ext = t.starts_with("kacct-trace")               ? "trace"
          : t.find("psi v1") != std::string::npos    ? "psi"
          : t.find("lazytlb 1") != std::string::npos ? "lts"
                                                     : "txt";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / (safe + "." + ext)).string();
  std::ofstream f(path, std::ios::binary);
  f << *r.counterexample;
  if (!f) throw Failure("cannot write " + path);
  return path;
}

// The command that replays a counterexample (or why there is none), under it.
void print_command(const proofs::Result& r, const std::string& file, std::string_view indent) {
  if (r.command.empty()) {
    if (r.verdict == proofs::Verdict::Violated)
      fmt::print("{}replay: {} only; no kacct command replays it{}\n", indent, r.replay,
                 r.counterexample ? "" : " (the inputs are in --json)");
    return;
  }
  fmt::print("{}replay: {}\n", indent, r.command.with_file(file.empty() ? "FILE" : file));
  fmt::print("{}  reports {}, exit {}{}\n", indent,
             r.command.invariant.empty() ? "no invariant violated" : "invariant " + r.command.invariant + " violated",
             r.command.exit, r.command.note.empty() ? "" : " (" + r.command.note + ")");
}

json result_json(const proofs::Result& r, const std::string& file) {
  json j = r.json();
  if (!file.empty()) {
    j["counterexample_file"] = file;
    if (!r.command.empty()) j["command"]["line"] = r.command.with_file(file);
  }
  return j;
}

// --profile: where the time went, costliest first (to stderr, so that --json stays parseable).
// `owner` names the patch of a claim (empty for proof jobs).
struct Timed {
  std::string owner;
  const proofs::Result* r;
};
void print_profile(std::vector<Timed> items, std::string_view what) {
  std::stable_sort(items.begin(), items.end(),
                   [](const Timed& a, const Timed& b) { return a.r->seconds > b.r->seconds; });
  double total = 0;
  for (const auto& t : items) total += t.r->seconds;
  const bool owners = std::any_of(items.begin(), items.end(), [](const Timed& t) { return !t.owner.empty(); });
  std::vector<std::string> head = {"seconds", "share", "cumulative", "verdict", "name"};
  if (owners) head.insert(head.begin() + 4, "patch");
  Table t(head, {true, true, true, false, false, false});
  double cum = 0;
  for (const auto& it : items) {
    cum += it.r->seconds;
    auto pct = [&](double x) { return total > 0 ? fmt::format("{:.1f}%", 100 * x / total) : std::string("-"); };
    std::vector<std::string> row = {fmt::format("{:.2f}", it.r->seconds), pct(it.r->seconds), pct(cum),
                                    proofs::name(it.r->verdict), it.r->name};
    if (owners) row.insert(row.begin() + 4, it.owner);
    t.row(std::move(row));
  }
  fmt::print(stderr, "\nprofile: {} {}, {:.2f} s in all (a result reused from an earlier {} counts 0 s)\n{}",
             items.size(), what, total, what == "claims" ? "claim" : "job", t.str());
}

void prove_cmd(const std::string& given, unsigned timeout, bool as_json, const std::string& save_dir, bool profile,
               bool quiet) {
  const std::string model = arch::canonical_name(given);  // an old spelling still works
  if (!model.empty()) {
    auto models = proofs::proof_models();
    if (std::find(models.begin(), models.end(), model) == models.end())
      throw Failure(fmt::format("unknown proof model '{}'; known: {}", model, join(models, ", ")));
  }
  // One model at a time (proofs::prove("") runs them in this order too), so that each model's
  // rows print as soon as its jobs are decided, with the progress on a terminal's stderr.
  const std::vector<std::string> models = model.empty() ? proofs::proof_models() : std::vector<std::string>{model};
  // The table fits 100 columns: verdict and seconds first, the name last and wrapped at blanks,
  // each job's approximations on wrapped lines under it.
  constexpr std::size_t kWidth = 100, wv = 8, ws = 7;  // "violated", "seconds"
  const std::string pad(wv + ws + 4, ' ');
  if (!as_json)
    fmt::print("{:<{}}  {:>{}}  name\n{}  {}  ----\n", "verdict", wv, "seconds", ws, std::string(wv, '-'),
               std::string(ws, '-'));
  std::vector<proofs::Result> results;
  {
    Progress progress(quiet);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < models.size(); ++k) {
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      progress.show(fmt::format("prove: model {}/{} {} ({} jobs done, {:.0f} s)", k + 1, models.size(), models[k],
                                results.size(), sec));
      auto part = proofs::prove({models[k], timeout});
      progress.clear();
      for (const auto& r : part) {
        if (as_json) continue;
        const auto head =
            fmt::format("{:<{}}  {:>{}}  ", proofs::name(r.verdict), wv, fmt::format("{:.2f}", r.seconds), ws);
        fmt::print("{}", wrap(r.name, head, pad + "  ", kWidth));
        if (!r.approximations.empty())
          fmt::print("{}", wrap(join(r.approximations, "; "), pad + "  approximations: ", pad + "    ", kWidth));
      }
      std::fflush(stdout);
      results.insert(results.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
  }
  proofs::Verdict w = proofs::Verdict::Holds;
  for (const auto& r : results) w = proofs::worst(w, r.verdict);
  if (profile) {
    std::vector<Timed> items;
    for (const auto& r : results) items.push_back({"", &r});
    print_profile(std::move(items), "jobs");
  }
  if (as_json) {
    json a = json::array();
    for (const auto& r : results) a.push_back(result_json(r, save_counterexample(save_dir, r.name, r)));
    print_json(a);
  } else {
    // The scope once per model (jobs are named "<model>.<...>"); each job's own additions are in --json.
    std::vector<std::string> models;
    for (const auto& r : results) {
      const std::string m = r.name.substr(0, r.name.find('.'));
      if (std::find(models.begin(), models.end(), m) != models.end()) continue;
      models.push_back(m);
      const auto sc = proofs::model_scope(m);
      fmt::print("\n{}{}", wrap(join(sc.covers, "; "), "scope of " + m + ": covers ", "  ", kWidth),
                 wrap(join(sc.omits, "; "), "  omits ", "    ", kWidth));
    }
    for (const auto& r : results)
      if (r.verdict != proofs::Verdict::Holds) {
        fmt::print("\n{}: {}: {}\n", r.name, proofs::name(r.verdict), r.detail);
        const auto file = save_counterexample(save_dir, r.name, r);
        if (r.counterexample) {
          fmt::print("  counterexample{}:\n", file.empty() ? "" : " (saved to " + file + ")");
          print_trace(*r.counterexample, "    ");
        }
        print_command(r, file, "  ");
      }
    fmt::print("\n{} obligations, worst verdict: {}\n", results.size(), proofs::name(w));
  }
  if (w != proofs::Verdict::Holds) throw Exit{proofs::exit_code(w)};
}

void validate_cmd(const std::vector<std::string>& ids, unsigned timeout, unsigned jobs, bool as_json,
                  const std::string& save_dir, bool profile, bool quiet) {
  // Ids are hex: any case. Each patch is judged once, however many prefixes name it.
  std::vector<std::string> chosen;
  for (const auto& given : ids) {
    std::string id = given;
    for (auto& c : id) c = char(std::tolower(static_cast<unsigned char>(c)));
    const auto p = arch::find_patch(id);
    if (!p)
      throw Failure(
          fmt::format("unknown patch id '{}' (give >= 7 hex digits); known patches:{}", cut(given), known_patches()));
    if (std::find(chosen.begin(), chosen.end(), p->id) != chosen.end()) {
      fmt::print(stderr, "kacct: note: patch {} given more than once ('{}'); judged once\n", p->id, given);
      continue;
    }
    chosen.emplace_back(p->id);
  }
  const unsigned threads = jobs ? jobs : std::thread::hardware_concurrency() + 1;
  auto print_report = [&](const proofs::PatchReport& r) {
    fmt::print("{}  {}\n  {} -> {}: {}\n", r.patch, r.title, r.before, r.after, proofs::name(r.worst()));
    for (const auto& c : r.claims) {
      fmt::print("  - {}: {} ({:.2f} s)\n", c.name, proofs::name(c.verdict), c.seconds);
      if (!c.detail.empty()) fmt::print("      {}\n", c.detail);
      for (const auto& a : c.approximations) fmt::print("      approximation: {}\n", a);
      fmt::print("      scope: covers {} | omits {}\n", join(c.scope.covers, "; "), join(c.scope.omits, "; "));
      if (c.verdict != proofs::Verdict::Violated) continue;
      const auto file = save_counterexample(save_dir, r.patch + "-" + c.name, c);
      if (c.counterexample) {
        fmt::print("      counterexample{}:\n", file.empty() ? "" : " (saved to " + file + ")");
        print_trace(*c.counterexample, "        ");
      }
      print_command(c, file, "      ");
    }
    fmt::print("\n");
    std::fflush(stdout);
  };
  std::vector<proofs::PatchReport> reports;
  Progress progress(quiet);
  // On a terminal: one patch at a time, each printed as soon as it is judged, with the progress
  // on stderr (the same output; the claims of one patch still run in parallel). Otherwise all
  // patches in one call, whose costliest-first order keeps every thread busy to the end.
  const bool stream = progress.on() && !as_json;
  try {
    // One thread more than CPUs: a claim often waits for a shared result another claim is
    // computing (proofs/memo.hpp). All patches here: -j 2 76 s, -j 3 52 s, same verdicts.
    if (!stream) {
      reports = proofs::validate({chosen, timeout, threads});
    } else {
      std::vector<std::string> all = chosen;
      if (all.empty())
        for (const auto& p : arch::patches) all.emplace_back(p.id);
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t k = 0; k < all.size(); ++k) {
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const auto p = arch::find_patch(all[k]);
        progress.show(fmt::format(
            "validate: patch {}/{} {} ({} claims, {:.0f} s)", k + 1, all.size(), all[k],
            p ? std::count_if(p->claims.begin(), p->claims.end(), [](auto c) { return !c.empty(); }) : 0, sec));
        auto part = proofs::validate({{all[k]}, timeout, threads});
        progress.clear();
        for (auto& r : part) {
          print_report(r);
          reports.push_back(std::move(r));
        }
      }
    }
  } catch (const std::invalid_argument& e) {
    throw Failure(fmt::format("{}; known patches:{}", e.what(), known_patches()));
  }
  proofs::Verdict w = proofs::Verdict::Holds;
  for (const auto& r : reports) w = proofs::worst(w, r.worst());
  if (profile) {
    std::vector<Timed> items;
    for (const auto& r : reports)
      for (const auto& c : r.claims) items.push_back({r.patch, &c});
    print_profile(std::move(items), "claims");
  }
  if (as_json) {
    json a = json::array();
    for (const auto& r : reports) {
      json j = r.json();
      for (std::size_t i = 0; i < r.claims.size(); ++i)
        if (r.claims[i].verdict == proofs::Verdict::Violated)
          j["claims"][i] =
              result_json(r.claims[i], save_counterexample(save_dir, r.patch + "-" + r.claims[i].name, r.claims[i]));
      a.push_back(std::move(j));
    }
    print_json(a);
  } else {
    if (!stream)
      for (const auto& r : reports) print_report(r);
    fmt::print("{} patches, worst verdict: {}\n", reports.size(), proofs::name(w));
  }
  if (w != proofs::Verdict::Holds) throw Exit{proofs::exit_code(w)};
}

}  // namespace

void add_proofs(CLI::App& app) {
  struct Opts {
    std::string model;
    unsigned timeout = 30000;
    unsigned jobs = 0;
    bool json = false;
    std::vector<std::string> patches;
    std::string save;
    bool profile = false;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* prove = app.add_subcommand("prove", "Prove the spec invariants of the models (Z3); exit = worst verdict");
  prove->add_option("--model", o->model, fmt::format("{} (default: all)", join(proofs::proof_models(), " | ")));
  prove->add_option("--timeout-ms", o->timeout, "solver timeout per obligation")->check(CLI::Range(1u, 86'400'000u));
  prove->add_flag("--json", o->json, "JSON output: a list of Result::json()");
  prove->add_option("--save-counterexamples", o->save,
                    "write each counterexample to DIR/<name>.<trace|psi|lts>; the printed command names it");
  prove->add_flag("--profile", o->profile, "also print each job's seconds and verdict, costliest first (to stderr)");
  prove->add_flag("-q,--quiet", o->quiet, "no progress on stderr (shown only when stderr is a terminal)");
  prove->callback([o] { prove_cmd(o->model, o->timeout, o->json, o->save, o->profile, o->quiet); });

  auto p = std::make_shared<Opts>();
  auto* val = app.add_subcommand("validate", "Check the claims of kernel patches (arch/patches.hpp)");
  val->add_option("PATCH", p->patches, "patch ids (>= 7 hex digits; default: all)");
  val->add_option("--timeout-ms", p->timeout, "solver timeout per claim")->check(CLI::Range(1u, 86'400'000u));
  val->add_option("-j,--jobs", p->jobs, "claims judged in parallel (default: one more than CPUs)")
      ->check(CLI::Range(1u, 1024u));
  val->add_flag("--json", p->json, "JSON output: a list of PatchReport::json()");
  val->add_option("--save-counterexamples", p->save,
                  "write each counterexample to DIR/<patch>-<claim>.<trace|psi|lts>; the printed command names it");
  val->add_flag("--profile", p->profile, "also print each claim's seconds and verdict, costliest first (to stderr)");
  val->add_flag("-q,--quiet", p->quiet, "no progress on stderr (shown only when stderr is a terminal)");
  val->callback([p] { validate_cmd(p->patches, p->timeout, p->jobs, p->json, p->save, p->profile, p->quiet); });
}

}  // namespace kacct::cli
