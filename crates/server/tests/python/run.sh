#!/usr/bin/env bash
# Runs the Python tests of `apcache serve` (conftest.py says what they need), installing what
# is missing first. Arguments go to pytest:
#
#   crates/server/tests/python/run.sh                        # everything (needs the binary)
#   crates/server/tests/python/run.sh test_ui_static.py      # the page alone, no server
#   APCACHE_BIN=target/debug/apcache crates/server/tests/python/run.sh -k elasticsearch
#
# Anything missing is an error, never a skip.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
python3 -m pip install -q -r requirements.txt

chromium=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $chromium && $chromium == /usr/bin/chromium && $(id -u) -eq 0 ]]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi
if [[ ! -x $chromium ]]; then
    echo "run.sh: no Chromium at $chromium: install Debian's chromium (as root) or set CHROMIUM" >&2
    exit 1
fi

export PYTHONDONTWRITEBYTECODE=1
exec python3 -m pytest -q -p no:cacheprovider "$@"
