#!/bin/sh
# One release asset: the binary and the README in petstore-conformance-VERSION-TARGET/, packed
# as petstore-conformance-VERSION-TARGET.tar.gz, with its SHA-256 beside it (.sha256, in the
# format `sha256sum -c` reads). These names are what [package.metadata.binstall] in Cargo.toml
# and ci/install.sh expect (tests/it/delivery/release.rs checks both against this script's output).
#
#   sh .github/release/package.sh VERSION TARGET BINARY OUT_DIR
set -eu
version="$1"
target="$2"
binary="$3"
out="$4"
name="petstore-conformance-$version-$target"
here=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name" "$out"
cp "$binary" "$stage/$name/petstore-conformance"
chmod 755 "$stage/$name/petstore-conformance"
cp "$here/README.md" "$stage/$name/README.md"
tar -czf "$out/$name.tar.gz" -C "$stage" "$name"
cd "$out"
if command -v sha256sum >/dev/null; then
    sha256sum "$name.tar.gz" >"$name.tar.gz.sha256"
else
    shasum -a 256 "$name.tar.gz" >"$name.tar.gz.sha256"
fi
echo "$out/$name.tar.gz"
