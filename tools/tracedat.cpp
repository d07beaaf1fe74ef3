#include "tracedat.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <optional>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tracedat_c.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KACCT_TD_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(KACCT_TD_ASAN)
#define KACCT_TD_ASAN 1
#endif
#ifdef KACCT_TD_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace kacct::tracedat {

namespace {
constexpr char kMagic[] = "\x17\x08\x44tracing";
trace::Error error(std::string m) { return trace::Error{0, 0, std::move(m), "trace.dat"}; }

trace::Result<std::map<std::uint64_t, std::uint64_t>> tgids_of(const std::string& path) {
  std::map<std::uint64_t, std::uint64_t> m;
  const std::string base = path.ends_with(".xz") ? path.substr(0, path.size() - 3) : path;
  std::ifstream g(base + ".tgids");
  std::string l;
  for (std::uint32_t n = 1; g && std::getline(g, l); ++n) {
    std::istringstream in(l);
    std::uint64_t tid = 0, tgid = 0;
    std::string rest;
    if (!(in >> tid >> tgid) || (in >> rest)) return error(fmt::format("{}.tgids:{}:1: expected 'tid tgid'", base, n));
    m[tid] = tgid;
  }
  return m;
}
constexpr const char* kUnreadable = "libtracecmd cannot read it: not a trace.dat file, or truncated or damaged";
}  // namespace

bool is_tracedat_data(std::string_view head) { return head.starts_with(std::string_view(kMagic, sizeof kMagic - 1)); }

