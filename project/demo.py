"""What `make demo` runs before serving: a superuser to log in with."""
from __future__ import annotations

import os
import secrets


def ensure_superuser(username: str = "admin") -> None:
    """Create the demo superuser once, printing its password that one time.

    ``DJANGO_SUPERUSER_PASSWORD`` sets the password instead of a generated one.
    """
    from django.contrib.auth import get_user_model

    User = get_user_model()
    if User.objects.filter(is_superuser=True).exists():
        print("A superuser already exists; its password was printed when `make demo` created it.")
        return
    password = os.environ.get("DJANGO_SUPERUSER_PASSWORD") or secrets.token_urlsafe(12)
    User.objects.create_superuser(username=username, email="", password=password)
    print("\n" + "=" * 60)
    print(f"  Demo superuser: {username}")
    if "DJANGO_SUPERUSER_PASSWORD" in os.environ:
        print("  Password: the one in DJANGO_SUPERUSER_PASSWORD")
    else:
        print(f"  Password: {password}   (shown once)")
    print("  Admin: http://127.0.0.1:8000/admin/   Settings: http://127.0.0.1:8000/webtools/settings/")
    print("=" * 60 + "\n")
