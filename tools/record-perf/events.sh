# The tracepoints kacct's perf recorders ask for (sourced by record.sh and record-tracedat.sh):
# the scheduler's view, syscalls, interrupts and the tick's hrtimer; the local timer interrupt
# comes with a kernel callchain (its mode: user or kernel).
tracepoints=(sched:sched_switch sched:sched_stat_runtime sched:sched_process_fork sched:sched_process_exit
             raw_syscalls:sys_enter raw_syscalls:sys_exit irq:irq_handler_entry irq:irq_handler_exit
             irq:softirq_entry irq:softirq_exit timer:hrtimer_expire_entry)
timer_tracepoint=irq_vectors:local_timer_entry
