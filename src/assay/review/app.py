"""``assay review``: a small local web app where an expert checks a run's verdicts.

Server-rendered pages (aiohttp + Jinja2, autoescaped): the item list (prompt previews, a
search over every turn and response, filters and pages), then one page per item with the
conversation, the response and, for each criterion, the final verdict, every judge's vote and
explanation, and a form to agree, disagree or correct it with a note. Verdicts wear the
report's words and colours (:mod:`assay.report.meaning`: a met penalty is DETECTED, in red).
Labels go to the run's :class:`~assay.review.labels.RunLabels` (``RUN/labels.sqlite``), which
``assay agreement RUN`` and ``assay report RUN`` read. The rubric pages accept, edit (in a
multi-line editor) or reject each criterion of a rubric and save the result as a new rubric
version with provenance; only the criteria whose text or weight differ from the saved ones
count as edited, and each version is shown against the one before it
(:mod:`assay.review.history`).

The app starts from a small index of the run (:class:`~assay.review.index.RunIndex`) and reads
each item from the run's store when its page is opened.

Safety: the app binds to 127.0.0.1 by default; binding anywhere else requires a token, which
every request must carry (``?token=`` once, then a cookie, or ``Authorization: Bearer``). Other
web sites the reviewer visits are kept out (:mod:`assay.review.guard`): a ``Host`` allow-list,
a signed session per browser that carries the reviewer's name (``--reviewer`` or the login
page), and a CSRF token plus ``Origin`` / ``Sec-Fetch-Site`` checks on every write. Every write
is validated against the run's rubric (known item, known criterion, a label the criterion
allows, a note of at most 2,000 characters, finite weights); a malformed request is a 4xx and
one log line.

Example (see tests/review)::

    app = make_app("runs/quickstart", reviewer="dr_a")   # reviewer=None: a login page asks
    web.run_app(app, host="127.0.0.1", port=8765)
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import math
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from assay.errors import AssayError, ConfigError, InputError, Issue
from assay.logs import get_logger
from assay.report.rows import ItemRow
from assay.review.guard import (
    CSRF_FIELD,
    CSRF_HEADER,
    SAFE_METHODS,
    Session,
    Sessions,
    allowed_hosts,
    cross_origin_reason,
    host_name,
    reviewer_name,
)
from assay.review.history import history
from assay.review.index import FILTERS, RunIndex
from assay.review.labels import RunLabels
from assay.review.queue import ORDERS, disagreement_count, next_index, pending
from assay.review.rubrics import RubricDecision, save_reviewed_rubric, saved_versions
from assay.rubric import Criterion, Rubric

MAX_NOTE = 2000
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
_TEMPLATES = Path(__file__).parent / "templates"
_REPORT_TEMPLATES = Path(__file__).parents[1] / "report" / "templates"  # the verdicts' colours
_RUN: web.AppKey[RunIndex | None] = web.AppKey("run")  # None when reviewing a rubric file
_RUBRICS: web.AppKey[Mapping[str, Rubric]] = web.AppKey("rubrics")
_LABELS = web.AppKey("labels", RunLabels)
_SETTINGS: web.AppKey[dict[str, Any]] = web.AppKey("settings")
_QUERIES: web.AppKey[dict[str, list[tuple[str, str]]]] = web.AppKey("queries")
_SESSIONS = web.AppKey("sessions", Sessions)
_SESSION = web.RequestKey("session", Session)  # set by _session_middleware
_SESSION_CHANGED = web.RequestKey("session_changed", bool)  # the cookie must be sent again
_FORM: web.RequestKey[Any] = web.RequestKey("form")  # the body's fields, read once
_OPEN_PATHS = frozenset({"/login", "/health"})  # served before the reviewer has a name
log = get_logger("assay.review")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token."""
    if not is_loopback(host) and not token:
        raise ConfigError(f"--host {host}: binding beyond loopback needs --token (or "
                          "$ASSAY_REVIEW_TOKEN): reviewers' labels and model text would be open "
                          "to the network")