// The child's stream: frames of a kind and a length, then the payload. kRecord's payload is a
// WireRecord, then the event's name ("system:name"), comm, text, the callchain's addresses and
// its symbols' lengths, then the symbols.
namespace {
// kUnreadableEnds: unreadable, and the child ends (the handle kacct_td_open() abandoned is one more
// than kAbandonedKept). kStackOutside and kPastEnd end a pass as kEnd does: the record `where`
// names is damaged (kacct_td_next()'s -2 and -3).
constexpr std::uint32_t kOpened = 1, kRecord = 2, kEnd = 3, kOutOfMemory = 4, kUnreadableFile = 5, kClosed = 6,
                        kUnreadableEnds = 7, kStackOutside = 8, kPastEnd = 9;
constexpr std::uint32_t kHasName = 1, kHasComm = 2, kHasInfo = 4, kFast = 8;
struct WireRecord {
  std::int32_t cpu, pid;
  std::uint64_t ts;
  std::int64_t missed;
  std::uint32_t flags, event_len, comm_len, info_len, nframes, pad;
};
// The parent's commands: open the file whose descriptor comes with it, one pass (fast or
// library printing), close the file.
constexpr char kOpen = 'O', kPass = 'P', kLibraryPass = 'L', kClose = 'C';

// A command byte, with the descriptor SCM_RIGHTS passed along (else -1); 0 at the socket's end.
char command(int sock, int* fd) {
  char c = 0;
  iovec iov{&c, 1};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
  msghdr m{};
  m.msg_iov = &iov, m.msg_iovlen = 1, m.msg_control = ctl, m.msg_controllen = sizeof ctl;
  ssize_t n;
  while ((n = ::recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
  *fd = -1;
  if (n <= 0) return 0;
  for (cmsghdr* h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) std::memcpy(fd, CMSG_DATA(h), sizeof(int));
  return c;
}

// The child: one file at a time (kOpen ... kClose), one pass per command, until the socket
// closes; after a clean close the parent may give it the next file (Input's idle child), so a
// process opening many small files (tests, fuzz_tracedat) forks once. Its stdout goes to
// /dev/null (libtracecmd printf()s "File possibly truncated"); a crash is the default action of
// the signal (no sanitizer report, no fuzzer artifact: the parent reports it).
// A handle kacct_td_open() abandons (tracecmd_init_data() failed, or unmappable CPU data) stays
// allocated and open, never closed (libtracecmd 3.1.6 crashes closing it); the child goes on to
// the next file until it holds this many, then ends. A new child per abandoned handle made each a
// fork and a fresh heap (page faults, ASan's new chunks): fuzz_tracedat ran 148-152 exec per CPU-s
// that way, 216-236 keeping them (3,000 runs, seeds 1-3); the bound keeps their memory and
// descriptors in check.
constexpr int kAbandonedKept = 64;
[[noreturn]] void serve(int sock, ::kacct_td_where* where) {
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, 1);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE}) ::signal(sig, SIG_DFL);
#ifdef KACCT_TD_ASAN
  // A sanitizer report here (ASan's interceptors see libtraceevent's over-reads) ends the child
  // with exit status 1, reported by the parent like a crash. A fuzzer's death callback, copied at
  // the fork, would also save the input current at the fork (not the one read here) as a crash
  // file and print a second set of final stats (docs/fuzzing.md, fourth round).
  __sanitizer_set_death_callback(nullptr);
#endif
  std::string out;
  auto flush = [&] {
    for (std::size_t done = 0; done < out.size();) {
      const auto n = ::write(sock, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(1);
      done += std::size_t(n);
    }
    out.clear();
  };
  auto put = [&](const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); };
  auto head = [&](std::uint32_t kind, std::size_t len) {
    const std::uint32_t h[2] = {kind, std::uint32_t(len)};
    put(h, sizeof h);
  };
  ::kacct_td* td = nullptr;
  int abandoned_handles = 0;
  for (bool fresh = false;;) {
    int fd = -1;
    const char cmd = command(sock, &fd);
    if (cmd == 0) ::_exit(0);
    if (cmd == kOpen) {
      if (td) kacct_td_close(td);
      td = nullptr;
      if (fd >= 0) {  // libtracecmd opens the file by name, its own descriptor
        char path[64];
        std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int abandoned = 0;
        td = kacct_td_open(path, where, &abandoned);
        ::close(fd);
        if (abandoned && ++abandoned_handles > kAbandonedKept) {
          head(kUnreadableEnds, 0);
          flush();
          ::_exit(0);
        }
      }
      head(td ? kOpened : kUnreadableFile, 0);
      flush();
      fresh = true;
      continue;
    }
    if (cmd == kClose || !td) {
      if (td) kacct_td_close(td);
      td = nullptr;
      head(kClosed, 0);
      flush();
      continue;
    }
    kacct_td_library_print(td, cmd == kLibraryPass);
    if (!fresh) kacct_td_rewind(td);
    fresh = false;
    std::uint32_t end = kEnd;
    for (::kacct_td_event e{};;) {
      const int rc = kacct_td_next(td, &e);
      if (rc == -2 || rc == -3) {
        end = rc == -2 ? kStackOutside : kPastEnd;
        break;
      }
      if (rc < 0) {
        head(kOutOfMemory, 0);
        flush();
        ::_exit(1);
      }
      if (rc == 0) break;
      if (!e.info && e.name) continue;  // a stack with no event before it on its CPU: not a record
      WireRecord w{};
      w.cpu = e.cpu;
      w.pid = e.pid;
      w.ts = e.ts;
      w.missed = e.missed;
      w.flags = (e.name ? kHasName : 0) | (e.comm ? kHasComm : 0) | (e.info ? kHasInfo : 0) | (e.fast ? kFast : 0);
      const std::size_t sys = e.name && e.system ? std::strlen(e.system) : 0;
      w.event_len = e.name ? std::uint32_t(sys + 1 + std::strlen(e.name)) : 0;
      w.comm_len = e.comm ? std::uint32_t(std::strlen(e.comm)) : 0;
      w.info_len = e.info ? e.info_len : 0;
      w.nframes = std::uint32_t(e.nframes);
      std::size_t syms = 0;
      for (int i = 0; i < e.nframes; ++i) syms += std::strlen(e.frames[i]);
      head(kRecord, sizeof w + w.event_len + w.comm_len + w.info_len + 12 * std::size_t(e.nframes) + syms);
      put(&w, sizeof w);
      if (e.name) {
        put(e.system ? e.system : "", sys);
        out.push_back(':');
        put(e.name, w.event_len - sys - 1);
      }
      put(e.comm, w.comm_len);
      put(e.info, w.info_len);
      put(e.addrs, 8 * std::size_t(e.nframes));
      for (int i = 0; i < e.nframes; ++i) {
        const auto l = std::uint32_t(std::strlen(e.frames[i]));
        put(&l, 4);
      }
      for (int i = 0; i < e.nframes; ++i) put(e.frames[i], std::strlen(e.frames[i]));
      if (out.size() >= (std::size_t{1} << 16)) flush();
    }
    head(end, 0);
    flush();
  }
}
}  // namespace

