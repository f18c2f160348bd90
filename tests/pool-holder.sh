#!/usr/bin/env bash
# What systemd does for marketpay-fcgi@.socket and marketpay-fcgi@.service, where systemd is
# not PID 1 (tests/stack.sh with MP_POOL=systemd). Run by systemd-socket-activate, which
# passes the listening sockets as fd 3 on (LISTEN_FDS=1, or 2 with the reads socket), as the
# socket unit does:
#
#   tests/pool-holder.sh DIR PROGRAM [ARGS...]
#
# It holds the socket, as the socket unit does, and starts the pool on it with the LISTEN_FDS
# protocol (LISTEN_PID is the pool's own pid); whenever the pool exits (SIGTERM: a restart,
# as `systemctl restart` stops and starts it), it starts it again, until DIR/pool.stop
# exists. The pool's pid is in DIR/pool.pid. As root the pool runs as nobody (the unit's
# User=).
set -u
dir=$1
shift
as=()
[ "$(id -u)" = 0 ] && as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
while [ ! -e "$dir/pool.stop" ]; do
	(
		export LISTEN_PID=$BASHPID
		exec "${as[@]}" "$@"
	) &
	echo $! >"$dir/pool.pid"
	wait $!
done
