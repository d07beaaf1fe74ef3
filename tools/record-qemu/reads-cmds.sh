# Sourced by the guest /init of the built-kernel reads jobs (irq-reads-init.sh, native-init.sh;
# reads_cpio puts it in the initramfs as /reads-cmds.sh): the command of each reads_modes= name
# (reads-job.sh's names), run from /ltp (LTP copies resources such as getrusage03_child from
# where it started).
reads_cmd() {
	case $1 in
	stress-cpu) echo "stress-ng --cpu 1 --timeout 1s --metrics-brief" ;;
	stress-fork) echo "stress-ng --fork 1 --fork-ops 20 --timeout 2s --metrics-brief" ;;
	stress-wait) echo "stress-ng --wait 1 --wait-ops 10 --timeout 2s --metrics-brief" ;;
	stress-get) echo "stress-ng --get 1 --get-ops 10 --metrics-brief" ;;
	stress-pthread) echo "stress-ng --pthread 1 --pthread-ops 30 --pthread-max 3 --timeout 2s --metrics-brief" ;;
	*) echo "./$1" ;;
	esac
}
