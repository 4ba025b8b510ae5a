#!/bin/sh
# The Debian 12 packages smd needs, and the helpers of packaging/bootstrap,
# packaging/check and packaging/fresh-root (which source this file). Each
# list is complete on a `debootstrap --variant=minbase bookworm` root, which
# packaging/fresh-root proves. Installing needs root (or sudo).
#
# Running smd: nothing beyond the libraries the build packages pull in (the
# unit's ExecReload is smctl reload; it was /bin/kill, of procps, before).
# Keep this list and the Depends of packaging/debian/control in step.
SMD_RUN_DEPS=""
# Building smd (packaging/bootstrap): build-essential (gcc, make, libc6-dev;
# dpkg-buildpackage checks for it by name), the autotools (the tree is built
# from git, ./autogen.sh), and the libraries configure requires. libmicrohttpd-dev:
# the metrics endpoint's HTTP (smd.yaml metrics_listen) is libmicrohttpd's, a
# well-kept Debian library, not an HTTP parser of ours facing the network.
SMD_BUILD_DEPS="build-essential autoconf automake libtool pkg-config libibumad-dev libibverbs-dev \
libopensm-dev libyaml-dev libsystemd-dev libcmocka-dev libmicrohttpd-dev"
# Testing (packaging/check), on top of the two lists above:
# ibsim-utils, infiniband-diags, opensm: the emulated fabric and its tools;
# valgrind; python3 (tests that parse JSON); mandoc, groff-base:
# tests/man_lint.sh; systemd: systemd-analyze (tests/unit_check.sh);
# debhelper, dpkg-dev, fakeroot: the Debian package (packaging/deb);
# clang, libclang-rt-14-dev: libFuzzer for make fuzz and fuzz/quick.sh.
SMD_TEST_DEPS="ibsim-utils infiniband-diags opensm valgrind python3 mandoc groff-base systemd \
debhelper dpkg-dev fakeroot clang libclang-rt-14-dev"

# smd_fail MESSAGE: print why this script stops, then fail (return 1).
smd_fail() {
	echo "packaging/${0##*/}: $*" >&2
	return 1
}

# opensm enabled at boot, by a systemd link or a SysV rc link?
smd_opensm_enabled() {
	ls /etc/systemd/system/*.wants/opensm.service /etc/rc[2345].d/S*opensm >/dev/null 2>&1
}

# smd_install_deps PACKAGE...: apt-get install those not installed yet.
# No service starts during the installation (a policy-rc.d that answers
# 101, in place of any the admin has, put back afterwards), and if the
# installation enabled opensm.service, it is disabled again: one subnet
# manager per subnet, and smd is that one.
smd_install_deps() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "Installing missing Debian packages:$missing"
	SUDO=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || { smd_fail "need root (or sudo) to install:$missing"; return 1; }
		SUDO=sudo
	fi
	prc=/usr/sbin/policy-rc.d
	saved=""
	if [ -e "$prc" ]; then
		saved="$prc.smd-saved.$$"
		$SUDO mv "$prc" "$saved" || { smd_fail "cannot move the existing $prc aside"; return 1; }
	fi
	# shellcheck disable=SC2016
	if ! $SUDO sh -c 'printf "#!/bin/sh\n# packaging/deps.sh: no service starts while smd installs packages\nexit 101\n" >"$1" &&
		chmod 755 "$1"' sh "$prc"; then
		[ -z "$saved" ] || $SUDO mv "$saved" "$prc"
		smd_fail "cannot write $prc"
		return 1
	fi
	opensm_before=no
	smd_opensm_enabled && opensm_before=yes
	rc=0
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null ||
		{ rc=$?; smd_fail "apt-get update failed (exit $rc)"; }
	# shellcheck disable=SC2086
	[ $rc != 0 ] || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		$missing </dev/null || { rc=$?; smd_fail "apt-get install$missing failed (exit $rc)"; }
	$SUDO rm -f "$prc"
	[ -z "$saved" ] || $SUDO mv "$saved" "$prc" || smd_fail "could not put $saved back as $prc"
	if [ $opensm_before = no ] && smd_opensm_enabled; then
		echo "Disabling opensm.service, which the installation enabled (run one subnet manager: smd)"
		if command -v systemctl >/dev/null 2>&1; then
			$SUDO systemctl disable opensm.service >/dev/null 2>&1
		fi
		if smd_opensm_enabled; then
			command -v deb-systemd-helper >/dev/null 2>&1 && $SUDO deb-systemd-helper disable opensm.service
			[ ! -e /etc/init.d/opensm ] || $SUDO update-rc.d opensm disable >/dev/null 2>&1
		fi
		smd_opensm_enabled && smd_fail "opensm.service is still enabled; run: systemctl disable opensm.service"
	fi
	return $rc
}

# smd_build DIR [configure args...]: configure (once) and build out of tree.
smd_build() {
	dir=$1; shift
	top=$(cd "$(dirname "$0")/.." && pwd)
	if [ -f "$top/config.status" ]; then
		smd_fail "$top is configured in place (config.status), so it cannot be built in $dir; run 'make distclean' in $top first"
		return 1
	fi
	[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh) || { smd_fail "./autogen.sh failed in $top"; return 1; }
	mkdir -p "$dir" || { smd_fail "cannot create $dir"; return 1; }
	if [ ! -f "$dir/Makefile" ] || [ "$top/configure" -nt "$dir/Makefile" ]; then
		(cd "$dir" && "$top/configure" "$@") || { smd_fail "configure failed in $dir (see $dir/config.log)"; return 1; }
	fi
	make -C "$dir" -j"$(nproc)" || { smd_fail "make failed in $dir"; return 1; }
}
