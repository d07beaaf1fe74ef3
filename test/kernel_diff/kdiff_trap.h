/* The trap handler shared by the builds of the kernel functions (kdiff_trap.c). */
#pragma once
#include <setjmp.h>

extern sigjmp_buf* kd_trap_target;
void kd_arm_traps(void);
