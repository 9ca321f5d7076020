#!/usr/bin/env bash
# sidebyside.sh — CPU per page of gentlecrawl beside GNU Wget2 and Colly v2.
# Serves Debian's rust-doc HTML with a real nginx on 127.0.0.1,
# crawls the /std/ subtree (or another corpus: CORPUS) with each crawler in turn (A B C A B C …, ROUNDS
# rounds), and prints a Markdown table: pages (200 answers in nginx's access
# log), wall seconds, CPU ms per page ((user+sys)/pages), peak RSS.
#
# Usage: bench/sidebyside.sh            (from anywhere; ROUNDS=3 by default)
#        ROUNDS=5 bench/sidebyside.sh
#        OUTDIR=/dev/shm bench/sidebyside.sh   (every crawler writes its output
#                                              there, e.g. to memory: Wget2's CPU is
#                                              then mostly not the kernel writing files)
#        CORPUS=python3-doc bench/sidebyside.sh   (the whole of python3-doc's HTML;
#        CORPUS=postgresql-doc                     or of postgresql-doc-15's, small
#                                              prose pages; rust-doc, /std/, by default)
# Needs: go, nginx (/usr/sbin/nginx), wget2, /usr/bin/time, the corpus.
# As root, missing wget2 / the corpus / time are installed with apt-get.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
CORPUS=${CORPUS:-rust-doc}
case $CORPUS in
rust-doc) DEFROOT=/usr/share/doc/rust-doc/html SUB=std/ PKG=rust-doc ;;
python3-doc) DEFROOT=/usr/share/doc/python3-doc/html SUB= PKG=python3-doc ;;
postgresql-doc) DEFROOT=/usr/share/doc/postgresql-doc-15/html SUB= PKG=postgresql-doc-15 ;;
*) echo "sidebyside: CORPUS is rust-doc, python3-doc or postgresql-doc" >&2; exit 2 ;;
esac
DOCROOT=${DOCROOT:-$DEFROOT}
NGINX=${NGINX:-/usr/sbin/nginx}
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH/.." && pwd)

die() { echo "sidebyside: $*" >&2; exit 1; }

need_pkg() { # need_pkg CHECK-PATH PACKAGE
	[[ -e $1 ]] && return 0
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		echo "sidebyside: installing $2" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y "$2" >/dev/null ||
			die "apt-get install $2 failed"
	fi
	[[ -e $1 ]] || die "$1 missing: install the Debian package $2"
}
need_pkg "$DOCROOT/${SUB}index.html" "$PKG"
need_pkg /usr/bin/wget2 wget2
need_pkg /usr/bin/time time
[[ -x $NGINX ]] || need_pkg "$NGINX" nginx-light
command -v go >/dev/null || die "go not found in PATH"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sidebyside.XXXXXX")
chmod 755 "$TMP"
NGINX_DIR=$TMP/nginx
cleanup() {
	if [[ -s $NGINX_DIR/nginx.pid ]]; then
		kill "$(cat "$NGINX_DIR/nginx.pid")" 2>/dev/null || true
		sleep 0.3
	fi
	[[ -z ${KEEP:-} && -n ${OUT:-} ]] && rm -rf "$OUT"
	[[ -n ${KEEP:-} ]] && echo "sidebyside: kept $TMP" >&2 && return
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free port: ask the kernel for one.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null) ||
	PORT=$((20000 + RANDOM % 20000))

echo "sidebyside: building gentlecrawl and collycrawl" >&2
(cd "$REPO" && go build -tags pebblegozstd -o "$TMP/gentlecrawl" ./cmd/gentlecrawl) || die "building gentlecrawl failed"
(cd "$BENCH" && go build -o "$TMP/collycrawl" ./cmd/collycrawl) || die "building collycrawl failed"

mkdir -p "$NGINX_DIR/logs"
ACCESS=$NGINX_DIR/logs/access.log
cat >"$NGINX_DIR/nginx.conf" <<CONF
worker_processes 1;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/logs/error.log warn;
events { worker_connections 1024; }
http {
	include /etc/nginx/mime.types;
	default_type application/octet-stream;
	access_log $ACCESS;
	client_body_temp_path $NGINX_DIR/client_body;
	proxy_temp_path $NGINX_DIR/proxy;
	fastcgi_temp_path $NGINX_DIR/fastcgi;
	uwsgi_temp_path $NGINX_DIR/uwsgi;
	scgi_temp_path $NGINX_DIR/scgi;
	sendfile on;
	keepalive_requests 100000;
	gzip on;
	gzip_types text/css application/javascript text/javascript;
	server {
		listen 127.0.0.1:$PORT;
		root $DOCROOT;
	}
}
CONF
"$NGINX" -t -q -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" || die "nginx rejects its configuration"
"$NGINX" -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" || die "nginx did not start"
for _ in $(seq 50); do
	curl -fsS -o /dev/null "http://127.0.0.1:$PORT/${SUB}index.html" 2>/dev/null && break
	sleep 0.1
