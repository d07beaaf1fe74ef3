// kacct random-trace: a random valid trace from model/trace/builder.hpp, in canonical text.
// `gen` is its old name, kept as an alias for one release ("gen" now means gen vtime).
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "common.hpp"
#include "model/trace/builder.hpp"

namespace kacct::cli {
namespace {

constexpr std::size_t kMaxEvents = 20'000'000;

// Streams: the builder hands over each event as it is made and the text goes out in 1 MB
// pieces, so memory does not grow with --events.
void random_trace_cmd(std::uint64_t seed, const std::string& cpu, std::uint32_t ncpus, std::size_t events,
                      const std::string& out) {
  resolve_cpu(cpu);  // only CPUs of the table: the trace must be runnable by `kacct run`
  trace::BuildSpec spec;
  spec.cpu_model = cpu;
  spec.ncpus = ncpus;
  // The builder takes actions, not events: most actions give one event, some none or a few.
  // Draw actions until the trace has `events` events (every prefix of a valid trace is
  // valid), giving up after as many actions as the old doubling search tried at most.
  std::size_t max_actions = events;
  while (max_actions < 8 * events + 64) max_actions = max_actions * 2 + 16;
  const trace::Header header = trace::build_header(spec);
  if (auto e = trace::check_header(header))
    throw Failure("internal error: generated header is invalid: " + e->to_string());

  const bool to_stdout = out.empty() || out == "-";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(to_stdout ? nullptr : std::fopen(out.c_str(), "wb"),
                                                       std::fclose);
  if (!to_stdout && !file) throw Failure(fmt::format("{}: cannot open for writing: {}", out, std::strerror(errno)));
  std::FILE* f = to_stdout ? stdout : file.get();
  std::string buf;
  auto flush = [&] {
    if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size())
      throw Failure(fmt::format("{}: write error", to_stdout ? "stdout" : out));
    buf.clear();
  };
  trace::append_header(buf, header);
  const std::size_t n = trace::random_trace_stream(seed, spec, events, max_actions, [&](const trace::Event& e) {
    trace::append_event(buf, e);
    if (buf.size() >= (1u << 20)) flush();
  });
  flush();
  if (std::fflush(f) != 0) throw Failure(fmt::format("{}: write error", to_stdout ? "stdout" : out));
  if (to_stdout) return;
  if (std::fclose(file.release()) != 0) throw Failure(fmt::format("{}: write error", out));
  fmt::print(stderr, "kacct: wrote {} ({} events, {} CPUs, seed {})\n", out, n, header.ncpus, seed);
}

}  // namespace

void add_random_trace(CLI::App& app) {
  struct Opts {
    std::uint64_t seed = 0;
    std::string cpu = "POWER9", out;
    std::uint32_t ncpus = 2;
    std::size_t events = 1000;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("random-trace", "Generate a random valid trace (canonical text)");
  cmd->alias("gen");  // the old name, until the next release
  // Parsed here: CLI11 2.1 wraps "-1" and saturates overlong numbers for unsigned options.
  cmd->add_option("--seed", o->seed, "random seed, 0..2^64-1")
      ->required()
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
              return "expected a decimal number 0..18446744073709551615, got '" + s + "'";
            if (s.size() == 20 && s > "18446744073709551615") return "value exceeds 2^64-1";
            return {};
          },
          "UINT64"));
  cmd->add_option("--cpu", o->cpu, "CPU model for the header (default POWER9)");
  cmd->add_option("--ncpus", o->ncpus, "number of CPUs, 1..4")->check(CLI::Range(1u, 4u));
  cmd->add_option("--events", o->events, "number of events (at most 20000000)")
      ->check(CLI::Range(std::size_t{0}, kMaxEvents));
  cmd->add_option("-o,--output", o->out, "output file (default: stdout)");
  cmd->callback([o] { random_trace_cmd(o->seed, o->cpu, o->ncpus, o->events, o->out); });
}

}  // namespace kacct::cli
