# Sourced by dev/run and dev/test: installs the Debian 12 packages marketpay needs, if any
# is missing. As root it runs apt-get itself; otherwise it says what to install.

MP_PACKAGES="build-essential autoconf automake pkg-config libfcgi-dev libjson-c-dev
libpq-dev libssl-dev libcurl4-openssl-dev libinih-dev check postgresql-15 nginx-light
spawn-fcgi multiwatch mandoc curl wrk openssl chromium fonts-dejavu-core apache2 systemd jq xxd
clang libclang-rt-14-dev llvm tzdata
patroni etcd-server etcd-client
prometheus
gettext
pgbackrest
debhelper lintian"

mp_install_deps() {
	local missing=() p
	for p in $MP_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "missing Debian packages: ${missing[*]}" >&2
		echo "install them with: sudo apt-get install ${missing[*]}" >&2
		return 1
	fi
	echo "installing: ${missing[*]}"
	# Packages must not start their own nginx or PostgreSQL (port 80, 5432): the stack runs
	# its own. policy-rc.d tells the maintainer scripts not to start services.
	local made_policy=0
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		made_policy=1
	fi
	local rc=0
	DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			"${missing[@]}" >/dev/null || rc=$?
	[ $made_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
	return $rc
}

# Builds out of tree in build/ (configure once, then make); mp_build TOP DIR ARGS... builds in
# TOP/DIR configured with ARGS instead (dev/test's sanitizer build).
mp_build() {
	local top=$1 dir=${2:-build}
	shift $(($# < 2 ? $# : 2))
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
		[ "$top/Makefile.am" -nt "$top/configure" ]; then
		(cd "$top" && autoreconf -fi >/dev/null 2>&1) || { echo "autoreconf failed" >&2; return 1; }
	fi
	mkdir -p "$top/$dir"
	if [ ! -f "$top/$dir/Makefile" ]; then
		(cd "$top/$dir" && ../configure -q "$@") || return 1
	fi
	make -C "$top/$dir" -s -j"$(nproc)" 2>&1 | grep -v '^ar: ' || true
	[ -x "$top/$dir/marketpay-fcgi" ] && [ -x "$top/$dir/marketpayctl" ]
}
