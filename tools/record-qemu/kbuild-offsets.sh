# Sourced by the *-offsets.sh scripts: struct offsets from a tools/kernel-build tree without debug
# info, by compiling offsetof()s (linux/kbuild.h's OFFSET) with the flags Kbuild used for one of
# the tree's own objects.
#   kbuild_cmd BUILD_DIR OBJ            the compile command of OBJ (e.g. kernel/fork), compiler only
#   kbuild_offsets BUILD_DIR OBJ OFF_C  compiles OFF_C that way and prints "NAME VALUE" lines
# Kbuild's .cmd files name the command cmd_... in 6.1 and savedcmd_... in 6.12; what follows the
# first ';' (objtool on x86) works on the tree's own object and must not run again.
kbuild_cmd() {
	local f=$1/$(dirname "$2")/.$(basename "$2").o.cmd cmd
	cmd=$(sed -n 's/^\(saved\)\{0,1\}cmd_[^ ]*'"$(basename "$2")"'\.o := \([^;]*\).*/\2/p' "$f" 2>/dev/null)
	[ -n "$cmd" ] || { echo "no compile command in $f" >&2; return 1; }
	echo "$cmd"
}
kbuild_offsets() {
	local cmd out=${3%.c}.s
	cmd=$(kbuild_cmd "$1" "$2") || return 1
	# the same command with our file, to assembly, without the dependency file
	cmd=$(echo "$cmd" | sed -e 's/-Wp,-MMD,[^ ]*//' -e 's| -c -o [^ ]* [^ ]*'"$(basename "$2")"'\.c| -S -o '"$out $3"'|')
	(cd "$1" && eval "$cmd") || return 1
	sed -n 's/.*->\([a-z_]*\) \$\{0,1\}\([0-9]*\) .*/\1 \2/p' "$out"
}
