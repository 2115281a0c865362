#!/bin/sh
# make pkg: turn the checked payload (make pkg-root) into a flat installer,
# build/pkg/metalcap-VERSION.pkg, with macOS's pkgbuild and productbuild.
# Signed when an identity is at hand: METALCAP_INSTALLER_IDENTITY, or the
# first "Developer ID Installer" identity in the keychain; unsigned (and
# said so) otherwise.  METALCAP_CODESIGN_IDENTITY, when set, re-signs the
# binaries with it (hardened runtime) before they are packed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
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
	    usr/local/libexec/metalcap/libmetalcap.dylib usr/local/bin/metalcapctl; do
		codesign --force --options runtime --timestamp \
		    --sign "$METALCAP_CODESIGN_IDENTITY" "$root/$bin"
	done
	# The probe runs with the shim injected: hardened, it must allow
	# DYLD_* and a library of another team (pkg/entitlements/).
	codesign --force --options runtime --timestamp \
	    --entitlements "$top/pkg/entitlements/metalcap-probe.entitlements" \
	    --sign "$METALCAP_CODESIGN_IDENTITY" \
	    "$root/usr/local/libexec/metalcap/metalcap-probe"
	"$root/usr/local/bin/metalcapctl" check \
	    "$root/usr/local/libexec/metalcap/metalcap-probe" || {
		echo "pkg-build: the signed probe refuses the shim" >&2
		exit 1
	}
fi

scripts=$out/scripts
rm -rf "$scripts"
mkdir -p "$scripts"
cp "$top/pkg/scripts/preinstall" "$top/pkg/scripts/postinstall" \
    "$top/pkg/scripts/launchd-user.sh" "$scripts/"
pkgbuild --root "$root" --scripts "$scripts" --identifier org.metalcap.pkg \
    --version "$version" --install-location / --ownership recommended \
    "$out/metalcap-component.pkg"
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
echo "pkg-build: $product"