def make_app(target: str | Path, *, reviewer: str | None = None, token: str | None = None,
             host: str = "127.0.0.1", allow_hosts: Iterable[str] = ()) -> web.Application:
    """The review app for a run directory, or for a rubric file (a rubric, or per-item rubrics
    such as ``assay generate``'s output): then only the rubric pages are served, and reviewed
    versions are saved in ``reviewed-rubrics/`` beside the file.

    ``reviewer`` names whoever uses this server; None serves a login page where each browser
    gives its reviewer's name. ``host`` is the address the server is bound to and, with
    ``allow_hosts``, says which ``Host`` headers it answers (see :mod:`assay.review.guard`)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    target = Path(target)
    app = web.Application(middlewares=[_errors_middleware, _host_middleware, _auth_middleware,
                                       _session_middleware], client_max_size=1024 * 1024)
    if target.is_dir():
        if not (target / "run.sqlite").is_file():
            raise InputError(Issue(str(target), None, None, "not a run directory (no run.sqlite)"))
        run = RunIndex.open(target)
        app[_RUN], app[_RUBRICS] = run, run.rubrics
        app[_LABELS] = RunLabels.open(target)
        app[_QUERIES] = {}
        out, title = target / "reviewed-rubrics", run.name
        app.on_startup.append(_start_index)
    else:
        app[_RUN], app[_RUBRICS] = None, _rubric_file(target)
        app[_QUERIES] = _queries(target)
        out, title = target.parent / "reviewed-rubrics", target.name
    env = Environment(loader=FileSystemLoader([_TEMPLATES, _REPORT_TEMPLATES]),
                      autoescape=select_autoescape(default=True))
    app[_SETTINGS] = {"reviewer": None if reviewer is None else reviewer_name(reviewer),
                      "token": token, "env": env, "out": out, "title": title,
                      "hosts": allowed_hosts(host, allow_hosts)}
    app[_SESSIONS] = Sessions()
    app.router.add_get("/", _index)
    app.router.add_get("/login", _login_page)
    app.router.add_post("/login", _login)
    app.router.add_get("/next", _next)
    app.router.add_get("/items/{index:\\d+}", _item)
    app.router.add_post("/items/{index:\\d+}/label", _label)
    app.router.add_get("/rubrics/{item_id}", _rubric)
    app.router.add_post("/rubrics/{item_id}", _save_rubric)
    app.router.add_get("/health", _health)
    app.on_cleanup.append(_close)
    return app


def _rubric_file(path: Path) -> dict[str, Rubric]:
    from assay.io import read_rubric_file

    if not path.is_file():
        raise InputError(Issue(str(path), None, None, "no such run directory or rubric file"))
    rubrics = read_rubric_file(path)
    found = {rubrics.shared.id: rubrics.shared} if rubrics.shared is not None else rubrics.per_item
    if not found:
        raise InputError(Issue(str(path), None, None, "holds no rubric to review"))
    return dict(found)


def _queries(path: Path) -> dict[str, list[tuple[str, str]]]:
    """The conversation of each item of a per-item rubric file (``assay generate``'s output is
    HealthBench lines); a file of rubrics alone has none."""
    from assay.io import iter_items

    try:
        return {item.id: [(m.role, m.content) for m in item.messages] for item in iter_items(path)}
    except (AssayError, ValueError, OSError):
        return {}


async def _start_index(app: web.Application) -> None:
    """Read the run's index in a thread: the app serves item pages from the store meanwhile."""
    run = app[_RUN]
    if run is not None:
        threading.Thread(target=run.build, name="assay-review-index", daemon=True).start()


async def indexed(app: web.Application) -> None:
    """Wait until the app's index of the run holds every item (a rubric file has none)."""
    run = app[_RUN]
    if run is not None:
        await asyncio.to_thread(run.wait)


def _whole_index(run: RunIndex) -> None:
    """A 500 saying why, when reading the run's index failed (never a partial list as whole)."""
    if run.failure is not None:
        raise web.HTTPInternalServerError(
            text=f"the review app could not read the run's items: {run.failure}")


async def _close(app: web.Application) -> None:
    if _LABELS in app:
        app[_LABELS].close()
    run = app.get(_RUN)
    if run is not None:
        run.close()


