#!/bin/sh
# make pkg: turn the checked payload (make pkg-root) into a flat installer,
# build/pkg/metalcap-VERSION.pkg, with macOS's pkgbuild and productbuild.
# One component per folder of ours (pkg/manifest's "own" lines), rooted at
# it, so that Installer sets the owner and mode of our folders only and
# never of /usr/local or another shared folder; preinstall goes with the
# first component, postinstall (which places links and the LaunchAgent)
# with the last.  Signed when an identity is at hand:
# METALCAP_INSTALLER_IDENTITY, or the first "Developer ID Installer"
# identity in the keychain; unsigned (and said so) otherwise.
# METALCAP_CODESIGN_IDENTITY, when set, re-signs the binaries with it
# (hardened runtime) before they are packed.  Notarized and stapled when
# METALCAP_NOTARY_PROFILE names a notarytool keychain profile (xcrun
# notarytool store-credentials): double-click installs need it, MDM does
# not; said plainly when it is not done.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
out=${1:-$top/build/pkg}
root=$out/root
version=$(cat "$top/VERSION")

[ "$(uname -s)" = Darwin ] || {
	echo "pkg-build: pkgbuild and productbuild exist only on macOS;" \
	    "on Linux, make pkg-root builds and checks the payload" >&2
	exit 2
}
[ -d "$root" ] || { echo "pkg-build: no $root (make pkg-root)" >&2; exit 2; }

if [ -n "${METALCAP_CODESIGN_IDENTITY:-}" ]; then
	for bin in usr/local/libexec/metalcap/metalcapd \
	    usr/local/libexec/metalcap/libmetalcap.dylib \
	    usr/local/libexec/metalcap/metalcapctl; do
		codesign --force --options runtime --timestamp \
		    --sign "$METALCAP_CODESIGN_IDENTITY" "$root/$bin"
	done
	# The probe runs with the shim injected: hardened, it must allow
	# DYLD_* and a library of another team (pkg/entitlements/).
	codesign --force --options runtime --timestamp \
	    --entitlements "$top/pkg/entitlements/metalcap-probe.entitlements" \
	    --sign "$METALCAP_CODESIGN_IDENTITY" \
	    "$root/usr/local/libexec/metalcap/metalcap-probe"
	"$root/usr/local/libexec/metalcap/metalcapctl" check \
	    "$root/usr/local/libexec/metalcap/metalcap-probe" || {
		echo "pkg-build: the signed probe refuses the shim" >&2
		exit 1
	}
fi

# The components: libexec (preinstall), share (postinstall), in the order
# of pkg/distribution.xml.
for part in libexec:preinstall share:postinstall; do
	name=${part%:*} script=${part#*:}
	scripts=$out/scripts-$name
	rm -rf "$scripts"
	mkdir -p "$scripts"
	cp "$top/pkg/scripts/$script" "$top/pkg/scripts/launchd-user.sh" "$scripts/"
	pkgbuild --root "$root/usr/local/$name/metalcap" --scripts "$scripts" \
	    --identifier "org.metalcap.$name" --version "$version" \
	    --install-location "/usr/local/$name/metalcap" \
	    --ownership recommended "$out/metalcap-$name.pkg"
done
[ "$(own_folders | tr '\n' ' ')" = \
    "usr/local/libexec/metalcap usr/local/share/metalcap " ] || {
	echo "pkg-build: pkg/manifest's own folders changed; update the components" >&2
	exit 1
}
sed "s/@VERSION@/$version/g" "$top/pkg/distribution.xml" > "$out/distribution.xml"

identity=${METALCAP_INSTALLER_IDENTITY:-}
if [ -z "$identity" ]; then
	identity=$(security find-identity -v -p basic 2>/dev/null |
	    sed -n 's/.*"\(Developer ID Installer: [^"]*\)".*/\1/p' | head -n 1)
fi
product=$out/metalcap-$version.pkg
if [ -n "$identity" ]; then
	productbuild --distribution "$out/distribution.xml" --package-path "$out" \
	    --sign "$identity" "$product"
	pkgutil --check-signature "$product"
else
	productbuild --distribution "$out/distribution.xml" --package-path "$out" \
	    "$product"
	echo "pkg-build: $product is NOT signed (no Developer ID Installer identity)"
fi
if [ -n "$identity" ] && [ -n "${METALCAP_NOTARY_PROFILE:-}" ]; then
	# Apple refuses ad-hoc-signed code inside a notarized package.
	[ -n "${METALCAP_CODESIGN_IDENTITY:-}" ] || {
		echo "pkg-build: notarizing needs METALCAP_CODESIGN_IDENTITY" \
		    "(a Developer ID Application identity for the binaries)" >&2
		exit 1
	}
	# notarytool exits 0 on an Invalid result: read its status.
	xcrun notarytool submit "$product" --wait --output-format plist \
	    --keychain-profile "$METALCAP_NOTARY_PROFILE" > "$out/notary.plist"
	status=$(plutil -extract status raw -o - "$out/notary.plist")
	if [ "$status" != Accepted ]; then
		id=$(plutil -extract id raw -o - "$out/notary.plist")
		xcrun notarytool log "$id" \
		    --keychain-profile "$METALCAP_NOTARY_PROFILE" >&2 || true
		echo "pkg-build: notarization $status; not stapled" >&2
		exit 1
	fi
	xcrun stapler staple "$product"
	echo "pkg-build: $product notarized and stapled"
elif [ -n "$identity" ]; then
	echo "pkg-build: $product is NOT notarized (set METALCAP_NOTARY_PROFILE;" \
	    "MDM installs do not need it, double-click installs do)"
else
	echo "pkg-build: $product is NOT notarized (an unsigned package cannot be)"
fi
echo "pkg-build: $product"
