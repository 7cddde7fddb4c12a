#!/bin/sh
# Fails when BINARY needs a glibc newer than FLOOR (e.g. 2.28): the oldest glibc the release
# promises to run on. Reads the versioned symbols the binary imports (objdump, from binutils).
#
#   sh .github/release/glibc-floor.sh BINARY FLOOR
set -eu
binary="$1"
floor="$2"
needed=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -u -V | tail -n 1)
if [ -z "$needed" ]; then
    echo "$binary: imports no versioned glibc symbol" >&2
    exit 1
fi
highest=$(printf '%s\n%s\n' "$needed" "$floor" | sort -V | tail -n 1)
if [ "$highest" != "$floor" ]; then
    echo "$binary needs glibc $needed, newer than the promised floor $floor" >&2
    exit 1
fi
echo "$binary needs glibc $needed (floor $floor)"
