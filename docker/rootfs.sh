#!/bin/sh
# The root filesystem of the container image: the binary, the shared libraries it loads (found
# with ldd, copied to the paths the loader looks in), the CA certificates TLS verifies against,
# and a passwd entry for the non-root user it runs as. Nothing else: no shell, no package manager.
#
#   sh docker/rootfs.sh BINARY ROOTFS
#
# Run by the Dockerfile's build stage; also runnable on a Debian or Ubuntu host with a binary
# built there (which is how it is exercised on a machine that cannot pull the build image).
set -eu
binary="$1"
rootfs="$2"
certs=/etc/ssl/certs/ca-certificates.crt
[ -x "$binary" ] || { echo "$binary: not an executable" >&2; exit 2; }
[ -s "$certs" ] || { echo "$certs: missing (install ca-certificates)" >&2; exit 2; }

mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc/ssl/certs" "$rootfs/reports" "$rootfs/work" "$rootfs/tmp"
cp "$binary" "$rootfs/usr/local/bin/petstore-conformance"
# Every library ldd resolves, and the loader itself (the line without "=>"), at its own path.
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
    while read -r lib; do
        cp -L --parents "$lib" "$rootfs"
    done
cp "$certs" "$rootfs/etc/ssl/certs/ca-certificates.crt"
# Names resolve from /etc/hosts (which the engine mounts), then DNS.
echo 'hosts: files dns' >"$rootfs/etc/nsswitch.conf"
echo 'root:x:0:0:root:/root:/nonexistent' >"$rootfs/etc/passwd"
echo 'petstore:x:65532:65532:petstore-conformance:/reports:/nonexistent' >>"$rootfs/etc/passwd"
echo 'root:x:0:' >"$rootfs/etc/group"
echo 'petstore:x:65532:' >>"$rootfs/etc/group"
chmod 1777 "$rootfs/tmp"
# The reports directory is the user's when nothing is mounted there; a mounted one must be
# writable by uid 65532 (or run with --user "$(id -u):$(id -g)").
chown 65532:65532 "$rootfs/reports"