namespace {
// The child a finished Input left with no file open, for the next one (at most one is kept).
struct Idle {
  int pid = -1, sock = -1;
  ::kacct_td_where* where = nullptr;
} idle;

// The reader server (start_reader_server()): a process forked while this one is small, which
// forks the readers from then on. Each reader's `where` is a slot of memory shared since before
// the server's fork; the server forks a short-lived process that forks the reader and exits, so
// the reader is an orphan that goes to this process (a child subreaper), which waits for it as
// for a reader it forked itself. The server writes the reader's pid into the slot.
struct Slot {
  ::kacct_td_where where;
  volatile int pid;
  bool used;  // this process's bookkeeping
};
constexpr int kSlots = 64;
struct Server {
  int sock = -1;
  Slot* slots = nullptr;
} server;

// Every descriptor above 2 closed but `keep` (and the directory's own).
void close_fds_but(int keep) {
  if (DIR* d = ::opendir("/proc/self/fd")) {
    std::vector<int> fds;
    for (dirent* e; (e = ::readdir(d));)
      if (const int fd = std::atoi(e->d_name); fd > 2 && fd != keep && fd != ::dirfd(d)) fds.push_back(fd);
    ::closedir(d);
    for (int fd : fds) ::close(fd);
  }
}

[[noreturn]] void server_main(int ctl, Slot* slots) {
  close_fds_but(ctl);
  for (;;) {
    unsigned char i = 0;
    ssize_t n;
    while ((n = ::recv(ctl, &i, 1, 0)) < 0 && errno == EINTR) {}
    if (n <= 0) ::_exit(0);  // the fuzzer (or whoever started it) is gone
    char ok = 0;
    int sv[2] = {-1, -1};
    if (i < kSlots && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
      slots[i].pid = -1;
      const pid_t mid = ::fork();
      if (mid == 0) {
        const pid_t r = ::fork();
        if (r == 0) {
          ::close(ctl), ::close(sv[0]);
          serve(sv[1], &slots[i].where);
        }
        slots[i].pid = r;
        ::_exit(0);
      }
      ::close(sv[1]);
      while (mid > 0 && ::waitpid(mid, nullptr, 0) < 0 && errno == EINTR) {}
      ok = mid > 0 && slots[i].pid > 0;  // reaped: the reader is the requester's child now
    }
    iovec iov{&ok, 1};
    alignas(cmsghdr) char ctlbuf[CMSG_SPACE(sizeof(int))] = {};
    msghdr m{};
    m.msg_iov = &iov, m.msg_iovlen = 1;
    if (ok) {
      m.msg_control = ctlbuf, m.msg_controllen = sizeof ctlbuf;
      cmsghdr* h = CMSG_FIRSTHDR(&m);
      h->cmsg_level = SOL_SOCKET, h->cmsg_type = SCM_RIGHTS, h->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(h), &sv[0], sizeof(int));
    }
    const bool sent = ::sendmsg(ctl, &m, MSG_NOSIGNAL) == 1;
    if (sv[0] >= 0) ::close(sv[0]);
    if (!sent) ::_exit(0);
  }
}

// A reader from the server: its pid, socket and slot; false: no server, no free slot, or the
// server failed (then the caller forks the reader itself; a broken server is not asked again).
bool from_server(int& pid, int& sock, ::kacct_td_where*& where) {
  if (server.sock < 0) return false;
  int i = 0;
  while (i < kSlots && server.slots[i].used) ++i;
  if (i == kSlots) return false;
  const unsigned char req = static_cast<unsigned char>(i);
  int fd = -1;
  if (::send(server.sock, &req, 1, MSG_NOSIGNAL) != 1 || command(server.sock, &fd) != 1 || fd < 0) {
    if (fd >= 0) ::close(fd);
    ::close(server.sock);
    server.sock = -1;
    return false;
  }
  server.slots[i].used = true;
  pid = server.slots[i].pid, sock = fd, where = &server.slots[i].where;
  return true;
}

void release(::kacct_td_where* where) {
  if (server.slots && where >= &server.slots[0].where && where <= &server.slots[kSlots - 1].where)
    reinterpret_cast<Slot*>(where)->used = false;
  else
    ::munmap(where, sizeof(::kacct_td_where));
}
}  // namespace

