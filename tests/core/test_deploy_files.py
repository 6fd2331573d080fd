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
    "@UPSTREAM_SERVERS@": "server 127.0.0.1:8000;",
}


def render(name: str) -> str:
    text = (DEPLOY / name).read_text()
    for placeholder, value in VALUES.items():
        text = text.replace(placeholder, value)
    return text


def run_installer_functions(lines: str, *, script: str = "install.sh") -> str:
    """Run `lines` after the helper functions (each opens `name() {  # what it
    does`) and constants of `script`, the way the script itself calls them
    (bash, its own code; no root, no systemd)."""
    text = (DEPLOY / script).read_text()
    functions = re.findall(r"^[a-z_]+\(\) \{ *#.*?^\}", text, re.M | re.S)
    constants = re.findall(r'^LOCAL_REDIS=".*"$', text, re.M)
    program = "\n".join(["set -euo pipefail", *constants, *functions, lines])
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def upstreams(vhost: str) -> dict[str, list[str]]:
    """Each upstream block's name → its servers."""
    return {
        name: re.findall(r"^\s*server (\S+);", body, re.M)
        for name, body in re.findall(r"^upstream (\w+) \{(.*?)^\}", vhost, re.M | re.S)
    }


def service_section(unit: str) -> str:
    return unit.split("[Service]", 1)[1].split("[Install]", 1)[0]


