"""The README's install section, followed to the letter by a new user.

The package is built as a wheel and installed (not editable) in a fresh virtual environment by that
environment's own pip, never upgraded, with the pinned versions of ``requirements.txt`` as constraints,
so ``install_requires`` alone must bring everything. ``django-admin startproject`` makes a host; the
README's ``# settings.py`` and ``# urls.py`` blocks, read from README.md here so docs and test cannot
drift, are appended to its files unchanged.
Then ``migrate``, the system checks, a real server on a free loopback port, the API with a DRF token and
with the host's default authentication, and an ordinary user signing in to the settings page.

pip may reach the package index (its cache makes that quick); nothing else leaves the machine.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parent.parent
FERNET_KEY = "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg="
#: What the wheel is built from: the files an sdist carries, so a stale build/ folder cannot leak in.
SOURCES = ("webtools", "setup.cfg", "pyproject.toml", "MANIFEST.in", "README.md")


def readme_blocks() -> dict[str, str]:
    """The README's code blocks whose first line is ``# settings.py`` or ``# urls.py``, by file name."""
    text = (REPO / "README.md").read_text()
    blocks: dict[str, str] = {}
    for body in re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        first, _, rest = body.partition("\n")
        name = first.removeprefix("# ").strip()
        if first.startswith("# ") and name in ("settings.py", "urls.py"):
            assert name not in blocks, f"README.md has two {name} blocks"
            blocks[name] = rest
    return blocks


def test_readme_has_one_settings_and_one_urls_block():
    blocks = readme_blocks()
    assert set(blocks) == {"settings.py", "urls.py"}
    # The blocks add to the host's settings: nothing that only the demo project defines.
    assert not re.search(r"\benv[.(]|import environ", blocks["settings.py"])
    assert "REST_FRAMEWORK = {" not in blocks["settings.py"]


def run(args: list, cwd: Path, env: dict, timeout: float = 300) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """A fresh startproject host with the built wheel installed and the README's blocks appended."""
    root = tmp_path_factory.mktemp("readme-install")
    src = root / "src"
    src.mkdir()
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, src / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "WEBTOOLS_", "VIRTUAL_ENV"))}
    build = run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(root / "dist"), str(src)],
                root, env)
    assert "warning" not in build.lower(), build  # setuptools' packaging warnings stay gone
    # The distribution's name is django-webtools (PyPI's "webtools" is another project); the import name
    # stays webtools.
    wheel = next((root / "dist").glob("django_webtools-*.whl"))

    venv = root / "venv"
    run([sys.executable, "-m", "venv", str(venv)], root, env)
    python = venv / "bin" / "python"
    # The pins as constraints (pip takes no extras there): install_requires decides what is installed.
    pins = [re.sub(r"\[.*?\]", "", line) for line in (REPO / "requirements.txt").read_text().splitlines()]
    (root / "constraints.txt").write_text("\n".join(pins) + "\n")
    # With the venv's own pip, never upgraded, as a new user would: a fresh Python 3.11 venv has pip 23.x,
    # whose resolver crashes where the newest pip's does not (webtools/_vendor/readability/README.md).
    pip_version = run([python, "-m", "pip", "--version"], root, env).split()[1]
    run([python, "-m", "pip", "install", "--quiet", "--no-compile", "-c", root / "constraints.txt", wheel],
        root, env)

    site = root / "site"
    site.mkdir()
    run([venv / "bin" / "django-admin", "startproject", "hostsite", site], root, env)
    for name, block in readme_blocks().items():
        with open(site / "hostsite" / name, "a") as f:
            f.write("\n\n" + block)
    host = {"python": python, "site": site, "env": env, "wheel": wheel, "pip": pip_version, "root": root}
    manage(host, "migrate", "--noinput")
    return host


def manage(host, *args: str, keys: str = FERNET_KEY) -> str:
    env = {**host["env"], "WEBTOOLS_ENCRYPTION_KEYS": keys}
    return run([host["python"], "manage.py", *args], host["site"], env)


def test_the_extras_resolve_with_the_venvs_own_pip_and_with_the_newest(host):
    """``pip install 'django-webtools[mcp,render]'`` as resolved by the venv's own pip (23.x on a fresh
    Python 3.11) and by the newest pip (this interpreter's: ``make`` upgrades it), without installing."""
    extras = f"{host['wheel']}[mcp,render]"
    own = run([host["python"], "-m", "pip", "install", "--dry-run", "--quiet", extras], host["root"], host["env"])
    newest = run([sys.executable, "-m", "pip", "--python", host["python"], "install", "--dry-run", "--quiet",
                  extras], host["root"], host["env"])
    assert "Traceback" not in own + newest
    newest_version = run([sys.executable, "-m", "pip", "--version"], host["root"], host["env"]).split()[1]
    print(f"resolved with pip {host['pip']} (the venv's own) and pip {newest_version}")


def test_installed_package_is_not_the_source_tree(host):
    where = run([host["python"], "-c", "import webtools; print(webtools.__file__)"], host["site"], host["env"])
    assert "site-packages" in where and str(REPO) not in where


def test_checks_pass_after_migrate_with_a_key_and_warn_of_the_example_public_url(host):
    # The README's PUBLIC_URL is an example to replace: the one warning, and only until it is replaced.
    out = manage(host, "check", "--database", "default")
    assert re.findall(r"webtools\.[EW]\d+", out) == ["webtools.W030"], out
    assert "chat.example.com" in out
    # The deploy checks flag startproject's own DEBUG and SECRET_KEY, and of webtools only that.
    deploy = manage(host, "check", "--deploy", "--database", "default")
    assert re.findall(r"webtools\.[EW]\d+", deploy) == ["webtools.W030"], deploy