bool start_reader_server(const char* reader_asan_options) {
  if (server.sock >= 0) return true;
  constexpr const char* kEnv = "KACCT_TRACEDAT_SERVER";
  if (const char* e = std::getenv(kEnv)) {  // this process is the server, re-executed (below)
    int ctl = -1, mem = -1;
    if (std::sscanf(e, "%d,%d", &ctl, &mem) != 2) ::_exit(1);
    ::unsetenv(kEnv);
    void* m = ::mmap(nullptr, sizeof(Slot) * kSlots, PROT_READ | PROT_WRITE, MAP_SHARED, mem, 0);
    if (m == MAP_FAILED) ::_exit(1);
    ::close(mem);
    server_main(ctl, static_cast<Slot*>(m));
  }
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return false;
  // The slots in a memfd: a re-executed server maps them again.
  const int mem = ::memfd_create("kacct-tracedat-slots", 0);
  if (mem < 0) return false;
  void* m = MAP_FAILED;
  if (::ftruncate(mem, sizeof(Slot) * kSlots) == 0)
    m = ::mmap(nullptr, sizeof(Slot) * kSlots, PROT_READ | PROT_WRITE, MAP_SHARED, mem, 0);
  int sv[2] = {-1, -1};
  if (m == MAP_FAILED || ::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) {
    if (m != MAP_FAILED) ::munmap(m, sizeof(Slot) * kSlots);
    ::close(mem);
    return false;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(sv[0]);
    if (reader_asan_options) {  // the same binary, its sanitizer options with these added
      std::vector<std::string> env;
      std::string asan = "ASAN_OPTIONS=";
      for (char** e = environ; *e; ++e)
        if (std::string_view(*e).starts_with("ASAN_OPTIONS="))
          asan = *e;
        else
          env.emplace_back(*e);
      env.push_back(asan + (asan.size() > 13 ? ":" : "") + reader_asan_options);
      env.push_back(fmt::format("{}={},{}", kEnv, sv[1], mem));
      std::vector<char*> envp;
      for (auto& x : env) envp.push_back(x.data());
      envp.push_back(nullptr);
      char arg0[] = "kacct-tracedat-server";
      char* argv[] = {arg0, nullptr};
      ::execve("/proc/self/exe", argv, envp.data());
    }
    ::close(mem);
    server_main(sv[1], static_cast<Slot*>(m));  // not re-executed: this copy serves
  }
  ::close(sv[1]);
  ::close(mem);
  if (pid < 0) {
    ::close(sv[0]);
    ::munmap(m, sizeof(Slot) * kSlots);
    return false;
  }
  ::fcntl(sv[0], F_SETFD, FD_CLOEXEC);
  server.sock = sv[0];
  server.slots = static_cast<Slot*>(m);
  return true;
}

namespace {
// A walk over a version 6 trace.dat's header (trace-cmd.dat.v6(5)), read as libtracecmd 3.1.6's
// tracecmd_alloc_fd() and read_headers_v6() read it: fixed strings, counts and sizes in the
// file's byte order (a nonzero order byte is big-endian, as tep_read_number() takes it on a
// little-endian host).
class HeaderWalk {
 public:
  HeaderWalk(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return size_ - pos_; }
  bool bytes(void* out, std::size_t n) {
    auto* o = static_cast<char*>(out);
    if (n > left()) return false;
    while (n > 0) {
      if (pos_ < at_ || pos_ >= at_ + len_) {  // refill a window at pos_
        const auto want = std::min<std::uint64_t>(sizeof buf_, left());
        const auto got = ::pread(fd_, buf_, std::size_t(want), off_t(pos_));
        if (got <= 0) return false;
        at_ = pos_, len_ = std::size_t(got);
      }
      const std::size_t k = std::min<std::uint64_t>(n, at_ + len_ - pos_);
      std::memcpy(o, buf_ + (pos_ - at_), k);
      o += k, n -= k, pos_ += k;
    }
    return true;
  }
  bool skip(std::uint64_t n) { return n <= left() && (pos_ += n, true); }
  bool literal(std::string_view s) {
    char b[16];
    return s.size() <= sizeof b && bytes(b, s.size()) && std::memcmp(b, s.data(), s.size()) == 0;
  }
  bool string(std::string& s) {  // up to its NUL, which is read too
    s.clear();
    for (char c; bytes(&c, 1);) {
      if (c == '\0') return true;
      s.push_back(c);
    }
    return false;
  }
  template <class T>
  bool number(T& v) {
    unsigned char b[sizeof(T)];
    if (!bytes(b, sizeof b)) return false;
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < sizeof b; ++i) x |= std::uint64_t(b[big_ ? sizeof b - 1 - i : i]) << (8 * i);
    v = T(x);
    return true;
  }
  void big_endian(bool on) { big_ = on; }

 private:
  int fd_;
  std::uint64_t size_, pos_ = 0, at_ = 0;
  std::size_t len_ = 0;
  bool big_ = false;
  char buf_[4096];
};

