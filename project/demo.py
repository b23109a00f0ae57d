"""What `make demo` runs before serving: a superuser to log in with, and where to go."""
from __future__ import annotations

import os
import secrets


def ensure_superuser(username: str = "admin", port: str | int | None = None) -> None:
    """Create the demo superuser once, printing its password that one time; later runs say how to reset it.

    ``DJANGO_SUPERUSER_PASSWORD`` sets the password instead of a generated one.
    """
    from django.contrib.auth import get_user_model

    User = get_user_model()
    base = f"http://127.0.0.1:{port or os.environ.get('PORT') or 8000}"
    existing = User.objects.filter(is_superuser=True).order_by("pk").first()
    print("\n" + "=" * 72)
    if existing is not None:
        name = existing.get_username()
        print(f"  Demo superuser: {name} (its password was printed when `make demo` created it)")
        print(f"  Forgot it? .venv/bin/python manage.py changepassword {name}")
    else:
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD") or secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        print(f"  Demo superuser: {username}")
        if "DJANGO_SUPERUSER_PASSWORD" in os.environ:
            print("  Password: the one in DJANGO_SUPERUSER_PASSWORD")
        else:
            print(f"  Password: {password}   (shown once; reset: .venv/bin/python manage.py changepassword {username})")
    print(f"  Home: {base}/   Admin: {base}/admin/   Settings: {base}/webtools/settings/")
    print("=" * 72 + "\n")
