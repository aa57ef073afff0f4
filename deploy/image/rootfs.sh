#!/bin/sh
# Assembles the runtime image's file system in $2 from the binary $1 and deploy/image ($3):
# the binary at /usr/local/bin/a2a-bridge, every shared library `ldd` lists (and the loader)
# at its own path, /etc/passwd and /etc/group naming the user a2a-bridge (65532), the
# configuration at /etc/a2a-bridge/bridge.toml and a writable /var/lib/a2a-bridge and /tmp.
# No shell, no package manager: the image runs the binary and nothing else.
set -eu
binary=$1
root=$2
image=$3
mkdir -p "$root/usr/local/bin" "$root/etc/a2a-bridge" "$root/var/lib/a2a-bridge" "$root/tmp"
cp "$binary" "$root/usr/local/bin/a2a-bridge"
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u |
  while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
cp "$image/passwd" "$root/etc/passwd"
cp "$image/group" "$root/etc/group"
cp "$image/bridge.toml" "$root/etc/a2a-bridge/bridge.toml"
chmod 1777 "$root/tmp"
chown -R 65532:65532 "$root/var/lib/a2a-bridge" 2>/dev/null || true
