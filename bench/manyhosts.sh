#!/usr/bin/env bash
# manyhosts.sh — one crawl of a synthetic web of many hosts on loopback, with
# the crawler's manners as they come (robots.txt, Crawl-delay, the --delay of
# 1 s, conditional GET, host load), measured as a whole process by
# /usr/bin/time: CPU seconds (user+sys), peak RSS, pages fetched.
#
# simweb serves HOSTS hosts of about PAGES pages each (its default mix of
# robots.txt profiles: disallowing, Crawl-delay, 404, 500, redirects …) on
# LOOPBACK addresses 127.0.0.2…, so that the crawler's limit of requests
# in flight per address does not make one address the bottleneck; every
# host is a seed. The crawler is given one --connect-to per host in a
# config file rather than as arguments, and writes its job to OUTDIR.
# simweb is a process of its own: only the crawler is measured.
#
# Usage: bench/manyhosts.sh                      (HOSTS=10000 PAGES=10)
#        HOSTS=1000 PAGES=100 bench/manyhosts.sh
#        HOSTS=1 PAGES=100000 ARGS='--delay 0' bench/manyhosts.sh
#        NICE=5 OUTDIR=/dev/shm bench/manyhosts.sh
# Prints one line: hosts, pages, CPU s, pages per CPU-second, peak RSS MiB,
# wall s, the crawl's stop reason.
# Needs: go, /usr/bin/time.
set -euo pipefail

HOSTS=${HOSTS:-10000}
PAGES=${PAGES:-10}
LOOPBACK=${LOOPBACK:-64}
SEED=${SEED:-1}
NICE=${NICE:-0}
ARGS=${ARGS:-}
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH/.." && pwd)

die() { echo "manyhosts: $*" >&2; exit 1; }
[[ -x /usr/bin/time ]] || die "/usr/bin/time missing (Debian package time)"
command -v go >/dev/null || die "go not found in PATH"
(( LOOPBACK > HOSTS )) && LOOPBACK=$HOSTS

TMP=$(mktemp -d "${OUTDIR:-${TMPDIR:-/tmp}}/manyhosts.XXXXXX")
SWPID=
cleanup() {
	[[ -n $SWPID ]] && kill "$SWPID" 2>/dev/null && wait "$SWPID" 2>/dev/null
	[[ -n ${KEEP:-} ]] && echo "manyhosts: kept $TMP" >&2 && return
	rm -rf "$TMP"
}
trap cleanup EXIT

(cd "$REPO" && go build -tags pebblegozstd -o "$TMP/gentlecrawl" ./cmd/gentlecrawl &&
	go build -o "$TMP/simweb" ./cmd/simweb) || die "build failed"

"$TMP/simweb" --hosts "$HOSTS" --pages "$PAGES" --seed "$SEED" --loopback "$LOOPBACK" \
	--listen 127.0.0.1:0 >"$TMP/simweb.out" 2>&1 &
SWPID=$!
for _ in $(seq 100); do
	grep -q 'press Ctrl-C' "$TMP/simweb.out" && break
	sleep 0.1
done
grep -q 'press Ctrl-C' "$TMP/simweb.out" || die "simweb did not start: $(cat "$TMP/simweb.out")"

# The banner lists the loopback addresses with their port; --print-connect-to
# with the same flags gives each host's address (the port it prints is not
# the server's).
port=$(sed -n 's/^simweb: and on .* loopback addresses: 127\.0\.0\.2:\([0-9]*\).*/\1/p' "$TMP/simweb.out")
[[ -n $port ]] || die "no loopback port in simweb's banner"
"$TMP/simweb" --hosts "$HOSTS" --pages "$PAGES" --seed "$SEED" --loopback "$LOOPBACK" --print-connect-to |
	sed "s/:[0-9]*\$/:$port/; s/^--connect-to //" >"$TMP/connect"
sed 's|:.*||; s|^|http://|; s|$|/|' "$TMP/connect" >"$TMP/seeds"
{
	echo 'connect-to = ['
	sed 's/.*/  "&",/' "$TMP/connect"
	echo ']'
} >"$TMP/crawl.toml"
[[ $(wc -l <"$TMP/seeds") == "$HOSTS" ]] || die "expected $HOSTS hosts from simweb --print-connect-to"

mapfile -t seeds <"$TMP/seeds"
# shellcheck disable=SC2086 # ARGS is split on purpose
nice -n "$NICE" /usr/bin/time -v -o "$TMP/time" \
	"$TMP/gentlecrawl" crawl --job "$TMP/job" -q --allow-private-networks \
	--config "$TMP/crawl.toml" $ARGS "${seeds[@]}" >"$TMP/crawl.out" 2>&1 ||
	die "crawl failed: $(tail -5 "$TMP/crawl.out")"

field() { sed -n "s/^[[:space:]]*$1: //p" "$TMP/time"; }
user=$(field 'User time (seconds)')
sys=$(field 'System time (seconds)')
rss=$(field 'Maximum resident set size (kbytes)')
wall=$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)')
run=$(tail -1 "$TMP/job/runs.jsonl")
pages=$(grep -o '"pages":[0-9]*' <<<"$run" | head -1 | cut -d: -f2)
stopped=$(grep -o '"stopped":"[^"]*"' <<<"$run" | head -1 | cut -d'"' -f4)
awk -v h="$HOSTS" -v p="$pages" -v u="$user" -v s="$sys" -v r="$rss" -v w="$wall" -v st="$stopped" 'BEGIN {
	cpu = u + s
	printf "hosts %d  pages %d  cpu %.1f s  %.0f pages/CPU-s  peak RSS %.0f MiB  wall %s  stopped %s\n",
		h, p, cpu, p / cpu, r / 1024, w, st
}'
