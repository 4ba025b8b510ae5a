#!/bin/sh
# The Debian 12 packages smd needs, and the helpers of packaging/bootstrap,
# packaging/check, packaging/fresh-root and packaging/live-systemd (which
# source this file). Each list is complete on a `debootstrap
# --variant=minbase bookworm` root, which packaging/fresh-root proves.
# Installing needs root (or sudo).
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
# clang, libclang-rt-14-dev: libFuzzer for make fuzz and fuzz/quick.sh;
# systemd-container: systemd-nspawn (packaging/live-systemd).
SMD_TEST_DEPS="ibsim-utils infiniband-diags opensm valgrind python3 mandoc groff-base systemd \
debhelper dpkg-dev fakeroot clang libclang-rt-14-dev systemd-container"

# smd_promtool: print the path of a promtool for tests/metrics_http.sh's
# `promtool check metrics`, or nothing (with a note on stderr). Debian's
# promtool is in the package prometheus (about 96 MB, and its postinst
# enables and starts a Prometheus server): rather than install it, the .deb
# is downloaded and only usr/bin/promtool taken out of it, into
# /var/cache/smd-tools (SMD_TOOL_CACHE), so nothing runs and nothing is
# left installed. packaging/check does this in CI only.
smd_promtool() {
	command -v promtool 2>/dev/null && return 0
	_dir=${SMD_TOOL_CACHE:-/var/cache/smd-tools}
	if [ -x "$_dir/promtool" ]; then
		echo "$_dir/promtool"
		return 0
	fi
	_tmp=$(mktemp -d "${TMPDIR:-/tmp}/smd-promtool.XXXXXX") || return 0
	if (cd "$_tmp" && apt-get download prometheus >/dev/null 2>&1) &&
		dpkg-deb --fsys-tarfile "$_tmp"/prometheus_*.deb | tar -x -C "$_tmp" ./usr/bin/promtool &&
		mkdir -p "$_dir" && cp "$_tmp/usr/bin/promtool" "$_dir/promtool.part" &&
		mv "$_dir/promtool.part" "$_dir/promtool"; then
		echo "$_dir/promtool"
	else
		echo "packaging: promtool not available (apt-get download prometheus failed);" \
			"tests/metrics_http.sh skips its promtool check" >&2
	fi
	rm -rf "$_tmp"
}

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

# smd_mirror: the Debian mirror this machine's apt uses (the first URIs of
# the deb822 sources, else the first deb line, security excluded), else
# deb.debian.org.
smd_mirror() {
	m=""
	[ ! -f /etc/apt/sources.list.d/debian.sources ] ||
		m=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources | grep -v security | head -n 1)
	[ -n "$m" ] || [ ! -f /etc/apt/sources.list ] ||
		m=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' /etc/apt/sources.list | grep -v security | head -n 1)
	m=${m:-http://deb.debian.org/debian}
	echo "${m%/}"
}

# smd_debootstrap ROOT WORKDIR [debootstrap option...]: a Debian 12 minbase
# root in ROOT from smd_mirror (packaging/fresh-root, packaging/live-systemd),
# logs in WORKDIR. Installs debootstrap when missing. Returns 1 with the
# reason in smd_skip_reason when this machine cannot (no debootstrap, mirror
# unreachable, debootstrap failed or over 20 minutes): the callers skip then.
# The cache: a root debootstrap made is kept as a tar file in
# SMD_ROOT_CACHE (default /var/cache/smd-roots; "none": no cache), one per
# mirror and option list, and unpacked instead of a new debootstrap while it
# is under 7 days old (debootstrap takes 30 s on an idle machine, 2-2.5
# minutes on a loaded one; unpacking 2 s). Older files are removed;
# `rm -rf /var/cache/smd-roots` empties it.
smd_debootstrap() {
	root=$1 wd=$2
	shift 2
	smd_skip_reason=""
	mirror=$(smd_mirror)
	cache=${SMD_ROOT_CACHE:-/var/cache/smd-roots}
	tarball=""
	if [ "$cache" != none ]; then
		tarball="$cache/bookworm-minbase-$(echo "$mirror $*" | md5sum | cut -c1-12).tar"
		# expired roots (any mirror or options) and pieces a killed run left
		find "$cache" -maxdepth 1 -name 'bookworm-minbase-*' -mtime +7 -delete 2>/dev/null
		if [ -n "$(find "$tarball" -mtime -7 2>/dev/null)" ]; then
			mkdir -p "$root" && timeout 600 tar -C "$root" --numeric-owner --xattrs -xpf "$tarball" &&
				{ echo "   (unpacked from the cache $tarball)"; return 0; }
			rm -rf "$root" "$tarball"
		fi
	fi
	if ! command -v debootstrap >/dev/null 2>&1; then
		echo "Installing debootstrap"
		timeout 600 env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap \
			</dev/null >"$wd/debootstrap-install.log" 2>&1 || {
			smd_skip_reason="debootstrap is not installed and apt-get install debootstrap failed: $(tail -n 2 "$wd/debootstrap-install.log")"
			return 1
		}
	fi
	# reachable? One small file, bounded: a mirror that does not answer is a skip
	timeout 60 /usr/lib/apt/apt-helper download-file "$mirror/dists/bookworm/Release" "$wd/Release" \
		>"$wd/probe.log" 2>&1 || { smd_skip_reason="mirror $mirror unreachable: $(tail -n 1 "$wd/probe.log")"; return 1; }
	timeout 1200 debootstrap --variant=minbase "$@" bookworm "$root" "$mirror" >"$wd/debootstrap.log" 2>&1 || {
		smd_skip_reason="debootstrap from $mirror failed (exit $?; network or mirror): $(tail -n 3 "$wd/debootstrap.log")"
		return 1
	}
	# into the cache (written aside, then renamed: a concurrent run sees the whole file or none)
	[ -n "$tarball" ] && mkdir -p "$cache" 2>/dev/null &&
		timeout 600 tar -C "$root" --numeric-owner --xattrs -cf "$tarball.$$" . 2>/dev/null &&
		mv "$tarball.$$" "$tarball" || rm -f "$tarball.$$" 2>/dev/null
	return 0
}
