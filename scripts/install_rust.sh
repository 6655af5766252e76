#!/usr/bin/env bash
# The toolchain Memdoor's sandbox compiles Rust candidates with (idempotent; run as root by install.sh).
#   /opt/memdoor/rust/toolchain  a world-readable copy of a rustc sysroot (bin/rustc + lib): rustup's under
#                                /root is not readable by the sandbox's unprivileged uids; without rustup,
#                                Debian's rustc is used in place (TOOLCHAIN points at /usr).
#   /opt/memdoor/rust/deps       rand, regex and md5 (HumanEval-X's crates) built once with that rustc from
#                                Debian's offline sources (librust-*-dev), as rlibs candidates link against
#                                read-only: no candidate rebuilds a crate.
set -euo pipefail
root=/opt/memdoor/rust
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
for p in librust-rand-dev librust-regex-dev librust-md5-dev gcc; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
rustc_bin=$(command -v rustc || true)
[ -n "$rustc_bin" ] || need+=(rustc)
command -v cargo >/dev/null || need+=(cargo)  # builds the crates below
if [ ${#need[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  rustc_bin=$(command -v rustc)
fi
cargo_bin=$(command -v cargo)
sysroot=$("$rustc_bin" --print sysroot)
version=$("$rustc_bin" --version)
if [ "$sysroot" = /usr ]; then
  toolchain=/usr
else
  toolchain=$root/toolchain
  if [ "$(cat "$root/toolchain.version" 2>/dev/null)" != "$version" ]; then
    $sudo rm -rf "$toolchain.new"
    $sudo mkdir -p "$toolchain.new"
    $sudo cp -a "$sysroot/bin" "$sysroot/lib" "$toolchain.new/"
    [ -d "$sysroot/libexec" ] && $sudo cp -a "$sysroot/libexec" "$toolchain.new/"
    $sudo rm -rf "$toolchain" && $sudo mv "$toolchain.new" "$toolchain"
    echo "$version" | $sudo tee "$root/toolchain.version" >/dev/null
  fi
fi
if [ "$(cat "$root/deps.version" 2>/dev/null)" != "$version" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/p/src" "$work/home"
  cat > "$work/p/Cargo.toml" <<'TOML'
[package]
name = "memdoor-deps"
version = "0.1.0"
edition = "2021"
[dependencies]
rand = "0.8"
regex = "1"
md5 = "0.7.0"
[profile.dev]
debug = false
TOML
  echo 'fn main() {}' > "$work/p/src/main.rs"
  cat > "$work/home/config.toml" <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
TOML
  (cd "$work/p" && CARGO_HOME="$work/home" RUSTC="$toolchain/bin/rustc" "$cargo_bin" build -q --offline)
  $sudo rm -rf "$root/deps.new" && $sudo mkdir -p "$root/deps.new"
  $sudo cp "$work/p/target/debug/deps/"*.rlib "$root/deps.new/"
  $sudo rm -rf "$root/deps" && $sudo mv "$root/deps.new" "$root/deps"
  echo "$version" | $sudo tee "$root/deps.version" >/dev/null
fi
$sudo chmod -R a+rX "$root"
echo "memdoor install: rust $version for the sandbox in $root"
