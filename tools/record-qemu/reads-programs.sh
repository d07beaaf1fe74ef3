# Sourced by the guest jobs of the unmodified-program recordings (reads-job.sh in the gen vtime
# guests, from the 9p share; irq-reads-init.sh in the irq-time guests, from the initramfs): the
# programs by name and how each runs, so that every guest runs them alike. Needs CPU (the
# program's CPU) and the LTP tests in /ltp.

# reads_begin MODE O: cmd (MODE's command: an LTP test in /ltp or a stress-ng run) and S (its
# strace directory, made), O/MODE.cmd written; the working directory is /ltp (LTP copies
# resources, getrusage03_child, from where it started)
reads_begin() {
	case $1 in
	stress-cpu) cmd="stress-ng --cpu 1 --timeout 1s --metrics-brief" ;;
	stress-fork) cmd="stress-ng --fork 1 --fork-ops 20 --timeout 2s --metrics-brief" ;;
	stress-wait) cmd="stress-ng --wait 1 --wait-ops 10 --timeout 2s --metrics-brief" ;;
	stress-get) cmd="stress-ng --get 1 --get-ops 10 --metrics-brief" ;;
	stress-pthread) cmd="stress-ng --pthread 1 --pthread-ops 30 --pthread-max 3 --timeout 2s --metrics-brief" ;;
	*) cmd=./$1 ;;
	esac
	cd /ltp
	S=/tmp/$1.strace
	mkdir -p $S
	echo "$cmd" > $2/$1.cmd
}
# strace as tools/record-reads/record.sh runs it (its CPU-time syscalls, decoded structs), then
# -o S/st sh -c 'echo $$ > "$0"; exec "$@"' S/root CMD: the root pid in S/root
READS_STRACE="strace -ff -qq -v -y -s 256 --seccomp-bpf -e trace=getrusage,times,clock_gettime,read,wait4,clock_nanosleep -e signal=none"
# reads_end MODE O: the root pid and the strace files to O
reads_end() {
	cp $S/root $2/$1.root
	mkdir -p $2/$1.strace && cp $S/st.* $2/$1.strace/
	rm -rf $S
}
