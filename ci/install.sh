#!/bin/sh
# Installs a pinned release of petstore-conformance: the archive for this machine, checked
# against its published SHA-256 before anything is unpacked. Shared by the GitHub recipes and the
# GitHub Action (action.yml); the GitLab recipes use the container image instead.
#
#   sh ci/install.sh VERSION BIN_DIR
#
# Linux (x86_64, aarch64; glibc 2.28 or later) and macOS (x86_64, arm64). Releases are fetched
# from PETSTORE_CONFORMANCE_RELEASES (default: the project's GitHub releases; any URL curl
# reads, file:// too). To build from source instead (about 7 minutes on 2 cores):
#   cargo install --locked --git https://github.com/OWNER/petstore-conformance --tag vVERSION
set -eu
version="${1:?usage: sh ci/install.sh VERSION BIN_DIR}"
bin_dir="${2:?usage: sh ci/install.sh VERSION BIN_DIR}"
version="${version#v}"
releases="${PETSTORE_CONFORMANCE_RELEASES:-https://github.com/OWNER/petstore-conformance/releases/download}"
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
Darwin-x86_64) target=x86_64-apple-darwin ;;
Darwin-arm64) target=aarch64-apple-darwin ;;
*)
    echo "no release of petstore-conformance for $(uname -s) $(uname -m); build it with cargo install" >&2
    exit 2
    ;;
esac
name="petstore-conformance-$version-$target"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for file in "$name.tar.gz" "$name.tar.gz.sha256"; do
    curl --silent --show-error --fail --location --retry 3 --output "$work/$file" "$releases/v$version/$file"
done
(
    cd "$work"
    if command -v sha256sum >/dev/null; then
        sha256sum -c "$name.tar.gz.sha256"
    else
        shasum -a 256 -c "$name.tar.gz.sha256"
    fi
) >&2
tar -xzf "$work/$name.tar.gz" -C "$work"
mkdir -p "$bin_dir"
cp "$work/$name/petstore-conformance" "$bin_dir/petstore-conformance"
chmod 755 "$bin_dir/petstore-conformance"
"$bin_dir/petstore-conformance" --version | head -n 1
