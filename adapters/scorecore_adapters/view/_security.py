"""What keeps the workbench local and its writes deliberate.

- A per-run token, printed in the URL (as Jupyter does): the first request carrying it sets an
  HttpOnly, SameSite=Lax cookie; every other request needs the cookie. Lax lets a link from
  another page (the HTML report's) open a page; no page changes anything on a GET.
- Writes are POSTs carrying a CSRF token derived from the run's token (in a ``<meta>`` of each
  page), checked together with the ``Origin`` header when the browser sends one.
- The ``Host`` header must name the address served (a DNS-rebinding page cannot read it).
- Every response forbids inline script, framing and any other origin
  (Content-Security-Policy), and sends no referrer (the token is in the first URL).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Final, final
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

__all__ = ["Guard"]

COOKIE: Final = "scorecore_view"
CSRF_HEADER: Final = "x-scorecore-csrf"
CSP: Final = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
              "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS: Final = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


@final
class Guard:
    """The token, the CSRF check and the security headers of one workbench run.

    >>> guard = Guard(token="t0k3n")
    >>> guard.csrf == Guard(token="t0k3n").csrf != Guard(token="other").csrf
    True
    """

    __slots__ = ("csrf", "hosts", "token")

    def __init__(self, *, token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(24)
        self.csrf = hmac.new(self.token.encode(), b"csrf", hashlib.sha256).hexdigest()
        self.hosts: set[str] = set()

    def allow_host(self, host: str, port: int) -> None:
        """Accept requests addressed to ``host:port`` (the address served)."""
        self.hosts.add(f"{host}:{port}")
        if host in ("127.0.0.1", "::1", "[::1]"):
            self.hosts.add(f"localhost:{port}")

    def _authorised(self, request: Request) -> bool:
        cookie = request.cookies.get(COOKIE, "")
        return hmac.compare_digest(cookie.encode(), self.token.encode())

    def csrf_ok(self, request: Request, sent: str | None) -> bool:
        """Whether a write carries the CSRF token and comes from this origin."""
        origin = request.headers.get("origin")
        # The hosts served (see allow_host); an app served by someone else's server: its Host.
        hosts = self.hosts or {request.headers.get("host", "")}
        if origin is not None and origin.split("://", 1)[-1] not in hosts:
            return False
        return sent is not None and hmac.compare_digest(sent.encode(), self.csrf.encode())

    async def __call__(self, request: Request,
                       call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        """The middleware: host check, token exchange, then the headers on every response."""
        response = await self._checked(request, call_next)
        response.headers.update(HEADERS)
        return response

    async def _checked(self, request: Request,
                       call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if self.hosts and request.headers.get("host", "") not in self.hosts:
            return PlainTextResponse("unknown host", status_code=421)
        if request.url.path.startswith("/static/"):
            return await call_next(request)
        given = request.query_params.get("token")
        if given is not None:
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return PlainTextResponse("wrong token", status_code=403)
            # Swap the token for a cookie, and drop it from the address bar and history.
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + ("?" + urlencode(rest) if rest else "")
            redirect = RedirectResponse(target, status_code=303)
            # Lax, not Strict: a link from elsewhere (the HTML report opened from disk) is a
            # cross-site top-level GET, which must carry the cookie to show the run. Pages
            # change nothing on GET; a write is a POST, which a Lax cookie does not follow
            # across sites, and it needs the CSRF token besides.
            redirect.set_cookie(COOKIE, self.token, httponly=True, samesite="lax", path="/")
            return redirect
        if not self._authorised(request):
            return PlainTextResponse(
                "forbidden: open the URL that `scorecore view` printed (it carries the token)",
                status_code=403)
        return await call_next(request)
