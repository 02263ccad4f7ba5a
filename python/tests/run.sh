#!/usr/bin/env bash
# Builds and installs the Python package (pip install ./python, maturin as its build backend)
# into the current python3's environment, then runs its tests. Arguments go to pytest:
#
#   python/tests/run.sh
#   APCACHE_BIN=target/debug/apcache python/tests/run.sh -k trec
#
# The tests compare results with the `apcache` binary (APCACHE_BIN, default
# target/release/apcache). Anything missing is an error, never a skip.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
python3 -m pip install -q -r "$here/requirements.txt"
# Without build isolation the maturin installed above builds it; the Rust build is
# incremental in python/target.
python3 -m pip install -q --no-build-isolation --force-reinstall --no-deps "$repo/python"

export PYTHONDONTWRITEBYTECODE=1
cd "$here"
# From the tests' directory, `import apcache` is the installed package, not python/apcache.
exec python3 -m pytest -q -p no:cacheprovider "$@"