// libtracecmd 3.1.6 reads a version 6 file's CPU count before its options; when anything after
// it fails, tracecmd_close() visits every CPU the count claims (2^31 - 1: 0.9 s for a 20 kB
// file; 9% of fuzz_tracedat's campaign samples). A flyrecord file lists 16 bytes (the data's
// offset and size) for each CPU after its options: a count the rest of the file has no room for is
// refused here, before the library opens the file. So is a latency file (one text buffer, no
// per-CPU records: kacct has nothing to read in it, and its count is never checked, so the
// library's close loop came back through it). Not refused: a header this walk cannot follow
// (another version, a section past the end: libtracecmd's verdict).
std::optional<std::string> refused_header(int fd, std::uint64_t size) {
  HeaderWalk w(fd, size);
  std::string version;
  if (!w.literal(std::string_view(kMagic, sizeof kMagic - 1)) || !w.string(version)) return std::nullopt;
  if (std::strtol(version.c_str(), nullptr, 10) != 6) return std::nullopt;  // libtracecmd's reading of it
  unsigned char order = 0;
  if (!w.bytes(&order, 1)) return std::nullopt;
  w.big_endian(order != 0);
  std::uint64_t n = 0;
  std::uint32_t count = 0;
  // long size (1), page size (4); the header page's and header event's formats
  if (!w.skip(5) || !w.literal(std::string_view("header_page", 12)) || !w.number(n) || !w.skip(n) ||
      !w.literal(std::string_view("header_event", 13)) || !w.number(n) || !w.skip(n) || !w.number(count))
    return std::nullopt;
  for (std::uint32_t i = 0; i < count; ++i)  // ftrace's own event formats
    if (!w.number(n) || !w.skip(n)) return std::nullopt;
  std::uint32_t systems = 0;
  if (!w.number(systems)) return std::nullopt;
  for (std::uint32_t i = 0; i < systems; ++i) {  // each system's name and event formats
    std::string name;
    if (!w.string(name) || !w.number(count)) return std::nullopt;
    for (std::uint32_t j = 0; j < count; ++j)
      if (!w.number(n) || !w.skip(n)) return std::nullopt;
  }
  std::uint32_t kallsyms = 0, printk = 0, cpus = 0;
  if (!w.number(kallsyms) || !w.skip(kallsyms) || !w.number(printk) || !w.skip(printk) || !w.number(n) || !w.skip(n) ||
      !w.number(cpus))
    return std::nullopt;
  const std::uint64_t at = w.pos() - 4, after = w.left();
  // the 10-byte type after the options (each a 2-byte id, 4-byte size, data; id 0 ends)
  char type[10];
  bool read = w.bytes(type, sizeof type);
  if (read && std::memcmp(type, "options", 7) == 0) {
    for (std::uint16_t id = 1; read && id != 0;) {
      std::uint32_t len = 0;
      read = w.number(id) && (id == 0 || (w.number(len) && w.skip(len)));
    }
    read = read && w.bytes(type, sizeof type);
  }
  if (read && std::memcmp(type, "latency", 7) == 0)
    return std::string(
        "a latency trace.dat (trace-cmd's record of a latency tracer: one text buffer, no per-CPU "
        "records), which kacct does not read");
  if (std::uint64_t{cpus} * 16 <= after) return std::nullopt;
  return fmt::format(
      "the file claims {} CPUs (the count at offset {}), but a version 6 trace.dat lists 16 bytes for each CPU's "
      "data after it and only {} bytes follow: damaged trace.dat",
      cpus, at, after);
}
}  // namespace

// Every record takes at least 8 bytes of the file (a 4-byte event header and a data word), and a
// PERF_RECORD_LOST record comes with one: a pass of more than size / 4 records is libtracecmd
// reading freed memory (a damaged page: seen under the fuzzer, records without end).
Input::Input(int fd, std::map<std::uint64_t, std::uint64_t> tgids) : fd_(fd), tgid_(std::move(tgids)) {
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
    file_bytes_ = std::uint64_t(st.st_size);
    max_records_ = std::max<std::uint64_t>(64, file_bytes_ / 4);
  }
}

// The child is kept after a small file only: closing a large one in the child (freeing its
// parsed kallsyms and formats: 56M instructions for the 17 MB fixture) costs more than a fork.
Input::~Input() {
  struct stat st {};
  stop(::fstat(fd_, &st) == 0 && st.st_size < (off_t{1} << 20));
  if (fd_ >= 0) ::close(fd_);
}

