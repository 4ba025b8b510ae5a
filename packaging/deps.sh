#!/bin/sh
# Install the Debian 12 packages smd needs to build and test, if missing.
# Sourced by packaging/bootstrap and packaging/check. Needs root (or sudo).
SMD_BUILD_DEPS="gcc make autoconf automake libtool pkg-config libibumad-dev libibverbs-dev \
libopensm-dev libyaml-dev libsystemd-dev libcmocka-dev"
# mandoc, groff-base: tests/man_lint.sh; systemd: systemd-analyze (tests/unit_check.sh);
# debhelper, dpkg-dev, fakeroot: the Debian package (packaging/deb);
# clang, libclang-rt-14-dev: libFuzzer for make fuzz and fuzz/quick.sh.
SMD_TEST_DEPS="ibsim-utils infiniband-diags opensm valgrind python3 mandoc groff-base systemd \
debhelper dpkg-dev fakeroot clang libclang-rt-14-dev"

smd_install_deps() {
	missing=""
	for p in $SMD_BUILD_DEPS $SMD_TEST_DEPS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "Installing missing Debian packages:$missing"
	SUDO=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "error: need root (or sudo) to install:$missing" >&2; return 1; }
		SUDO=sudo
	fi
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q || return 1
	# shellcheck disable=SC2086
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing </dev/null || return 1
}

# smd_build DIR [configure args...]: configure (once) and build out of tree.
smd_build() {
	dir=$1; shift
	top=$(cd "$(dirname "$0")/.." && pwd)
	[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh) || return 1
	mkdir -p "$dir" || return 1
	if [ ! -f "$dir/Makefile" ] || [ "$top/configure" -nt "$dir/Makefile" ]; then
		(cd "$dir" && "$top/configure" "$@") || return 1
	fi
	make -C "$dir" -j"$(nproc)" || return 1
}
