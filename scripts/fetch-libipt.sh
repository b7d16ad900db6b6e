#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# scripts/fetch-libipt.sh DIR
#
# Fetch libipt (Intel's reference Intel PT decoder, our test oracle and
# benchmark peer) from Debian's source package `intel-processor-trace' into
# DIR and build its pttc and ptdump into DIR/build. Idempotent: what is
# already in DIR is reused.
#
# Result:
#   DIR/src           -> the unpacked tree (libipt-VERSION)
#   DIR/build/bin/pttc, DIR/build/bin/ptdump
#   DIR/VERSION       the upstream version fetched
#
# Only the upstream tarball (*.orig.tar.gz) is needed, and some mirrors
# (proxies) 404 on the .dsc or on individual tarballs, so every version the
# archive lists is tried and whatever tarball arrives is checked against the
# Sources index's sha256. apt-get runs on a private source list and private
# state, so the system's apt configuration is neither needed nor touched.
#
# Environment:
#   LIBIPT_ORIG=FILE   use this intel-processor-trace_*.orig.tar.gz instead of
#                      downloading (still checked against the index when the
#                      index is available)
#   LIBIPT_PREFER=VER  the upstream version to try first (default 2.1.2, the
#                      one our suite expectations are validated against)
set -euo pipefail

usage() {
	echo "usage: $0 DIR" >&2
	exit 2
}