// A child with the file open (the idle one, or a new one), or false when it could not open it
// (libtracecmd failed or crashed: the file is damaged, truncated, or not a trace.dat).
bool Input::spawn() {
  if (idle.pid >= 0) {
    pid_ = idle.pid, sock_ = idle.sock, where_ = idle.where;
    idle = Idle{};
  } else if (from_server(pid_, sock_, where_)) {
  } else {
    void* m = ::mmap(nullptr, sizeof(::kacct_td_where), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      const int e = errno;
      ::munmap(m, sizeof(::kacct_td_where));
      throw Failure(fmt::format("cannot make a socket for the trace.dat reader: {}", std::strerror(e)), false);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      ::close(sv[0]), ::close(sv[1]);
      ::munmap(m, sizeof(::kacct_td_where));
      throw Failure(fmt::format("cannot start the trace.dat reader: {}", std::strerror(e)), false);
    }
    if (pid == 0) {    // only its socket and stdio: another child's socket kept open here would
      ::close(sv[0]);  // keep that child from seeing its end (and the parent waits for it)
      close_fds_but(sv[1]);
      serve(sv[1], static_cast<::kacct_td_where*>(m));
    }
    ::close(sv[1]);
    pid_ = pid, sock_ = sv[0], where_ = static_cast<::kacct_td_where*>(m);
  }
  *where_ = ::kacct_td_where{};
  where_->cpu = -1;
  state_ = State::Idle;
  rpos_ = rend_ = 0;
  char cmd = kOpen;
  iovec iov{&cmd, 1};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &iov, m.msg_iovlen = 1;
  if (fd_ >= 0) {
    m.msg_control = ctl, m.msg_controllen = sizeof ctl;
    cmsghdr* h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET, h->cmsg_type = SCM_RIGHTS, h->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(h), &fd_, sizeof(int));
  }
  const bool sent = ::sendmsg(sock_, &m, MSG_NOSIGNAL) == 1;
  const std::uint32_t kind = sent ? frame() : 0;
  if (kind == kOpened) return true;
  state_ = State::Ended;
  stop(kind == kUnreadableFile);  // a clean refusal keeps the child; a crash ended it
  return false;
}

// The child, left idle for the next Input when `keep` and it closes the file cleanly (else it
// ends: an idle child when its socket closes, one in the middle of a pass killed).
void Input::stop(bool keep) {
  if (pid_ < 0) return;
  if (keep && state_ != State::Streaming && idle.pid < 0) {
    const char cmd = kClose;
    rpos_ = rend_ = 0;
    if (::send(sock_, &cmd, 1, MSG_NOSIGNAL) == 1 && frame() == kClosed) {
      idle = Idle{pid_, sock_, where_};
      pid_ = sock_ = -1;
      where_ = nullptr;
      return;
    }
  }
  ::close(sock_);
  if (state_ == State::Streaming) ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
  release(where_);
  pid_ = sock_ = -1;
  where_ = nullptr;
}

namespace {
std::string where_text(const ::kacct_td_where& w) {
  return w.cpu < 0 ? std::string("before any record")
                   : fmt::format("at CPU {}'s record at file offset {}", int(w.cpu),
                                 static_cast<unsigned long long>(w.offset));
}
}  // namespace

// The child died or broke the stream in a pass: say where it was, then no more records.
void Input::fail(const char* what) {
  int st = 0;
  ::close(sock_);
  sock_ = -1;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
  state_ = State::Ended;
  const ::kacct_td_where w = *where_;
  release(where_);
  where_ = nullptr;
  const char* call = kacct_td_call_name(w.call);
  const char* sig = WIFSIGNALED(st) ? ::sigabbrev_np(WTERMSIG(st)) : nullptr;
  std::string how = WIFSIGNALED(st)                         ? fmt::format("crashed (SIG{})", sig ? sig : "?")
                    : WIFEXITED(st) && WEXITSTATUS(st) != 0 ? fmt::format("failed (exit status {})", WEXITSTATUS(st))
                                                            : std::string(what);
  throw Failure(fmt::format("{} {} {}, after {} records: damaged trace.dat (no partial trace is used)",
                            call ? call : "kacct's trace.dat reader", how, where_text(w), n_),
                call != nullptr);
}

// At least n bytes from rpos_ in rbuf_; false: the stream ended first.
bool Input::fill(std::size_t n) {
  if (rend_ - rpos_ >= n) return true;
  if (rpos_ > 0) {
    std::memmove(rbuf_.data(), rbuf_.data() + rpos_, rend_ - rpos_);
    rend_ -= rpos_, rpos_ = 0;
  }
  if (rbuf_.size() < std::max<std::size_t>(n, std::size_t{1} << 16)) rbuf_.resize(std::max<std::size_t>(n, 1 << 16));
  while (rend_ < n) {
    const auto got = ::read(sock_, rbuf_.data() + rend_, rbuf_.size() - rend_);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    rend_ += std::size_t(got);
  }
  return true;
}

std::uint32_t Input::frame() {
  if (!fill(8)) return 0;
  std::uint32_t h[2];
  std::memcpy(h, rbuf_.data() + rpos_, 8);
  if (h[1] > (1u << 28) || !fill(8 + std::size_t(h[1]))) return 0;
  rpos_ += 8 + std::size_t(h[1]);
  len_ = h[1];
  return h[0];
}

trace::Result<std::unique_ptr<Input>> Input::open(const std::string& path) {
  auto t = tgids_of(path);
  if (!t) return t.error();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error(kUnreadable);
  std::unique_ptr<Input> in(new Input(fd, std::move(t.value())));
  if (auto why = refused_header(in->fd_, in->file_bytes_)) return error(std::move(*why));
  if (!in->spawn()) return error(kUnreadable);
  return in;
}