@web.middleware
async def _errors_middleware(request: web.Request, handler):
    """A refused or malformed request is its 4xx and one log line, never a traceback."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status >= 400:
            log.warning("review: %d %s %s: %s", exc.status, request.method, request.path,
                        (exc.text or exc.reason or "")[:200].replace("\n", " "))
        raise
    except Exception as exc:  # a bug: one line (the traceback only at debug level)
        log.error("review: 500 %s %s: %s: %s", request.method, request.path,
                  type(exc).__name__, str(exc)[:200].replace("\n", " "),
                  exc_info=log.isEnabledFor(logging.DEBUG))
        raise web.HTTPInternalServerError(text="the review app failed on this request "
                                               "(see its log)") from None


@web.middleware
async def _host_middleware(request: web.Request, handler):
    """Answer only to the allowed Host names: a rebound DNS name pointing here is refused."""
    if host_name(request.host) not in request.app[_SETTINGS]["hosts"]:
        raise web.HTTPMisdirectedRequest(
            text=f"Host {request.host[:100]!r} is not a name this review server answers to "
                 "(start it with --allow-host NAME to add one)")
    return await handler(request)


@web.middleware
async def _auth_middleware(request: web.Request, handler):
    token = request.app[_SETTINGS]["token"]
    if token is None or request.path == "/health":
        return await handler(request)
    sent = (request.query.get("token") or request.cookies.get("assay_review_token")
            or request.headers.get("Authorization", "").removeprefix("Bearer "))
    if not hmac.compare_digest(sent.encode(), token.encode()):
        raise web.HTTPUnauthorized(text="a review token is required")
    response = await handler(request)
    if request.query.get("token"):
        response.set_cookie("assay_review_token", token, httponly=True, samesite="Strict")
    return response


@web.middleware
async def _session_middleware(request: web.Request, handler):
    """Every page gets a session (a new browser a new one); every write must come from the
    app's own page: an existing session, its CSRF token, and no foreign Origin/Sec-Fetch-Site."""
    sessions, fixed = request.app[_SESSIONS], request.app[_SETTINGS]["reviewer"]
    cookie_name = f"assay_review_{request.url.port}"  # cookies ignore ports: one per server
    session = sessions.decode(request.cookies.get(cookie_name))
    if request.method not in SAFE_METHODS:
        reason = cross_origin_reason(request.host, request.headers.get("Sec-Fetch-Site"),
                                     request.headers.get("Origin"))
        if reason is None and session is None:
            reason = "no review session: reload the page and try again"
        if reason is None and session is not None:
            form = await _form(request)
            if not sessions.csrf_ok(session, request.headers.get(CSRF_HEADER)
                                    or _text(form, CSRF_FIELD)):
                reason = "the form's CSRF token is missing or stale: reload the page"
        if reason is not None:
            raise web.HTTPForbidden(text=reason)
    request[_SESSION_CHANGED] = session is None
    if session is None:
        session = sessions.new()
    if fixed is not None:
        session = Session(session.id, fixed)
    request[_SESSION] = session
    try:
        if session.reviewer is None and request.path not in _OPEN_PATHS:
            if request.method not in SAFE_METHODS:
                raise web.HTTPForbidden(text="log in first: no reviewer is named for this session")
            raise web.HTTPSeeOther("/login")
        response = await handler(request)
    except web.HTTPException as exc:
        if request[_SESSION_CHANGED]:
            _set_session(exc, request, cookie_name)
        raise
    if request[_SESSION_CHANGED]:
        _set_session(response, request, cookie_name)
    return response


def _set_session(response: web.StreamResponse, request: web.Request, name: str) -> None:
    response.set_cookie(name, request.app[_SESSIONS].encode(request[_SESSION]), httponly=True,
                        samesite="Strict", path="/")


async def _form(request: web.Request) -> Any:
    """The request's form fields, read once; a body that is not a well-formed form is a 400."""
    if _FORM not in request:
        if request.content_type not in FORM_TYPES:
            raise web.HTTPUnsupportedMediaType(
                text=f"a write is a form ({' or '.join(FORM_TYPES)}), not {request.content_type!r}")
        try:
            request[_FORM] = await request.post()
        except (ValueError, HttpProcessingError) as exc:  # not UTF-8, a broken multipart part
            raise web.HTTPBadRequest(text=f"malformed form body ({type(exc).__name__})") from None
    return request[_FORM]