def test_without_a_key_check_warns_how_to_set_one(host):
    out = manage(host, "check", keys="")
    assert "webtools.W002" in out and "WEBTOOLS_ENCRYPTION_KEYS" in out


@pytest.fixture(scope="module")
def server(host):
    """``manage.py runserver`` on a free loopback port, with a user (not staff) and her DRF token."""
    manage(host, "shell", "-c", (
        "from django.contrib.auth.models import User; "
        "User.objects.create_user('alice', password='alice-pw-8364')"
    ))
    # As the README says: python manage.py drf_create_token <username>
    token = re.search(r"Generated token (\w+)", manage(host, "drf_create_token", "alice")).group(1)
    port = free_port()
    env = {**host["env"], "WEBTOOLS_ENCRYPTION_KEYS": FERNET_KEY}
    proc = subprocess.Popen(
        [host["python"], "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=host["site"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(base + "/admin/login/", timeout=2)
                break
            except requests.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the server did not start:\n{proc.stdout.read()}") from None
                time.sleep(0.2)
        yield {"url": base, "token": token}
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()


def test_api_with_the_hosts_default_authentication(server):
    # DRF's defaults in a fresh project: session and HTTP basic.
    api = requests.Session()
    api.auth = ("alice", "alice-pw-8364")
    url = server["url"]
    listed = api.get(url + "/api/plugins/settings", timeout=30)
    assert listed.status_code == 200, listed.text
    assert "web_search" in [entry["id"] for entry in listed.json()]

    switched = api.put(url + "/api/plugins/web_search/tools/web_search", json={"enabled": True}, timeout=30)
    assert switched.status_code == 200 and switched.json() == {"enabled": True}, switched.text
    saved = api.put(url + "/api/plugins/web_search/settings", json={"engine": "brave", "api_key": "BSA-key-1234"},
                    timeout=30)
    assert saved.status_code == 200, saved.text
    assert saved.json()["secrets"] == {"api_key": True} and "BSA-key-1234" not in saved.text

    anonymous = requests.get(url + "/api/plugins/settings", timeout=30)
    assert anonymous.status_code in (401, 403)


def test_api_with_a_drf_token(server):
    api = requests.Session()
    api.headers["Authorization"] = f"Token {server['token']}"
    url = server["url"]
    listed = api.get(url + "/api/plugins/settings", timeout=30)
    assert listed.status_code == 200, listed.text
    saved = api.put(url + "/api/plugins/web_search/settings", json={"engine": "tavily", "api_key": "tvly-key-1234"},
                    timeout=30)
    assert saved.status_code == 200 and saved.json()["secrets"] == {"api_key": True}, saved.text
    bad = requests.get(url + "/api/plugins/settings", headers={"Authorization": "Token not-a-token"}, timeout=30)
    assert bad.status_code == 401 and bad.headers["WWW-Authenticate"].startswith("Token")


def test_an_ordinary_user_signs_in_reaches_the_settings_page_and_signs_out(server):
    url = server["url"]
    browser = requests.Session()
    # Signed out, the page sends the visitor to LOGIN_URL: webtools' sign-in page, which admits every
    # user (the admin's, the fallback before, admitted staff only). alice is not staff.
    page = browser.get(url + "/webtools/settings/", timeout=30)
    assert page.status_code == 200 and page.url == url + "/webtools/login/?next=/webtools/settings/", page.url
    login = browser.post(page.url, data={
        "username": "alice", "password": "alice-pw-8364", "next": "/webtools/settings/",
        "csrfmiddlewaretoken": browser.cookies["csrftoken"],
    }, headers={"Referer": page.url}, timeout=30)
    assert login.status_code == 200 and login.url == url + "/webtools/settings/", login.url
    assert 'id="wt-settings"' in login.text and "Signed in as <strong>alice</strong>" in login.text
    # The page's own calls: a session GET, and a PUT with Django's CSRF token.
    assert browser.get(url + "/api/plugins/settings", timeout=30).status_code == 200
    put = browser.put(url + "/api/plugins/web_search/tools/web_search", json={"enabled": False},
                      headers={"X-CSRFToken": browser.cookies["csrftoken"], "Referer": url + "/"}, timeout=30)
    assert put.status_code == 200, put.text
    # Its script and the API reference's Swagger UI come from the host's static files.
    assert browser.get(url + "/static/webtools/settings.js", timeout=30).status_code == 200
    docs = browser.get(url + "/api/docs/", timeout=30)
    assert docs.status_code == 200
    bundle = re.search(r'src="([^"]*swagger-ui-bundle\.js)"', docs.text).group(1)
    assert bundle.startswith("/static/") and browser.get(url + bundle, timeout=30).status_code == 200
    schema = browser.get(url + "/api/schema/?format=json", timeout=30).json()
    assert schema["info"]["title"] == "webtools settings API" and schema["info"]["version"] != "0.0.0"
    # The settings page's Sign out button.
    out = browser.post(url + "/webtools/logout/", data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
                       headers={"Referer": url + "/webtools/settings/"}, timeout=30)
    assert out.status_code == 200 and "You have signed out." in out.text
    assert browser.get(url + "/webtools/settings/", timeout=30).url.startswith(url + "/webtools/login/")
