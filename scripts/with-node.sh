#!/usr/bin/env bash
# Runs a command with rigfit's toolchain on PATH: Node >= 22 and pnpm at the version pinned in package.json's
# packageManager field. A machine whose Node is older (or missing) gets Node 24 from the npm registry, in a folder
# of its own (RIGFIT_TOOLCHAIN, default ~/.cache/rigfit/node24); pnpm likewise (RIGFIT_PNPM). Nothing is
# installed system-wide and nothing changes for a machine that already has both.
#   scripts/with-node.sh pnpm test
# Sourced (`. scripts/with-node.sh`) it only sets PATH, for scripts that run several commands.
set -euo pipefail
rigfit_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rigfit_cache="${XDG_CACHE_HOME:-$HOME/.cache}/rigfit"

node_major() { node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || echo 0; }

if ! command -v node >/dev/null 2>&1 || [ "$(node_major)" -lt 22 ]; then
  toolchain="${RIGFIT_TOOLCHAIN:-$rigfit_cache/node24}"
  if [ ! -x "$toolchain/node_modules/.bin/node" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "rigfit needs Node.js 22 or newer, and npm to fetch it: install Node.js from https://nodejs.org" >&2
      exit 1
    fi
    echo "rigfit: Node $(node --version 2>/dev/null || echo '(none)') is older than 22; installing Node 24 into $toolchain" >&2
    mkdir -p "$toolchain"
    npm install --prefix "$toolchain" --no-audit --no-fund --loglevel=error node@24 >/dev/null
  fi
  export PATH="$toolchain/node_modules/.bin:$PATH"
fi

pnpm_version=$(node -p "require('$rigfit_root/package.json').packageManager.split('@')[1]")
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$pnpm_version" ]; then
  pnpm_dir="${RIGFIT_PNPM:-$rigfit_cache/pnpm-$pnpm_version}"
  if [ ! -x "$pnpm_dir/node_modules/.bin/pnpm" ]; then
    echo "rigfit: installing pnpm $pnpm_version into $pnpm_dir" >&2
    mkdir -p "$pnpm_dir"
    npm install --prefix "$pnpm_dir" --no-audit --no-fund --loglevel=error "pnpm@$pnpm_version" >/dev/null
  fi
  export PATH="$pnpm_dir/node_modules/.bin:$PATH"
fi

# Run as a command: hand over to it. Sourced: leave PATH set for the caller.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if [ $# -eq 0 ]; then
    echo "usage: scripts/with-node.sh COMMAND [ARGS...]" >&2
    exit 2
  fi
  exec "$@"
fi