def _text(form: Any, name: str, default: str = "") -> str:
    """A text field of the form: a file upload where text belongs is a 400."""
    value = form.get(name, default)
    if not isinstance(value, str):
        raise web.HTTPBadRequest(text=f"field {name!r} must be text")
    return value


def _render(request: web.Request, name: str, status: int = 200, **context: Any) -> web.Response:
    settings = request.app[_SETTINGS]
    session = request[_SESSION]
    html = settings["env"].get_template(name).render(
        run=request.app[_RUN], rubrics=request.app[_RUBRICS], title=settings["title"],
        reviewer=session.reviewer, can_login=settings["reviewer"] is None,
        csrf=request.app[_SESSIONS].csrf(session), **context)
    return web.Response(text=html, content_type="text/html", status=status)


def _reviewer(request: web.Request) -> str:
    """The session's reviewer (the session middleware sends a browser without one to log in)."""
    reviewer = request[_SESSION].reviewer
    if reviewer is None:
        raise web.HTTPSeeOther("/login")
    return reviewer


async def _login_page(request: web.Request) -> web.Response:
    if request.app[_SETTINGS]["reviewer"] is not None:
        raise web.HTTPSeeOther("/")
    return _render(request, "login.html.j2")


async def _login(request: web.Request) -> web.Response:
    """Name this browser's reviewer (kept in its signed session, not in any later form)."""
    if request.app[_SETTINGS]["reviewer"] is not None:
        raise web.HTTPConflict(text="this server's reviewer is fixed by --reviewer")
    try:
        name = reviewer_name(_text(await _form(request), "reviewer"))
    except InputError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    request[_SESSION] = request.app[_SESSIONS].new(name)  # a new id (and CSRF token) on login
    request[_SESSION_CHANGED] = True
    raise web.HTTPSeeOther("/")


async def _health(request: web.Request) -> web.Response:
    run = request.app[_RUN]
    return web.json_response({"status": "ok", "items": len(run) if run else 0,
                              "indexed": len(run.entries) if run else 0,
                              "ready": run.ready if run else True,
                              "rubrics": len(request.app[_RUBRICS])})


async def _index(request: web.Request) -> web.Response:
    """The item list: a search over what the items say, filters (disagreement, unlabelled,
    theme) and pages of :data:`assay.review.index.PAGE` items."""
    run = request.app[_RUN]
    if run is None:
        return _render(request, "index.html.j2", labelled={})
    _whole_index(run)
    labelled, others = _progress(request)
    mine: dict[str, int] = {}
    for item_id, _ in labelled:
        mine[item_id] = mine.get(item_id, 0) + 1
    query, show, theme = (request.query.get(name, "") for name in ("q", "show", "theme"))
    if show not in FILTERS:
        raise web.HTTPBadRequest(text=f"show {show[:40]!r}: one of {', '.join(FILTERS[1:])}")
    if theme and theme not in run.themes:
        raise web.HTTPBadRequest(text=f"theme {theme[:40]!r} is not a theme of this run")
    page_text = request.query.get("page", "1")
    page = int(page_text) - 1 if page_text.isdigit() and int(page_text) > 0 else 0
    found = run.find(query=query[:200], show=show, theme=theme, page=page, labelled=labelled,
                     others=others)
    return _render(request, "index.html.j2", labelled=mine, found=found, query=query,
                   show=show, theme=theme, judges=run.judge_names(),
                   disagreements={e.id: disagreement_count(e, others) for e in found.entries},
                   remaining=sum(pending(e, labelled) for e in run.entries)
                   + len(run) - len(run.entries), done=request.query.get("done"))


def _progress(request: web.Request) -> tuple[set[tuple[str, str]], dict[tuple[str, str], set[str]]]:
    """What this reviewer labelled ((item, criterion) pairs) and the labels of everyone else."""
    reviewer = _reviewer(request)
    labelled: set[tuple[str, str]] = set()
    others: dict[tuple[str, str], set[str]] = {}
    for label in request.app[_LABELS].labels():
        key = (label.item_id, label.criterion_id)
        if label.rater == reviewer:
            labelled.add(key)
        else:
            others.setdefault(key, set()).add(label.verdict or label.option or "")
    return labelled, others


