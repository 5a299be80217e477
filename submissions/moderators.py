"""The moderators group: exactly the permissions the review work needs, nothing to delete.

Moderators read every queue and the catalogue, decide queued writes (the "change" permission
of a queue is what its decision buttons need), correct prices, keep bars and the catalogue
tidy, and prepare cities (create one, draw its bairros) for activation. No delete permission
anywhere: decisions change states, rows stay for the record (Django's admin log keeps who and
when).
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction

GROUP_NAME = "moderators"

PERMISSIONS = {
    "beers": {
        "city": ("view", "add", "change"),
        "neighbourhood": ("view", "add", "change"),
        "venue": ("view", "change"),
        "brand": ("view", "add", "change"),
        "beer": ("view", "add", "change"),
        "format": ("view",),
        "deal": ("view", "change"),
        "pricecheck": ("view",),
    },
    "submissions": {
        "pricesubmission": ("view", "change"),
        "cityrequest": ("view", "change"),
        "barownermessage": ("view", "change"),
        "report": ("view", "change"),
        "dealdispute": ("view", "change"),
        "disputeddeal": ("view", "change"),
        "dealconfirmation": ("view",),
        "menuphotoupload": ("view",),
        "menudraft": ("view", "change"),
    },
}


def moderator_codenames() -> set[tuple[str, str]]:
    return {
        (app, f"{action}_{model}")
        for app, models in PERMISSIONS.items()
        for model, actions in models.items()
        for action in actions
    }


@transaction.atomic
def moderators_group_ensure() -> Group:
    """Create the group, or set its permissions back to exactly the list above."""
    from django.apps import apps
    from django.contrib.auth.management import create_permissions

    for app_label in PERMISSIONS:  # a fresh database may not have them yet
        create_permissions(apps.get_app_config(app_label), verbosity=0)
    wanted = moderator_codenames()
    perms = [
        p
        for p in Permission.objects.select_related("content_type").filter(
            content_type__app_label__in=PERMISSIONS
        )
        if (p.content_type.app_label, p.codename) in wanted
    ]
    found = {(p.content_type.app_label, p.codename) for p in perms}
    if found != wanted:
        raise RuntimeError(f"permissions missing: {sorted(wanted - found)}")
    group, _created = Group.objects.get_or_create(name=GROUP_NAME)
    group.permissions.set(perms)
    return group


@transaction.atomic
def moderator_create(*, username: str, email: str = "", password: str | None = None):
    """A staff user (never superuser) in the moderators group; an existing user is moved in.
    Without a password the account cannot log in until one is set."""
    group = moderators_group_ensure()
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    user.is_staff = True
    user.is_superuser = False
    if email:
        user.email = email
    if password is not None:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    user.save()
    user.groups.add(group)
    return user
