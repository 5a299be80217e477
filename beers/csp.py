"""A Content-Security-Policy for the site's own pages (city and bar pages, error pages, the
opt-out page): they load nothing but their inline stylesheet and a data: icon, run no script
and post only to themselves, so a policy that allows exactly that leaves nothing for markup
that slipped through escaping to load or run. The admin and the API's documentation page run
scripts of their own and keep their headers; JSON answers need no policy."""

from beers.api.errors import is_api_path

PAGE_POLICY = "; ".join(
    [
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        "img-src data:",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)
# Pages with scripts of their own (the admin; the API's documentation, under /api/).
OWN_POLICY_PREFIXES = ("/admin/",)


def content_security_policy(get_response):
    """Middleware: PAGE_POLICY on the HTML pages of the site, unless a view set one."""

    def middleware(request):
        response = get_response(request)
        if (
            "Content-Security-Policy" not in response
            and response.get("Content-Type", "").startswith("text/html")
            and not request.path.startswith(OWN_POLICY_PREFIXES)
            and (not is_api_path(request.path) or request.path.startswith("/api/v1/optout/"))
        ):
            response["Content-Security-Policy"] = PAGE_POLICY
        return response

    return middleware