def _order(value: str | None) -> str:
    if value is None or value == "":
        return "input"
    if value not in ORDERS:
        raise web.HTTPBadRequest(text=f"order {value[:40]!r}: one of {', '.join(ORDERS)}")
    return value


async def _next(request: web.Request) -> web.Response:
    """Open the next item with a criterion this reviewer has not labelled (the queue)."""
    run = request.app[_RUN]
    if run is None:
        raise web.HTTPNotFound(text="this review is of a rubric file: it has no items")
    order = _order(request.query.get("order"))
    after = request.query.get("after")
    await indexed(request.app)  # the queue orders every item: it waits for the whole index
    _whole_index(run)
    labelled, others = _progress(request)
    index = next_index(run.entries, after=int(after) if after and after.isdigit() else None,
                       labelled=labelled, others=others, order=order)
    saved = request.query.get("saved")
    if index is None:
        raise web.HTTPSeeOther("/?done=1")
    query = f"order={order}" + (f"&saved={saved}" if saved else "")
    raise web.HTTPSeeOther(f"/items/{index}?{query}")


def _item_or_404(request: web.Request) -> tuple[RunIndex, int, ItemRow]:
    index = int(request.match_info["index"])
    run = request.app[_RUN]
    if run is None:
        raise web.HTTPNotFound(text="this review is of a rubric file: it has no items")
    if index >= len(run):
        raise web.HTTPNotFound(text=f"no item number {index}")
    return run, index, run.item(index)


async def _item(request: web.Request) -> web.Response:
    run, index, item = _item_or_404(request)
    labels = {(label.criterion_id, label.rater): label
              for label in request.app[_LABELS].labels(item.id)}
    others: dict[str, list[Any]] = {}
    for (criterion_id, rater), label in labels.items():
        if rater != request[_SESSION].reviewer:
            others.setdefault(criterion_id, []).append(label)
    rubric = request.app[_RUBRICS][item.id]
    criteria = {c.id: c for c in rubric.criteria}
    return _render(request, "item.html.j2", index=index, item=item, labels=labels,
                   others=others, criteria=criteria, count=len(run),
                   judges=run.judge_names(v.source for c in item.criteria for v in c.votes),
                   order=_order(request.query.get("order")), queue="order" in request.query,
                   message=request.query.get("saved"))


async def _label(request: web.Request) -> web.Response:
    _, index, item = _item_or_404(request)
    form = await _form(request)
    rubric = request.app[_RUBRICS][item.id]
    criterion_id, action = _text(form, "criterion_id"), _text(form, "action")
    criterion = next((c for c in rubric.criteria if c.id == criterion_id), None)
    try:
        if criterion is None:
            raise InputError(f"criterion {criterion_id!r} is not in item {item.id!r}'s rubric")
        row = next(c for c in item.criteria if c.id == criterion.id)
        verdict, option = _decide(criterion, row.final, action, _text(form, "label"))
        note = _text(form, "note")
        if len(note) > MAX_NOTE:
            raise InputError(f"the note is longer than {MAX_NOTE} characters")
        request.app[_LABELS].put(item.id, criterion.id, _reviewer(request), verdict=verdict,
                                 option=option, agrees=action == "agree", note=note)
    except AssayError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    order = _order(_text(form, "order") or None)
    labelled, _ = _progress(request)
    if _text(form, "queue") and not pending(item, labelled):  # the item is done: the next one
        raise web.HTTPSeeOther(f"/next?after={index}&order={order}&saved={criterion.id}")
    position = [c.id for c in item.criteria].index(criterion.id)
    raise web.HTTPSeeOther(f"/items/{index}?order={order}&saved={criterion.id}#criterion-{position}")


