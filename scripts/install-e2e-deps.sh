#!/usr/bin/env bash
# Installs from Debian what the end-to-end tests (e2e/) run: PyTorch for the example trainer and torchrun,
# `python` on PATH, a one-machine Slurm (slurm-wlm, munge), and the headless Chromium that opens the HTML reports
# (apps/cli/test/report-browser.test.ts drives it with playwright-core; no browser is downloaded). Idempotent: when everything is present it
# returns without touching apt. Needs root (or passwordless sudo) only when something is missing.
set -euo pipefail

# Each entry: a Debian package and the check that proves it is usable.
missing=()
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || missing+=(python3-torch)
[ -x /usr/bin/torchrun ] || missing+=(python3-torch)
[ -x /usr/bin/python ] || missing+=(python-is-python3)  # the python that sees Debian's torch
for tool in sbatch srun slurmctld slurmd; do
  command -v "$tool" >/dev/null 2>&1 || missing+=(slurm-wlm)
done
for tool in munged munge unmunge; do
  command -v "$tool" >/dev/null 2>&1 || missing+=(munge)
done
[ -x /usr/bin/chromium ] || missing+=(chromium)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-e2e-deps: python3-torch, python, slurm-wlm, munge and chromium are installed"
  exit 0
fi

# Unique package names, in order.
packages=$(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++' | tr '\n' ' ')

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "install-e2e-deps: missing ${packages}; run this script as root (or with passwordless sudo)" >&2
    exit 1
  fi
fi

echo "install-e2e-deps: installing ${packages}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
# shellcheck disable=SC2086 # a list of package names
"${as_root[@]}" apt-get install -y -qq --no-install-recommends $packages >/dev/null
# Debian starts munge/slurm services where systemd runs; the tests start their own daemons, so stop any
# that an install started, quietly, to keep the machine's ports and sockets free.
for service in slurmctld slurmd munge; do
  "${as_root[@]}" service "$service" stop >/dev/null 2>&1 || true
done
echo "install-e2e-deps: installed ${packages}"
