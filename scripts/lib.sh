# Shared by scripts/moat and scripts/test: installing what is missing, building.
# shellcheck shell=sh

# Debian packages the build needs, and those only the tests need.
BUILD_PKGS="gcc libc6-dev musl-tools cmake ninja-build pkg-config libseccomp-dev libevent-dev \
libmsgpack-dev libcap-ng-dev libcmocka-dev libjansson-dev"
TEST_PKGS="clang libclang-rt-14-dev clang-format python3 strace util-linux procps bubblewrap"

say() { printf 'moat: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

# Installs every named Debian package that is not installed yet.
ensure_packages() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		die "missing packages:$missing (no apt-get here: install them by hand)"
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "missing packages:$missing (run as root, or install sudo)"
		sudo=sudo
	fi
	say "installing:$missing"
	$sudo apt-get update -qq >&2 || die "apt-get update failed"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		$missing >&2 || die "apt-get install failed:$missing"
}

# build DIR [cmake options...]: configures DIR once, then builds what changed.
# The output goes to DIR/build.log and is shown only when the build fails.
build() {
	dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		cmake -S "$MOAT_ROOT" -B "$dir" -G Ninja "$@" >"$dir.log" 2>&1 ||
			{ cat "$dir.log" >&2; die "configuring $dir failed"; }
	fi
	ninja -C "$dir" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; die "building $dir failed"; }
	rm -f "$dir.log"
}