def _decide(criterion: Criterion, final: str | None, action: str, label: str) -> tuple[str | None, str | None]:
    """The label a form action stores: (verdict, option), exactly one set."""
    allowed = ([o.label for o in criterion.options] + ["CANNOT_ASSESS"] if criterion.is_multi_choice
               else ["MET", "UNMET", "CANNOT_ASSESS"])
    if action == "agree":
        if final is None:
            raise InputError("there is no verdict to agree with: choose a label")
        label = final
    elif action == "disagree" and not criterion.is_multi_choice and not label:
        if final not in ("MET", "UNMET"):
            raise InputError("disagreeing with an abstention needs a label")
        label = "UNMET" if final == "MET" else "MET"
    elif action not in ("disagree", "correct"):
        raise InputError(f"unknown action {action!r} (agree, disagree, correct)")
    if label not in allowed:
        raise InputError(f"label {label!r} is not allowed for criterion {criterion.id!r} "
                         f"(one of: {', '.join(allowed)})")
    if criterion.is_multi_choice and label != "CANNOT_ASSESS":
        return None, label
    return label, None


async def _rubric(request: web.Request) -> web.Response:
    item_id = request.match_info["item_id"]
    rubric = request.app[_RUBRICS].get(item_id)
    if rubric is None:
        raise web.HTTPNotFound(text=f"no rubric {item_id!r}")
    folder = request.app[_SETTINGS]["out"]
    saved = request.query.get("saved")  # named by the redirect after a save: one of the files
    return _render(request, "rubric.html.j2", item_id=item_id, original=rubric,
                   rubric=_latest(request, rubric), versions=history(folder, rubric),
                   saved=saved if saved in {p.name for p in saved_versions(folder, rubric.id)}
                   else None, query=_query(request, item_id))


def _latest(request: web.Request, rubric: Rubric) -> Rubric:
    """The newest reviewed version of ``rubric`` (``rubric`` itself before the first save):
    what the editor shows, and what a save is compared with and builds on."""
    from assay.io import read_rubric

    saved = saved_versions(request.app[_SETTINGS]["out"], rubric.id)
    return read_rubric(saved[-1]) if saved else rubric


def _query(request: web.Request, item_id: str) -> list[tuple[str, str]]:
    """The conversation the rubric is for: a run's item (read from its store), or an item of
    a per-item rubric file."""
    run = request.app[_RUN]
    if run is not None and item_id in run.numbers:
        return run.item(run.numbers[item_id]).conversation
    return request.app[_QUERIES].get(item_id, [])


async def _save_rubric(request: web.Request) -> web.Response:
    item_id = request.match_info["item_id"]
    rubric = request.app[_RUBRICS].get(item_id)
    if rubric is None:
        raise web.HTTPNotFound(text=f"no rubric {item_id!r}")
    form = await _form(request)
    rubric = _latest(request, rubric)
    decisions = []
    for criterion in rubric.criteria:
        action = _text(form, f"action:{criterion.id}", "accept")
        text = _lines(_text(form, f"text:{criterion.id}"))
        weight = _weight(_text(form, f"weight:{criterion.id}"))
        # An edit is what differs from the saved text and weight, whatever the form chose:
        # a criterion posted back as it was shown is accepted as it is, byte for byte.
        new_text = text.strip() != "" and text.strip() != _lines(criterion.text).strip()
        new_weight = weight is not None and weight != criterion.weight
        if action in ("accept", "edit"):
            action = "edit" if new_text or new_weight else "accept"
        decisions.append(RubricDecision(criterion.id, action, text if new_text else "",
                                        weight if new_weight else None))
    try:
        path = save_reviewed_rubric(rubric, decisions, request.app[_SETTINGS]["out"],
                                    reviewer=_reviewer(request), source=item_id)
    except AssayError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    raise web.HTTPSeeOther(f"/rubrics/{item_id}?saved={path.name}")


def _lines(text: str) -> str:
    """``text`` with the line breaks a browser posts from a text box (CRLF) as the rubric
    keeps them (LF).

    >>> _lines("Advises:\\r\\n- rest\\r- fluids")
    'Advises:\\n- rest\\n- fluids'
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _weight(value: str) -> float | None:
    """A weight field: empty (unchanged) or a finite number; nan, inf and 1e309 are a 400."""
    if not value.strip():
        return None
    try:
        weight = float(value)
    except ValueError:
        weight = math.nan
    if not math.isfinite(weight):
        raise web.HTTPBadRequest(text=f"weight {value[:50]!r} is not a finite number")
    return weight
