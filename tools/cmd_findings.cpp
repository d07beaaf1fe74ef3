// kacct findings: the kernel bugs kacct found and reports upstream (docs/findings/), each with
// its kacct-local proposed fix (arch/patches.hpp rows with `local`; not upstream commits): the
// witness without and with the fix, and with --validate the fix's claims (proofs::validate).
#include <fmt/format.h>

#include <memory>
#include <thread>

#include "common.hpp"
#include "proofs/claims_fixes.hpp"

namespace kacct::cli {
namespace {
using json = nlohmann::ordered_json;

void findings_cmd(bool validate, bool as_json, const std::string& witness, unsigned timeout) {
  const auto ws = proofs::fix_witnesses();
  if (!witness.empty()) {
    for (const auto& w : ws)
      if (w.id == witness || w.file == witness) {
        fmt::print("{}", w.text);
        if (!w.text.empty() && w.text.back() != '\n') fmt::print("\n");
        return;
      }
    throw Failure("--witness: no finding '" + witness + "' (kacct findings lists them)");
  }
  std::vector<proofs::PatchReport> reports;
  if (validate) {
    std::vector<std::string> ids;
    for (const auto& w : ws) ids.push_back(w.id);
    reports = proofs::validate({ids, timeout, std::thread::hardware_concurrency() + 1});
  }
  bool all_fixed = true;
  proofs::Verdict worst = proofs::Verdict::Holds;
  for (const auto& r : reports) worst = proofs::worst(worst, r.worst());
  json a = json::array();
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const auto& w = ws[i];
    all_fixed = all_fixed && w.fixed;
    const auto p = arch::find_patch(w.id);
    if (as_json) {
      json j{{"fix", w.id},
             {"title", p ? std::string(p->title) : ""},
             {"page", "docs/findings/" + w.page + ".md"},
             {"finding", w.finding},
             {"witness", w.file.empty() ? w.text : "test/findings/" + w.file},
             {"command", w.command},
             {"before", w.before},
             {"after", w.after},
             {"fixed", w.fixed}};
      if (validate) j["validate"] = reports[i].json();
      a.push_back(std::move(j));
      continue;
    }
    fmt::print("{}  {}\n  page: docs/findings/{}.md\n  finding: {}\n  witness: {}\n    {}\n", w.id, p ? p->title : "",
               w.page, w.finding, w.file.empty() ? w.text : "test/findings/" + w.file, w.command);
    fmt::print("  without the fix: {}\n  with the fix:    {}\n  verdict: {}\n", w.before, w.after,
               w.fixed ? "finding present before, gone after" : "NOT FIXED");
    if (validate) {
      fmt::print("  kacct validate {}: {}\n", w.id, proofs::name(reports[i].worst()));
      for (const auto& c : reports[i].claims)
        fmt::print("    - {}: {}\n        {}\n", c.name, proofs::name(c.verdict), c.detail);
    }
    fmt::print("\n");
  }
  if (as_json)
    print_json(a);
  else
    fmt::print("{} findings, {} fixed by their kacct-local patch{}\n", ws.size(), all_fixed ? "all" : "NOT all",
               validate ? fmt::format("; validate: {}", proofs::name(worst)) : "");
  if (!all_fixed) throw Exit{kExitViolation};
  if (worst != proofs::Verdict::Holds) throw Exit{proofs::exit_code(worst)};
}

}  // namespace

void add_findings(CLI::App& app) {
  struct Opts {
    bool validate = false, json = false;
    std::string witness;
    unsigned timeout = 30000;
  };
  auto o = std::make_shared<Opts>();
  auto* c = app.add_subcommand("findings",
                               "Kernel bugs kacct found (docs/findings/): each witness without and with its "
                               "kacct-local proposed fix (not upstream)");
  c->add_flag("--validate", o->validate, "also judge each fix's claims (kacct validate ID; Z3, tens of seconds)");
  c->add_flag("--json", o->json, "JSON output");
  c->add_option("--witness", o->witness, "ID: print the finding's witness (trace, script or input) and exit");
  c->add_option("--timeout", o->timeout, "per-query solver timeout in ms (with --validate)");
  c->callback([o] { findings_cmd(o->validate, o->json, o->witness, o->timeout); });
}

}  // namespace kacct::cli
