// Shared helpers for the kacct_trace tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "model/trace/ledger.hpp"

namespace kacct::trace::test {

// 7 header lines: the first event is on line 8.
inline const std::string kHeader =
    "kacct-trace 1\n"
    "cpu POWER9\n"
    "ncpus 2\n"
    "clock ns\n"
    "task 100 pid=100 comm=app nice=0 mm=1\n"
    "task 200 pid=200 comm=batch nice=5 mm=2\n"
    "events\n";

// The hand-computed example of docs/trace-format.md (ledger in ledger_test).
inline const std::string kGolden = kHeader + R"(0    0 switch prev=0 next=100
100  0 syscall_exit
200  1 switch prev=0 next=200
300  1 syscall_exit
400  0 irq_enter vec=5
450  0 irq_exit
450  0 softirq_enter vec=1
500  0 softirq_exit
700  0 syscall_enter nr=3
800  0 switch prev=100 next=0 prev_state=D iowait=1
1000 1 steal ns=100
1100 0 wakeup tid=100
1200 0 idle_enter
1300 1 syscall_enter nr=1
1400 1 exit
1500 1 switch prev=200 next=100 prev_state=X
1600 1 guest_enter
1900 1 guest_exit
2000 0 idle_exit
)";

// Asserts that load(text) fails at line:column with a message containing msg.
inline void expect_error(const std::string& text, uint32_t line, uint32_t column, const std::string& msg) {
  auto r = load(text);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << text;
  EXPECT_EQ(r.error().line, line) << r.error().to_string();
  EXPECT_EQ(r.error().column, column) << r.error().to_string();
  EXPECT_NE(r.error().message.find(msg), std::string::npos) << "message: " << r.error().message << "\nwanted: " << msg;
}

}  // namespace kacct::trace::test