[[ $# -eq 1 ]] || usage
mkdir -p "$1"
DIR=$(cd "$1" && pwd)
PKG=intel-processor-trace
SUITES="bookworm trixie sid"
MIRROR=http://deb.debian.org/debian
PREFER=${LIBIPT_PREFER:-2.1.2}
RETRIES=3

log() { echo "fetch-libipt: $*" >&2; }
die() { log "error: $*"; exit 1; }

APT_DIR=$DIR/apt
APT_OPTS=(
	-o "Dir::Etc::SourceList=$APT_DIR/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$APT_DIR/lists"
	-o "Dir::Cache=$APT_DIR/cache"
	-q
)
# apt drops to the _apt user for downloads when run as root; that user
# cannot write into arbitrary directories (e.g. under a home directory).
[[ $(id -u) -eq 0 ]] && APT_OPTS+=(-o APT::Sandbox::User=root)

apt_setup() {
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	local s
	for s in $SUITES; do
		echo "deb-src $MIRROR $s main"
	done > "$APT_DIR/sources.list"
}

with_retries() {
	local i
	for ((i = 1; i <= RETRIES; i++)); do
		"$@" && return 0
		log "attempt $i/$RETRIES failed: $*"
		sleep $((i * 2))
	done
	return 1
}

apt_update() {
	apt_setup
	with_retries apt-get "${APT_OPTS[@]}" update >&2
}

# "VERSION SHA256 SIZE FILENAME" for every orig tarball the index lists.
list_origs() {
	apt-cache "${APT_OPTS[@]}" showsrc "$PKG" | awk '
		/^Package:/ { ver = ""; sums = 0 }
		/^Version:/ { ver = $2 }
		/^[^ ]/ && !/^Checksums-Sha256:/ { sums = 0 }
		/^Checksums-Sha256:/ { sums = 1; next }
		sums && $3 ~ /\.orig\.tar\.(gz|xz|bz2)$/ { print ver, $1, $2, $3 }
	' | sort -u
}

# Order versions: the preferred upstream version first, then newest first.
order_origs() {
	awk -v pref="$PREFER" '{
		up = $1; sub(/^[0-9]+:/, "", up); sub(/-[^-]*$/, "", up)
		print (up == pref ? 0 : 1), $0
	}' | sort -k1,1n -k2,2Vr | cut -d' ' -f2-
}

sha_ok() {
	local file=$1 want=$2
	[[ -f $file ]] || return 1
	[[ $(sha256sum "$file" | cut -d' ' -f1) == "$want" ]]
}

# Download the tarball for one version into $DIR/dl. apt-get exits non-zero
# when the .dsc or .debian.tar.* 404s, which is fine if the tarball arrived.
download_orig() {
	local ver=$1 sha=$2 file=$3 i
	mkdir -p "$DIR/dl"
	for ((i = 1; i <= RETRIES; i++)); do
		sha_ok "$DIR/dl/$file" "$sha" && return 0
		rm -f "$DIR/dl/$file"
		log "apt-get source --download-only $PKG=$ver (attempt $i/$RETRIES)"
		(cd "$DIR/dl" && apt-get "${APT_OPTS[@]}" source --download-only \
			"$PKG=$ver" >&2) || true
		if [[ -f $DIR/dl/$file ]] && ! sha_ok "$DIR/dl/$file" "$sha"; then
			log "$file: sha256 mismatch, discarding"
			rm -f "$DIR/dl/$file"
		fi
		sha_ok "$DIR/dl/$file" "$sha" && return 0
		sleep $((i * 2))
	done
	return 1
}

unpack() {
	local tarball=$1 top
	# awk reads the whole listing: head would SIGPIPE tar under pipefail.
	top=$(tar -tzf "$tarball" | awk -F/ 'NR == 1 { print $1 }')
	[[ -n $top && $top != . && $top != .. ]] || die "$tarball: no top directory"
	rm -rf "${DIR:?}/$top" "$DIR/src"
	tar -xzf "$tarball" -C "$DIR"
	[[ -f $DIR/$top/CMakeLists.txt ]] || die "$tarball: not a libipt tree"
	ln -sfn "$top" "$DIR/src"
	echo "${top#libipt-}" > "$DIR/VERSION"
	log "fetched $(basename "$tarball") ($(sha256sum "$tarball" | cut -d' ' -f1)) -> $DIR/$top"
	# The Sources indexes (tens of MB) are only needed to fetch.
	rm -rf "$APT_DIR"
}

fetch() {
	if [[ -f $DIR/src/CMakeLists.txt && -f $DIR/VERSION ]]; then
		log "libipt $(cat "$DIR/VERSION") already in $DIR/src"
		return 0
	fi

	local origs="" ver sha size file
	if command -v apt-get >/dev/null && apt_update; then
		origs=$(list_origs | order_origs)
	fi

	if [[ -n ${LIBIPT_ORIG:-} ]]; then
		[[ -f $LIBIPT_ORIG ]] || die "LIBIPT_ORIG=$LIBIPT_ORIG: no such file"
		local have
		have=$(sha256sum "$LIBIPT_ORIG" | cut -d' ' -f1)
		if [[ -n $origs ]] && ! grep -q " $have " <<<"$origs"; then
			die "$LIBIPT_ORIG: sha256 $have is not in the $PKG index"
		fi
		unpack "$LIBIPT_ORIG"
		return 0
	fi

	[[ -n $origs ]] || die "no $PKG source in the Debian index ($SUITES)"
	log "candidates (version sha256 size file):"
	sed 's/^/fetch-libipt:   /' <<<"$origs" >&2

	while read -r ver sha size file; do
		if download_orig "$ver" "$sha" "$file"; then
			log "verified $file: sha256 $sha, $size bytes (source $PKG $ver)"
			unpack "$DIR/dl/$file"
			return 0
		fi
		log "$PKG $ver: no usable $file, trying the next version"
	done <<<"$origs"
	die "could not download any $PKG orig tarball"
}

build() {
	local b=$DIR/build
	# Built with perf_event sideband (pttc's @sb directives, ptdump's
	# --pevent); an older build without it is built again.
	if [[ -x $b/bin/pttc && -x $b/bin/ptdump ]] &&
		grep -qx 'PEVENT:BOOL=ON' "$b/CMakeCache.txt" 2>/dev/null; then
		log "pttc and ptdump already built in $b/bin"
		return 0
	fi
	command -v cmake >/dev/null || die "cmake is needed to build libipt"
	local gen=()
	command -v ninja >/dev/null && gen=(-G Ninja)
	# A stale cache from another source tree would be reused silently.
	[[ -f $b/CMakeCache.txt ]] &&
		! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$(readlink -f "$DIR/src")" \
			"$b/CMakeCache.txt" && rm -rf "$b"
	cmake -S "$DIR/src" -B "$b" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
		-DPTTC=ON -DPTDUMP=ON -DPTXED=OFF -DPTUNIT=OFF -DMAN=OFF \
		-DSIDEBAND=ON -DPEVENT=ON >&2
	cmake --build "$b" -j "$(nproc 2>/dev/null || echo 2)" >&2
	[[ -x $b/bin/pttc && -x $b/bin/ptdump ]] || die "build did not produce pttc/ptdump"
	log "built $b/bin/pttc and $b/bin/ptdump"
}

fetch
build
command -v yasm >/dev/null || log "warning: yasm is not installed; pttc needs it to run"
log "libipt $(cat "$DIR/VERSION"): src $DIR/src, tools $DIR/build/bin"
