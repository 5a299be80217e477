"""`manage.py createmoderator NAME [--email E] [--noinput]`: a staff user in the moderators
group (created or brought back to its permissions), asking for a password."""

import getpass
import os

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from submissions.moderators import moderator_create

PASSWORD_ENV = "DJANGO_MODERATOR_PASSWORD"


class Command(BaseCommand):
    help = "Create (or update) a moderator: a staff user in the 'moderators' group."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help=f"Do not ask for a password: take it from {PASSWORD_ENV}, or leave the "
            "account without one (set it later with changepassword).",
        )

    def handle(self, *args, username, email, interactive, **options):
        password = os.environ.get(PASSWORD_ENV) or None
        if password is None and interactive:
            password = self._ask_password()
        if password is not None:
            try:
                validate_password(password)
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from exc
        user = moderator_create(username=username, email=email, password=password)
        self.stdout.write(f"moderator {user.get_username()} is ready (group 'moderators')")

    def _ask_password(self) -> str:
        for _attempt in range(3):
            first = getpass.getpass("Password: ")
            if first and first == getpass.getpass("Password (again): "):
                return first
            self.stderr.write("Passwords empty or different; try again.")
        raise CommandError("no password given")
