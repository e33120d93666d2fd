"""Chats: the application's channels (create with a delay, change the delay, clear, delete), its
messages keyset paged and searched by channel, author and text (delete one, mute its author for a
chosen time), the muted users (unmute), and posting as the developer (shown to clients with role
`developer`). Unlike KeyAuth's page, messages are paged rather than all rendered at once, and
every delay is in one unit (seconds) whatever unit the form offers. Every change runs the seller
operation of the same effect (`addchannel`, `editchan`, `clearchannel`, `delchannel`,
`chatpost`, `delchatmessage`, `muteuser`, `unmuteuser`)."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import chat, errorcodes
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import Column, Filter, ListSpec
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.templating import counted, duration, when
from licensegate.web.visit import Visit, page

SLUG = "chats"
AREA: Area = "chats"
register(Section("Chats", SLUG, AREA))

SPEC = ListSpec(
    columns=(
        Column("created", "Sent", sortable=True),
        Column("channel", "Channel"),
        Column("author", "Author"),
        Column("message", "Message"),
    ),
    filters=(
        Filter("channel", "Channel", "select"),
        Filter("author", "Author", placeholder="A whole name", max_length=chat.MAX_AUTHOR),
        Filter(
            "search", "Message text", "search", placeholder="Words in the message", max_length=chat.MAX_SEARCH
        ),
    ),
    default_sort="created",
    empty_text="No messages yet. Users send them from the program; you can post below.",
)
UNITS = (("1", "seconds"), ("60", "minutes"), ("3600", "hours"), ("86400", "days"))
# The mute lengths offered first; "custom" takes a number and a unit.
MUTE_CHOICES = (("3600", "1 hour"), ("86400", "1 day"), ("604800", "1 week"), ("2592000", "30 days"))
MAX_AMOUNT_DIGITS = 9
CHANNEL_FIELDS = {"name": "name", "channel_exists": "name", "invalid_name": "name", "delay": "delay"}
POST_FIELDS = {"channel": "channel", "channel_not_found": "channel", "message": "message", "author": "author"}
POST_FIELDS |= {"empty_message": "message", "message_too_long": "message"}
MUTE_FIELDS = {"user": "user", "user_not_found": "user", "time": "amount"}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


def seconds_of(amount: str, unit: str, param: str) -> int:
    """A length typed as a number and a unit (seconds per unit, one of UNITS) in seconds;
    400 `invalid_number` naming `param` for anything else."""
    amount = amount.strip()
    if not amount:
        raise errorcodes.MISSING_PARAMETER(name=param, param=param)
    units = {value for value, _label in UNITS}
    if not amount.isdigit() or not amount.isascii() or len(amount) > MAX_AMOUNT_DIGITS or unit not in units:
        raise errorcodes.INVALID_NUMBER(name=param, param=param)
    return int(amount) * int(unit)


async def list_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    db = visit.services.db
    channels = await chat.list_channels(db, app.id)
    names = tuple((row["name"], row["name"]) for row in channels)
    view = SPEC.read(visit.request.query_params, {"channel": (("", "Every channel"), *names)})
    found = await chat.browse_messages(
        db,
        app.id,
        channel=view.values.get("channel"),
        author=view.values.get("author"),
        text=view.values.get("search"),
        request=view.request,
    )
    counts = await chat.message_counts(db, app.id)
    shown_channels = [
        {"name": row["name"], "delay": row["delay_seconds"], "messages": counts.get(row["id"], 0)}
        for row in channels
    ]
    form = visit.form if visit.request.method == "POST" else None
    return visit.render(
        "chats/list.html",
        status=status,
        title=f"Chats · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(SLUG), found, None),
        path=app.path(SLUG),
        channels=shown_channels,
        mutes=await chat.list_mutes(db, app.id, visit.now()),
        units=UNITS,
        errors=errors,
        form={
            name: form.get(name) if form else ""
            for name in ("name", "delay", "unit", "channel", "message", "author")
        },
    )


async def create_channel(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    try:
        delay = seconds_of(form.get("delay") or "0", form.get("unit") or "1", "delay")
        await seller.run(visit, app, "addchannel", {"name": form.get("name").strip(), "delay": str(delay)})
    except Refusal as refusal:
        return await list_page(visit, seller.refused(app, refusal, CHANNEL_FIELDS, default="name"))
    visit.flash(f"The channel {form.get('name').strip()} is created (delay {duration(delay)}).")
    return visit.redirect(app.path(SLUG))


async def set_delay(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    name = form.get("name")
    try:
        delay = seconds_of(form.get("delay"), form.get("unit") or "1", "delay")
        await seller.run(visit, app, "editchan", {"name": name, "delay": str(delay)})
    except Refusal as refusal:
        errors = {"channels": f"{name[:64]}: {refusal.message}"}
        return await list_page(visit, Shown(app, errors, seller.status_of(refusal)))
    visit.flash(f"The delay of {name} is now {duration(delay)}.")
    return visit.redirect(app.path(SLUG))


async def clear_channel(visit: Visit) -> Response:
    app = await _open(visit)
    name = visit.form.get("name")
    ask = Question(
        title=f"Clear the channel {name[:64]}?",
        message="Every message of the channel is deleted; the channel stays.",
        button="Clear it",
    )
    return await seller.act(
        visit,
        app,
        "clearchannel",
        {"name": name},
        done=lambda body: (
            f"The channel {name} is cleared ({counted(int(body.get('deleted', 0)), 'message')} deleted)."
        ),
        back=app.path(SLUG),
        ask=ask,
    )


async def delete_channel(visit: Visit) -> Response:
    app = await _open(visit)
    name = visit.form.get("name")
    ask = Question(
        title=f"Delete the channel {name[:64]}?",
        message="The channel and all its messages are deleted; programs reading it get channel_not_found.",
        button="Delete it",
    )
    done = f"The channel {name} is deleted."
    return await seller.act(visit, app, "delchannel", {"name": name}, done=done, back=app.path(SLUG), ask=ask)


async def post_message(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    channel = form.get("channel")
    params = {"channel": channel, "message": form.get("message")}
    if form.get("author").strip():
        params["author"] = form.get("author").strip()
    try:
        await seller.run(visit, app, "chatpost", params)
    except Refusal as refusal:
        return await list_page(visit, seller.refused(app, refusal, POST_FIELDS, default="message"))
    visit.flash(f"Your message is posted in {channel} as the developer.")
    return visit.redirect(app.path(SLUG))


async def delete_message(visit: Visit) -> Response:
    app = await _open(visit)
    message_id = visit.form.get("id")
    ask = Question(
        title="Delete this message?",
        message="Programs reading the channel no longer see it.",
        button="Delete it",
        back=app.path(SLUG),
    )
    back = visit.form.get("back")
    back = back if back.startswith(app.path(SLUG)) and "//" not in back else app.path(SLUG)
    params = {"id": message_id}
    return await seller.act(
        visit, app, "delchatmessage", params, done="The message is deleted.", back=back, ask=ask
    )


async def mute_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    source = visit.form if visit.request.method == "POST" else visit.request.query_params
    return visit.render(
        "chats/mute.html",
        status=status,
        title=f"Mute a user · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        path=app.path(SLUG),
        choices=MUTE_CHOICES,
        units=UNITS,
        errors=errors,
        form={
            "user": str(source.get("user", ""))[: chat.MAX_AUTHOR],
            "length": str(source.get("length", MUTE_CHOICES[1][0])),
            "amount": str(source.get("amount", ""))[:MAX_AMOUNT_DIGITS],
            "unit": str(source.get("unit", "3600")),
        },
    )


async def mute(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    user = form.get("user").strip()
    length = form.get("length")
    try:
        if length == "custom":
            seconds = seconds_of(form.get("amount"), form.get("unit"), "time")
        elif length in {value for value, _label in MUTE_CHOICES}:
            seconds = int(length)
        else:
            raise errorcodes.MISSING_PARAMETER(name="time", param="time")
        body = await seller.run(visit, app, "muteuser", {"user": user, "time": str(seconds)})
    except Refusal as refusal:
        errors = seller.field_error(refusal, MUTE_FIELDS, default="user")
        if errors.get("amount") == "Fill this in." and length != "custom":
            errors = {"length": "Choose how long."}
        return await mute_page(visit, Shown(app, errors, seller.status_of(refusal)))
    visit.flash(f"{user} is muted for {duration(seconds)} (until {when(int(body['until']))}).")
    return visit.redirect(app.path(SLUG) + "#h-mutes")


async def unmute(visit: Visit) -> Response:
    app = await _open(visit)
    user = visit.form.get("user")
    done = f"{user} is no longer muted."
    return await seller.act(visit, app, "unmuteuser", {"user": user}, done=done, back=app.path(SLUG))


BASE = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(BASE, page(list_page), methods=["GET"]),
    Route(BASE + "/channels", page(create_channel), methods=["POST"]),
    Route(BASE + "/channels/delay", page(set_delay), methods=["POST"]),
    Route(BASE + "/channels/clear", page(clear_channel), methods=["POST"]),
    Route(BASE + "/channels/delete", page(delete_channel), methods=["POST"]),
    Route(BASE + "/post", page(post_message), methods=["POST"]),
    Route(BASE + "/messages/delete", page(delete_message), methods=["POST"]),
    Route(BASE + "/mute", page(mute_page), methods=["GET"]),
    Route(BASE + "/mute", page(mute), methods=["POST"]),
    Route(BASE + "/unmute", page(unmute), methods=["POST"]),
]