@pytest.mark.parametrize(
    "name",
    [
        "jarvis-web.service.in",
        "jarvis-web@.service.in",
        "jarvis-worker.service.in",
        "nginx-jarvis.conf.in",
    ],
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


def test_each_of_several_web_processes_listens_on_its_own_loopback_port():
    unit = render("jarvis-web@.service.in")
    # The instance is the port: jarvis-web@8001.service listens on 127.0.0.1:8001.
    assert "daphne -b 127.0.0.1 -p %i jarvis_site.asgi:application" in unit
    # Everything else about the service (user, env file, hardening, umask,
    # the time a stopping reply gets to save) is the single unit's.
    single = service_section(render("jarvis-web.service.in"))
    assert service_section(unit).replace("-p %i", "-p 8000") == single


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


@pytest.mark.parametrize(
    "unit", ["jarvis-web.service.in", "jarvis-web@.service.in", "jarvis-worker.service.in"]
)
def test_the_services_create_private_files(unit):
    assert "\nUMask=0077\n" in render(unit)


def test_the_installer_makes_the_data_dir_private_and_nginx_does_not_read_it():
    installer = (DEPLOY / "install.sh").read_text()
    assert re.search(r'install -d .*-m 0700 "\$DATA_DIR"', installer)
    # Static files come through daphne: nginx (www-data) cannot read a 0700 data dir.
    assert "/var/lib/jarvis" not in render("nginx-jarvis.conf.in")


INSTALL_VARIABLES = (
    "PREFIX=/opt/jarvis RUN_USER=jarvis DATA_DIR=/var/lib/jarvis ENV_FILE=/etc/j PORT=8000\n"
    "SERVER_NAME=jarvis.home.arpa\n"
)


def test_the_vhost_body_limit_follows_the_upload_limit(tmp_path):
    # Render the vhost the way install.sh does, with JARVIS_UPLOAD_MAX_MB=20.
    run_installer_functions(
        f"{INSTALL_VARIABLES}JARVIS_UPLOAD_MAX_MB=20 WEB_PROCESSES=1\n"
        f'render "{DEPLOY / "nginx-jarvis.conf.in"}" "{tmp_path / "vhost"}"\n'
    )
    vhost = (tmp_path / "vhost").read_text()
    assert re.findall(r"client_max_body_size (\S+);", vhost) == ["21m"]


def test_one_web_process_is_served_as_before(tmp_path):
    env = tmp_path / "jarvis.env"
    env.write_text((DEPLOY / "jarvis.env.example").read_text())
    run_installer_functions(
        f"{INSTALL_VARIABLES}WEB_PROCESSES=1\n"
        f'render "{DEPLOY / "nginx-jarvis.conf.in"}" "{tmp_path / "vhost"}"\n'
    )
    # Every location reaches the one daphne on --port; the env file is untouched
    # (the in-memory layer: install.sh calls use_shared_layer only for N > 1).
    vhost = (tmp_path / "vhost").read_text()
    assert upstreams(vhost) == {
        "jarvis_web": ["127.0.0.1:8000"],
        "jarvis_terminals": ["127.0.0.1:8000"],
    }
    assert not re.search(r"^JARVIS_CHANNEL_LAYER=", env.read_text(), re.M)


def test_several_web_processes_share_redis_behind_one_upstream(tmp_path):
    # install.sh --web-processes 2, run twice (it is safe to run again).
    env = tmp_path / "jarvis.env"
    env.write_text((DEPLOY / "jarvis.env.example").read_text())
    out = run_installer_functions(
        f"{INSTALL_VARIABLES}WEB_PROCESSES=2\n"
        f'use_shared_layer "{env}"\nuse_shared_layer "{env}"\n'
        f'render "{DEPLOY / "nginx-jarvis.conf.in"}" "{tmp_path / "vhost"}"\n'
        "echo ports $(web_ports)\n"
    )
    assert "ports 8001 8002" in out  # install.sh enables jarvis-web@8001 and @8002
    vhost = (tmp_path / "vhost").read_text()
    assert upstreams(vhost) == {
        "jarvis_web": ["127.0.0.1:8001", "127.0.0.1:8002"],
        "jarvis_terminals": ["127.0.0.1:8001", "127.0.0.1:8002"],
    }
    # No sticky sessions for pages and chats; a chat's terminal always reaches
    # the same process, the one holding its shell.
    assert "hash $uri consistent;" in vhost.split("upstream jarvis_terminals", 1)[1]
    locations = dict(re.findall(r"location (\S+) \{\s*proxy_pass http://(\w+);", vhost))
    assert locations == {
        "/ws/terminal/": "jarvis_terminals",
        "/ws/": "jarvis_web",
        "/": "jarvis_web",
    }
    # Both terminal and chat sockets are upgraded.
    assert vhost.count("proxy_set_header Upgrade $http_upgrade;") == 2
    layers = re.findall(r"^JARVIS_CHANNEL_LAYER=(.*)$", env.read_text(), re.M)
    assert layers == ["redis://127.0.0.1:6379/0"]


def test_a_redis_the_env_file_names_already_is_kept(tmp_path):
    env = tmp_path / "jarvis.env"
    env.write_text("JARVIS_DEBUG=false\nJARVIS_CHANNEL_LAYER=redis://10.0.0.5:6379/2\n")
    run_installer_functions(f'use_shared_layer "{env}"\n')
    assert env.read_text() == "JARVIS_DEBUG=false\nJARVIS_CHANNEL_LAYER=redis://10.0.0.5:6379/2\n"
    # "memory" (one process) is replaced, not left beside the Redis line.
    env.write_text("JARVIS_CHANNEL_LAYER=memory\n")
    run_installer_functions(f'use_shared_layer "{env}"\n')
    assert re.findall(r"^JARVIS_CHANNEL_LAYER=(.*)$", env.read_text(), re.M) == [
        "redis://127.0.0.1:6379/0"
    ]


@pytest.mark.parametrize("script", ["install.sh", "update.sh"])
def test_the_scripts_find_the_web_units_this_install_enabled(tmp_path, script):
    # install.sh stops the web units not wanted any more (switching between one
    # and several processes); update.sh restarts the ones enabled.
    wants = tmp_path / "multi-user.target.wants"
    wants.mkdir()
    for unit in ["jarvis-web@8001.service", "jarvis-web@8002.service", "jarvis-worker.service"]:
        (wants / unit).symlink_to(f"/etc/systemd/system/{unit}")
    out = run_installer_functions(f'enabled_web_units "{tmp_path}"', script=script)
    assert out.split() == ["jarvis-web@8001.service", "jarvis-web@8002.service"]


def test_update_restarts_the_web_units_this_install_enabled():
    update = (DEPLOY / "update.sh").read_text()
    assert re.search(
        r"^systemctl restart jarvis-worker.service \$\{web_units:-jarvis-web.service\}$",
        update,
        re.M,
    )


def test_a_redis_installed_for_jarvis_listens_on_loopback_and_keeps_nothing():
    dropin = (DEPLOY / "redis-server-jarvis.conf").read_text()
    exec_start = re.findall(r"^ExecStart=(.*)$", dropin, re.M)
    assert exec_start[0] == ""  # Debian's line is replaced, not added to
    assert exec_start[1].endswith('--bind 127.0.0.1 -::1 --save ""')
    installer = (DEPLOY / "install.sh").read_text()
    assert 'REDIS_DROPIN="/etc/systemd/system/redis-server.service.d/jarvis.conf"' in installer
    assert (
        'install -D -m 0644 "$PREFIX/deploy/redis-server-jarvis.conf" "$REDIS_DROPIN"' in installer
    )
