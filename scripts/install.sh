#!/usr/bin/env bash
# Installs rigfit from this clone and puts `rigfit` on PATH; with arguments, then runs `rigfit ARGS...`.
#   scripts/install.sh analyze
# Brings Node >= 22 and the pinned pnpm when the machine lacks them (scripts/with-node.sh), installs the
# dependencies, builds, and writes a small `rigfit` launcher into RIGFIT_BIN_DIR (default ~/.local/bin) that runs
# this clone's CLI with that Node, so `rigfit` works from any folder whatever `node` is first on PATH later.
# When that folder is not on PATH yet, a line adding it goes into ~/.profile (and ~/.bashrc, ~/.zshrc where
# they exist); new shells have it. A `rigfit` in that folder that this script did not write is left alone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=./with-node.sh
. "$root/scripts/with-node.sh"
cd "$root"

pnpm install --frozen-lockfile
pnpm build

bin_dir="${RIGFIT_BIN_DIR:-$HOME/.local/bin}"
launcher="$bin_dir/rigfit"
marker="# rigfit launcher written by scripts/install.sh"
if [ -e "$launcher" ] && ! grep -qF "$marker" "$launcher" 2>/dev/null; then
  echo "rigfit: $launcher exists and was not written by this script; left as it is." >&2
  echo "  Remove it, or set RIGFIT_BIN_DIR to another folder, and run scripts/install.sh again." >&2
  exit 8
fi
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
mkdir -p "$bin_dir"
tmp="$launcher.tmp.$$"
{
  echo '#!/bin/sh'
  echo "$marker"
  echo "exec $(quote "$(command -v node)") $(quote "$root/apps/cli/bin/run.js") \"\$@\""
} >"$tmp"
chmod +x "$tmp"
mv -f "$tmp" "$launcher"
echo "rigfit: installed $launcher ($("$launcher" --version))"

case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *)
    line="export PATH=$(quote "$bin_dir"):\"\$PATH\"  $marker"
    for rc in "$HOME/.profile" "$HOME/.bashrc" "$HOME/.zshrc"; do
      if [ "$rc" = "$HOME/.profile" ] || [ -f "$rc" ]; then
        grep -qF "$line" "$rc" 2>/dev/null || printf '\n%s\n' "$line" >>"$rc"
      fi
    done
    echo "rigfit: added $bin_dir to PATH in ~/.profile for new shells; in this one: export PATH=\"$bin_dir:\$PATH\""
    ;;
esac

if [ $# -gt 0 ]; then exec "$launcher" "$@"; fi
