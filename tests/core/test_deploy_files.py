"""The deploy templates render completely and wire what the docs promise."""

import re
import subprocess

import pytest

from tests.support.processes import ROOT

DEPLOY = ROOT / "deploy"
VALUES = {
    "@PREFIX@": "/opt/jarvis",
    "@USER@": "jarvis",
    "@DATA_DIR@": "/var/lib/jarvis",
    "@ENV_FILE@": "/etc/jarvis/jarvis.env",
    "@PORT@": "8000",
    "@SERVER_NAME@": "jarvis.home.arpa",
    "@BODY_MB@": "51",
}


def render(name: str) -> str:
    text = (DEPLOY / name).read_text()
    for placeholder, value in VALUES.items():
        text = text.replace(placeholder, value)
    return text


@pytest.mark.parametrize(
    "name", ["jarvis-web.service.in", "jarvis-worker.service.in", "nginx-jarvis.conf.in"]
)
def test_every_placeholder_is_one_the_installer_fills(name):
    assert not re.search(r"@[A-Z_]+@", render(name))
    installer = (DEPLOY / "install.sh").read_text()
    for placeholder in re.findall(r"@[A-Z_]+@", (DEPLOY / name).read_text()):
        assert f"s#{placeholder}#" in installer


def test_the_web_unit_runs_daphne_on_loopback_behind_the_proxy():
    unit = render("jarvis-web.service.in")
    # Without --proxy-headers: daphne would believe anyone's X-Forwarded-For;
    # Jarvis reads it only from JARVIS_TRUSTED_PROXIES (apps/core/proxy.py).
    assert "daphne -b 127.0.0.1 -p 8000 jarvis_site.asgi:application" in unit
    assert "--proxy-headers" not in unit.split("ExecStart=", 1)[1]
    assert "User=jarvis" in unit and "EnvironmentFile=/etc/jarvis/jarvis.env" in unit


def test_the_worker_unit_runs_huey_clearing_stale_locks():
    # A killed worker leaves its job locks behind; the next start clears them.
    assert "manage.py run_huey --flush-locks" in render("jarvis-worker.service.in")


# Packages only the tests need: a browser to drive, an SSH server to connect to.


def test_the_installer_installs_what_the_makefile_runs_and_tests_with():
    installer = (DEPLOY / "install.sh").read_text()
    makefile = (DEPLOY.parent / "Makefile").read_text()
    runtime_debs = re.search(r"^RUNTIME_DEBS := (.*)$", makefile, re.M).group(1).split()
    installed = set()
    for name in ("RUN_DEBS", "DRAFT_DEBS"):
        installed |= set(re.search(rf'^{name}="(.*)"$', installer, re.M).group(1).split())
    assert installed == set(runtime_debs)
    assert {"tesseract-ocr", "tesseract-ocr-eng", "tesseract-ocr-deu"} <= set(runtime_debs)


def test_make_run_installs_what_jarvis_runs_with():
    makefile = (DEPLOY.parent / "Makefile").read_text()
    assert re.search(r"^setup: .*\brun-deps\b", makefile, re.M)
    assert re.search(r"^run: setup\b", makefile, re.M)
    assert "$(call install_debs,$(RUNTIME_DEBS))" in makefile


def test_the_vhost_upgrades_websockets():
    vhost = render("nginx-jarvis.conf.in")
    assert "map $http_upgrade $connection_upgrade" in vhost
    assert "proxy_set_header Upgrade $http_upgrade;" in vhost
    assert "X-Forwarded-Proto $scheme" in vhost


def test_the_vhost_replaces_the_clients_forwarded_for():
    vhost = render("nginx-jarvis.conf.in")
    values = re.findall(r"proxy_set_header X-Forwarded-For (.+?);", vhost)
    assert len(values) == vhost.count("proxy_pass ")  # every proxied location sets it
    assert set(values) == {"$remote_addr"}  # replaced, never $proxy_add_x_forwarded_for


@pytest.mark.parametrize("script", ["install.sh", "update.sh"])
def test_the_scripts_parse(script):
    assert subprocess.run(["bash", "-n", str(DEPLOY / script)]).returncode == 0


@pytest.mark.parametrize("unit", ["jarvis-web.service.in", "jarvis-worker.service.in"])
def test_the_services_create_private_files(unit):
    assert "\nUMask=0077\n" in render(unit)


def test_the_installer_makes_the_data_dir_private_and_nginx_does_not_read_it():
    installer = (DEPLOY / "install.sh").read_text()
    assert re.search(r'install -d .*-m 0700 "\$DATA_DIR"', installer)
    # Static files come through daphne: nginx (www-data) cannot read a 0700 data dir.
    assert "/var/lib/jarvis" not in render("nginx-jarvis.conf.in")


def test_the_vhost_body_limit_follows_the_upload_limit(tmp_path):
    # Render the vhost the way install.sh does, with JARVIS_UPLOAD_MAX_MB=20.
    installer = (DEPLOY / "install.sh").read_text()
    render_function = re.search(r"^render\(\) \{.*?^\}", installer, re.M | re.S).group(0)
    script = (
        f"{render_function}\n"
        "PREFIX=/opt/jarvis RUN_USER=jarvis DATA_DIR=/var/lib/jarvis ENV_FILE=/etc/j PORT=8000\n"
        "SERVER_NAME=jarvis.home.arpa JARVIS_UPLOAD_MAX_MB=20\n"
        f'render "{DEPLOY / "nginx-jarvis.conf.in"}" "{tmp_path / "vhost"}"\n'
    )
    subprocess.run(["bash", "-c", script], check=True, capture_output=True)
    vhost = (tmp_path / "vhost").read_text()
    assert re.findall(r"client_max_body_size (\S+);", vhost) == ["21m"]
