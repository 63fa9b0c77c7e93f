"""``assay review``: a small local web app where an expert checks a run's verdicts.

Server-rendered pages (aiohttp + Jinja2, autoescaped): the item list, then one page per item with
the conversation, the response and, for each criterion, the final verdict, every judge's vote
and explanation, and a form to agree, disagree or correct it with a note. Labels go to the
run's :class:`~assay.review.labels.RunLabels` (``RUN/labels.sqlite``), which ``assay agreement
RUN`` and ``assay report RUN`` read. The rubric pages accept, edit or reject each criterion of a
rubric and save the result as a new rubric version with provenance.

Safety: the app binds to 127.0.0.1 by default; binding anywhere else requires a token, which
every request must carry (``?token=`` once, then a cookie, or ``Authorization: Bearer``). Every
write is validated against the run's rubric (known item, known criterion, a label the criterion
allows, a note of at most 2,000 characters).

Example (see tests/review)::

    app = make_app("runs/quickstart", reviewer="dr_a")
    web.run_app(app, host="127.0.0.1", port=8765)
"""

from __future__ import annotations

import hmac
import ipaddress
from pathlib import Path
from typing import Any

from aiohttp import web

from assay.errors import AssayError, ConfigError, InputError, Issue
from assay.report.data import ItemRow, RunReport, load_run
from assay.review.labels import RunLabels
from assay.review.rubrics import RubricDecision, save_reviewed_rubric
from assay.rubric import Criterion, Rubric

MAX_NOTE = 2000
_TEMPLATES = Path(__file__).parent / "templates"
_RUN: web.AppKey[RunReport | None] = web.AppKey("run")  # None when reviewing a rubric file
_RUBRICS: web.AppKey[dict[str, Rubric]] = web.AppKey("rubrics")
_LABELS = web.AppKey("labels", RunLabels)
_SETTINGS: web.AppKey[dict[str, Any]] = web.AppKey("settings")


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


def make_app(target: str | Path, *, reviewer: str = "reviewer", token: str | None = None) -> web.Application:
    """The review app for a run directory, or for a rubric file (a rubric, or per-item rubrics
    such as ``assay generate``'s output): then only the rubric pages are served, and reviewed
    versions are saved in ``reviewed-rubrics/`` beside the file."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    target = Path(target)
    app = web.Application(middlewares=[_auth_middleware], client_max_size=1024 * 1024)
    if target.is_dir():
        run = load_run(target)
        app[_RUN], app[_RUBRICS] = run, run.rubrics
        app[_LABELS] = RunLabels.open(target)
        out, title = target / "reviewed-rubrics", run.name
    else:
        app[_RUN], app[_RUBRICS] = None, _rubric_file(target)
        out, title = target.parent / "reviewed-rubrics", target.name
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(default=True))
    app[_SETTINGS] = {"reviewer": reviewer, "token": token, "env": env, "out": out, "title": title}
    app.router.add_get("/", _index)
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


async def _close(app: web.Application) -> None:
    if _LABELS in app:
        app[_LABELS].close()


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


def _render(request: web.Request, name: str, status: int = 200, **context: Any) -> web.Response:
    settings = request.app[_SETTINGS]
    html = settings["env"].get_template(name).render(
        run=request.app[_RUN], rubrics=request.app[_RUBRICS], title=settings["title"],
        reviewer=_reviewer(request), **context)
    return web.Response(text=html, content_type="text/html", status=status)


def _reviewer(request: web.Request) -> str:
    return request.cookies.get("assay_reviewer") or request.app[_SETTINGS]["reviewer"]


async def _health(request: web.Request) -> web.Response:
    run = request.app[_RUN]
    return web.json_response({"status": "ok", "items": len(run.items) if run else 0,
                              "rubrics": len(request.app[_RUBRICS])})


async def _index(request: web.Request) -> web.Response:
    if request.app[_RUN] is None:
        return _render(request, "index.html.j2", labelled={})
    labels = request.app[_LABELS].labels()
    mine: dict[str, int] = {}
    reviewer = _reviewer(request)
    for label in labels:
        if label.rater == reviewer:
            mine[label.item_id] = mine.get(label.item_id, 0) + 1
    return _render(request, "index.html.j2", labelled=mine)


def _item_or_404(request: web.Request) -> tuple[RunReport, int, ItemRow]:
    index = int(request.match_info["index"])
    run = request.app[_RUN]
    if run is None:
        raise web.HTTPNotFound(text="this review is of a rubric file: it has no items")
    if index >= len(run.items):
        raise web.HTTPNotFound(text=f"no item number {index}")
    return run, index, run.items[index]


async def _item(request: web.Request) -> web.Response:
    run, index, item = _item_or_404(request)
    labels = {(label.criterion_id, label.rater): label
              for label in request.app[_LABELS].labels(item.id)}
    rubric = run.rubrics[item.id]
    criteria = {c.id: c for c in rubric.criteria}
    return _render(request, "item.html.j2", index=index, item=item, labels=labels,
                   criteria=criteria, count=len(run.items),
                   message=request.query.get("saved"))


async def _label(request: web.Request) -> web.Response:
    run, index, item = _item_or_404(request)
    form = await request.post()
    rubric = run.rubrics[item.id]
    criterion = next((c for c in rubric.criteria if c.id == form.get("criterion_id")), None)
    reviewer = str(form.get("reviewer") or _reviewer(request)).strip()[:100]
    try:
        if criterion is None:
            raise InputError(f"criterion {form.get('criterion_id')!r} is not in item {item.id!r}'s rubric")
        row = next(c for c in item.criteria if c.id == criterion.id)
        verdict, option = _decide(criterion, row.final, str(form.get("action", "")),
                                  str(form.get("label", "")))
        note = str(form.get("note", ""))
        if len(note) > MAX_NOTE:
            raise InputError(f"the note is longer than {MAX_NOTE} characters")
        request.app[_LABELS].put(item.id, criterion.id, reviewer, verdict=verdict, option=option,
                                 agrees=form.get("action") == "agree", note=note)
    except AssayError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    response = web.HTTPSeeOther(f"/items/{index}?saved={criterion.id}")
    response.set_cookie("assay_reviewer", reviewer, samesite="Strict")
    raise response


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
    return _render(request, "rubric.html.j2", item_id=item_id, rubric=rubric,
                   saved=request.query.get("saved"))


async def _save_rubric(request: web.Request) -> web.Response:
    item_id = request.match_info["item_id"]
    rubric = request.app[_RUBRICS].get(item_id)
    if rubric is None:
        raise web.HTTPNotFound(text=f"no rubric {item_id!r}")
    form = await request.post()
    decisions = []
    for criterion in rubric.criteria:
        action = str(form.get(f"action:{criterion.id}", "accept"))
        decisions.append(RubricDecision(criterion.id, action, str(form.get(f"text:{criterion.id}", "")),
                                        _float(form.get(f"weight:{criterion.id}"))))
    try:
        path = save_reviewed_rubric(rubric, decisions, request.app[_SETTINGS]["out"],
                                    reviewer=_reviewer(request), source=item_id)
    except AssayError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    raise web.HTTPSeeOther(f"/rubrics/{item_id}?saved={path.name}")


def _float(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        raise web.HTTPBadRequest(text=f"weight {value!r} is not a number") from None