trace::Result<std::unique_ptr<Input>> Input::open_data(std::string_view data, const std::string& name) {
  auto t = tgids_of(name);
  if (!t) return t.error();
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/kacct-tracedat-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    return error(
        fmt::format("cannot create a temporary file in {}: {}", tmpl.substr(0, tmpl.rfind('/')), std::strerror(errno)));
  ::unlink(tmpl.c_str());
  for (std::size_t done = 0; done < data.size();) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      return error(fmt::format("cannot write a temporary file: {}", std::strerror(e)));
    }
    done += std::size_t(n);
  }
  std::unique_ptr<Input> in(new Input(fd, std::move(t.value())));
  if (auto why = refused_header(in->fd_, in->file_bytes_)) return error(std::move(*why));
  if (!in->spawn()) return error(kUnreadable);
  return in;
}

void Input::library_print(bool on) { library_print_ = on; }

std::uint64_t Input::fast_printed() const { return fast_n_; }

bool Input::fast() const { return fast_; }

void Input::rewind() {
  if (state_ == State::Streaming || pid_ < 0) {  // left in the middle (or the child died): a new one
    stop(false);
    if (!spawn()) throw Failure(std::string(kUnreadable), true);
  }
  state_ = State::Idle;
  n_ = 0;
  pending_lost_ = false;
}

bool Input::next(trace::perf::Record& r) {
  if (pending_lost_) {  // the event after a PERF_RECORD_LOST record
    pending_lost_ = false;
    r = std::move(held_);
    addrs_.swap(held_addrs_);
    fast_ = held_fast_;
    r.line = ++n_;
    return true;
  }
  fast_ = false;
  if (state_ == State::Ended) return false;
  if (n_ >= max_records_) {
    stop(false);
    state_ = State::Ended;
    throw Failure(fmt::format("libtracecmd's tracecmd_read_data() gave more than {} records, more than a file of {} "
                              "bytes holds: damaged trace.dat (no partial trace is used)",
                              max_records_, file_bytes_),
                  true);
  }
  if (state_ == State::Idle) {
    const char cmd = library_print_ ? kLibraryPass : kPass;
    if (::send(sock_, &cmd, 1, MSG_NOSIGNAL) != 1) fail("closed its socket");
    state_ = State::Streaming;
  }
  const std::uint32_t kind = frame();
  if (kind == kEnd) {
    state_ = State::Ended;
    return false;
  }
  if (kind == kOutOfMemory) throw std::bad_alloc();
  if (kind == kStackOutside || kind == kPastEnd) {  // the child waits for the next pass, as after kEnd
    state_ = State::Ended;
    const std::string what =
        kind == kStackOutside
            ? std::string("a kernel_stack record's caller[] (where its format puts it) lies outside the record")
            : fmt::format(
                  "a record lies past the end of the file ({} bytes: libtracecmd read it from beyond the "
                  "file's data)",
                  file_bytes_);
    throw Failure(fmt::format("{}, {}, after {} records: damaged trace.dat (no partial trace is used)", what,
                              where_text(*where_), n_),
                  true);
  }
  if (kind != kRecord || len_ < sizeof(WireRecord)) fail("ended its stream early");
  const char* p = rbuf_.data() + rpos_ - len_;
  WireRecord e;
  std::memcpy(&e, p, sizeof e);
  p += sizeof e;
  if (sizeof e + std::size_t(e.event_len) + e.comm_len + e.info_len + 12 * std::size_t(e.nframes) > len_)
    fail("sent a broken record");
  const std::string_view name(p, e.event_len), comm_in(p + e.event_len, e.comm_len),
      info(p + e.event_len + e.comm_len, e.info_len);
  p += e.event_len + e.comm_len + e.info_len;
  fast_ = (e.flags & kFast) != 0;
  fast_n_ += fast_;
  // A fresh record, its strings' storage reused.
  std::string comm = std::move(r.comm), event = std::move(r.event), fields = std::move(r.fields);
  std::vector<std::string> chain = std::move(r.chain);
  r = trace::perf::Record{};
  r.cpu = std::uint32_t(e.cpu);
  r.ts = e.ts;
  if (e.flags & kHasName)
    event.assign(name);
  else
    event.assign("unknown:id");
  r.event = std::move(event);
  r.tid = e.pid > 0 ? std::uint64_t(e.pid) : 0;
  if (e.pid == 0)
    comm.assign("swapper");
  else if ((e.flags & kHasComm) && !comm_in.empty())
    comm.assign(comm_in);
  else
    comm.assign("<...>");
  r.comm = std::move(comm);
  if (e.pid == 0)
    r.pid = 0;
  else if (auto g = tgid_.find(r.tid); g != tgid_.end())
    r.pid = g->second;
  fields.clear();
  if (e.flags & kHasInfo) fields.assign(info);
  r.fields = std::move(fields);
  chain.resize(e.nframes);
  addrs_.resize(e.nframes);
  if (e.nframes) std::memcpy(addrs_.data(), p, 8 * std::size_t(e.nframes));
  const char* lens = p + 8 * std::size_t(e.nframes);
  const char* sym = lens + 4 * std::size_t(e.nframes);
  const char* const end = rbuf_.data() + rpos_;
  for (std::uint32_t i = 0; i < e.nframes; ++i) {
    std::uint32_t l;
    std::memcpy(&l, lens + 4 * std::size_t(i), 4);
    if (l > std::size_t(end - sym)) fail("sent a broken record");
    chain[i].assign(sym, l);
    sym += l;
  }
  r.chain = std::move(chain);
  if (e.missed != 0) {  // as perf script --show-lost-events shows it (-1: a number not known)
    held_ = std::move(r);
    held_addrs_.swap(addrs_);
    addrs_.clear();
    pending_lost_ = true;
    held_fast_ = fast_;
    fast_ = false;
    r = trace::perf::Record{};
    r.cpu = held_.cpu;
    r.ts = held_.ts;
    r.tid = held_.tid;
    r.pid = held_.pid;
    r.comm = held_.comm;
    r.event = "PERF_RECORD_LOST";
    r.fields = fmt::format("lost {}", e.missed > 0 ? e.missed : 1);
  }
  r.line = ++n_;
  return true;
}