done
curl -fsS -o /dev/null "http://127.0.0.1:$PORT/${SUB}index.html" || die "nginx does not answer on port $PORT"

BASE=http://127.0.0.1:$PORT/$SUB
SEED=${BASE}index.html
OUT=${OUTDIR:-$TMP}/sidebyside-out.$$

# The command lines, with OUT standing for a fresh per-run directory.
CMD_gentlecrawl="$TMP/gentlecrawl crawl --job OUT/job -q --delay 0 --allow-private-networks --include ^${BASE} $SEED"
CMD_wget2="wget2 -q -r -l inf -np --compression=gzip -P OUT/files $SEED"
CMD_colly="$TMP/collycrawl -parallelism 8 -prefix $BASE $SEED"
CRAWLERS=(gentlecrawl wget2 colly)

mkdir -p "$TMP/logs" # each run's access log (KEEP=1 keeps $TMP)
RESULTS=$TMP/results.tsv # crawler wall user sys rssKB pages
: >"$RESULTS"
for round in $(seq "$ROUNDS"); do
	for c in "${CRAWLERS[@]}"; do
		rm -rf "$OUT"
		mkdir -p "$OUT"
		cmd=CMD_$c
		cmdline=${!cmd//OUT/$OUT}
		: >"$ACCESS" # nginx appends (O_APPEND): truncating starts the count afresh
		# shellcheck disable=SC2086 # word splitting of the command line is wanted
		rc=0
		/usr/bin/time -f '%e %U %S %M' -o "$TMP/time" $cmdline >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
		# wget2 exits 8 when the server answered an error, and rust-doc has
		# links to pages it does not ship (a few 404s for every crawler).
		if [[ $rc != 0 && ! ($c == wget2 && $rc == 8) ]]; then
			tail -5 "$TMP/stderr" >&2
			die "$c exited with status $rc (round $round)"
		fi
		sleep 0.2 # let nginx finish writing the log
		pages=$(awk '$9 == 200' "$ACCESS" | wc -l)
		cp "$ACCESS" "$TMP/logs/$round-$c.log"
		read -r wall user sys rss < <(tail -1 "$TMP/time")
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$wall" "$user" "$sys" "$rss" "$pages" >>"$RESULTS"
		printf 'round %d %-12s pages %6d wall %6.2fs cpu %6.2fs rss %5d MB\n' "$round" "$c" "$pages" "$wall" \
			"$(echo "$user + $sys" | bc)" $((rss / 1024)) >&2
	done
done

echo
echo "$PKG $(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null || echo '?') /$SUB from nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') on 127.0.0.1, $ROUNDS rounds alternating, $(nproc) CPUs, output to $(df --output=fstype "$(dirname "$OUT")" | tail -1) ($(dirname "$OUT"))"
echo
echo "| crawler | pages | wall s (min–max) | CPU ms/page (min–max) | peak RSS MB (min–max) |"
echo "|---|---:|---:|---:|---:|"
for c in "${CRAWLERS[@]}"; do
	awk -F'\t' -v c="$c" '
	function upd(k, v) { if (!(k in lo) || v < lo[k]) lo[k] = v; if (!(k in hi) || v > hi[k]) hi[k] = v }
	$1 == c {
		upd("pages", $6); upd("wall", $2); upd("rss", $5 / 1024)
		upd("cpu", $6 > 0 ? ($3 + $4) * 1000 / $6 : 0)
	}
	function r(k, f) { return lo[k] == hi[k] ? sprintf(f, lo[k]) : sprintf(f "–" f, lo[k], hi[k]) }
	END { printf "| %s | %s | %s | %s | %s |\n", c, r("pages", "%d"), r("wall", "%.2f"), r("cpu", "%.3f"), r("rss", "%.0f") }
	' "$RESULTS"
done
echo
echo "Command lines (PORT=$PORT; OUT a fresh directory per run):"
echo
for c in "${CRAWLERS[@]}"; do
	cmd=CMD_$c
	echo "    ${!cmd//$TMP/\$TMP}"
done
