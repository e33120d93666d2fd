"""What the dashboard's navigation offers, and who may open what.

An application's pages are sections: each names the permission area it belongs to (the same
areas seller keys and managers hold, `domain/permissions`). The navigation lists only the
sections the signed-in account may use, and `open_app` answers the 403 page for the others, so
hiding a link and refusing its URL cannot disagree. A new page registers its section here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from licensegate.domain import apps
from licensegate.domain.accounts import Account
from licensegate.domain.permissions import Area
from licensegate.web.visit import Denied, Visit

OWNER_ONLY: Literal["owner"] = "owner"  # sections only the application's owner sees
RESELLER_ONLY: Literal["reseller"] = "reseller"  # sections only its resellers see (their balance)
SectionArea = Area | Literal["", "owner", "reseller"]
NO_ERRORS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Section:
    label: str
    slug: str  # the path under /dashboard/apps/<id>/ ('' for the application's home)
    area: SectionArea  # a permission area; '' = everyone on the application; 'owner' = the owner
    # only; 'reseller' = its resellers only


SECTIONS: list[Section] = [Section("Overview", "", "")]

# The menu, grouped by task, the tasks and their pages in the order people need them (selling and
# supporting customers first). A section not named here is listed last, under "More".
MENU: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("",)),
    ("Customers", ("licenses", "users", "subscriptions", "entitlements", "sessions", "tokens", "balance")),
    (
        "Your program",
        ("files", "loader", "global-variables", "user-variables", "chats", "webhooks", "event-webhooks"),
    ),
    ("Protection", ("blacklist", "whitelist", "tamper-logs")),
    ("Records", ("logs", "audit-log", "seller-log")),
    ("Team and API", ("team", "seller-keys")),
    ("Application", ("settings", "integration")),
)
MORE = "More"
ACCOUNT_PATH = "/dashboard/account"
APPS_PATH = "/dashboard/apps"


def register(section: Section) -> None:
    if all(existing.slug != section.slug for existing in SECTIONS):
        SECTIONS.append(section)


def may_use(account: Account, area: SectionArea) -> bool:
    if area == "owner":
        return account.is_owner
    if area == "reseller":
        return account.role == "reseller"
    return account.allows(area)


def app_path(app_id: int, slug: str = "") -> str:
    return f"/dashboard/apps/{app_id}/{slug}"


@dataclass(frozen=True, slots=True)
class NavItem:
    label: str
    href: str
    current: bool


@dataclass(frozen=True, slots=True)
class NavGroup:
    label: str  # '' for the first, unnamed group (the overview)
    items: list[NavItem]


@dataclass(frozen=True, slots=True)
class Nav:
    app: str  # the application's name, above its sections
    groups: list[NavGroup]
    after: list[NavItem]  # links out of the application (all applications)

    @property
    def items(self) -> list[NavItem]:
        return [item for group in self.groups for item in group.items] + self.after


@dataclass(frozen=True, slots=True)
class AppPage:
    """An application page being shown: the application, and the navigation for it."""

    app: dict[str, Any]
    nav: Nav

    @property
    def id(self) -> int:
        app_id: int = self.app["id"]
        return app_id

    def path(self, slug: str = "") -> str:
        return app_path(self.id, slug)


class Shown(NamedTuple):
    """How a page with forms is shown: the application (opened with `open_app`), the messages by
    form field ('' is the form as a whole) and the status to answer. A first look (a GET) is
    `Shown(app)`; an action refused shows its page again with the application it opened, each
    message next to its field and the refusal's status (`web.seller.refused`)."""

    app: AppPage
    errors: Mapping[str, str] = NO_ERRORS
    status: int = 200


def _nav(account: Account, app: dict[str, Any], current: str) -> Nav:
    usable = {section.slug: section for section in SECTIONS if may_use(account, section.area)}
    placed = {slug for _, slugs in MENU for slug in slugs}
    menu = [*MENU, (MORE, tuple(slug for slug in usable if slug not in placed))]
    groups = []
    for label, slugs in menu:
        items = [
            NavItem(usable[slug].label, app_path(app["id"], slug), current == app_path(app["id"], slug))
            for slug in slugs
            if slug in usable
        ]
        if items:
            groups.append(NavGroup(label, items))
    after = [NavItem("All applications", APPS_PATH, False)] if account.is_owner else []
    return Nav(app["name"], groups, after)


async def account_nav(visit: Visit) -> Nav:
    """The navigation of the pages outside an application (the account's): a team member's
    application as its pages show it, an owner's applications; and the account page itself."""
    account, path = visit.account, visit.request.url.path
    yours = NavGroup("You", [NavItem("Your account", ACCOUNT_PATH, path == ACCOUNT_PATH)])
    if not account.is_owner:
        app = await apps.get(visit.services.db, account.app_id) if account.app_id is not None else None
        if app is None:
            return Nav("", [yours], [])
        nav = _nav(account, app, path)
        return Nav(nav.app, [*nav.groups, yours], nav.after)
    owned = await apps.list_owned(visit.services.db, account.id)
    listed = [NavItem(app["name"], app_path(app["id"]), False) for app in owned]
    groups = [NavGroup("Applications", listed)] if listed else []
    return Nav("", [*groups, yours], [NavItem("All applications", APPS_PATH, path == APPS_PATH)])


async def open_app(visit: Visit, app_id: int, area: SectionArea = "") -> AppPage:
    """The application `app_id` if the signed-in account may open this area of it; the 403 page
    otherwise (another owner's application, a team member of another application, a manager
    without the area), with the same answer whether the application exists or not."""
    account = visit.account
    app = await apps.get(visit.services.db, app_id)
    mine = app is not None and (
        app["account_id"] == account.id if account.is_owner else app["id"] == account.app_id
    )
    if app is None or not mine:
        raise Denied("This application does not exist or is not yours.")
    if not may_use(account, area):
        raise Denied("Your account does not have access to this part of the application.")
    return AppPage(app, _nav(account, app, visit.request.url.path))