// One record as perf script prints it with -F comm,pid,tid,cpu,time,event,trace,ip,sym (the
// event's ip/sym are not in trace.dat and not needed), its callchain as frame lines.
void Input::render(const trace::perf::Record& r, const std::vector<std::uint64_t>& addrs, std::string& out) {
  // By hand, not fmt::format_to: formatting was a sixth of a trace.dat conversion's instructions.
  auto dec = [&out](std::uint64_t v, int min_digits) {
    char d[20];
    int n = 0;
    do d[n++] = char('0' + v % 10), v /= 10;
    while (v);
    for (; n < min_digits; ++n) d[n] = '0';
    while (n) out.push_back(d[--n]);
  };
  out.append(r.comm);
  out.push_back(' ');
  if (r.pid) dec(*r.pid, 1), out.push_back('/');
  dec(r.tid, 1);
  out.append(" [");
  dec(r.cpu, 3);
  out.append("] ");
  dec(r.ts / 1'000'000'000, 1);
  out.push_back('.');
  dec(r.ts % 1'000'000'000, 9);
  out.append(": ");
  out.append(r.event);
  out.append(r.event == "PERF_RECORD_LOST" ? " " : ": ");
  const std::size_t at = out.size();
  out.append(r.fields);
  std::replace(out.begin() + std::ptrdiff_t(at), out.end(), '\n', ' ');
  out.push_back('\n');
  for (std::size_t i = 0; i < r.chain.size(); ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::uint64_t a = i < addrs.size() ? addrs[i] : 0;
    out.push_back('\t');
    for (int sh = 60; sh >= 0; sh -= 4) out.push_back(kHex[(a >> sh) & 15]);
    out.push_back(' ');
    out.append(r.chain[i]);
    out.push_back('\n');
  }
}

trace::perf::Source Input::text() {
  trace::perf::Source s;
  s.next = [this]() -> std::string_view {
    text_.clear();
    while (text_.size() < (std::size_t{1} << 20) && next(scratch_)) render(scratch_, addrs_, text_);
    return text_;
  };
  s.rewind = [this] { rewind(); };
  return s;
}

namespace {
trace::Result<std::vector<trace::perf::Record>> all(trace::Result<std::unique_ptr<Input>> in, bool library_print) {
  if (!in) return in.error();
  in.value()->library_print(library_print);
  std::vector<trace::perf::Record> out;
  try {
    for (trace::perf::Record r; in.value()->next(r);) out.push_back(std::move(r));
  } catch (const Failure& f) { return error(f.what()); }
  return out;
}
}  // namespace

trace::Result<std::vector<trace::perf::Record>> read(const std::string& path, bool library_print) {
  return all(Input::open(path), library_print);
}
trace::Result<std::vector<trace::perf::Record>> read_data(std::string_view data, const std::string& name,
                                                          bool library_print) {
  return all(Input::open_data(data, name), library_print);
}

}  // namespace kacct::tracedat
