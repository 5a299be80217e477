"""The API answers JSON whatever the Accept header asks for.

interface.md lists no 406: a client that sends `Accept: text/html` (or `application/xml`) to an
endpoint gets the same JSON answer as everybody else, with its own Content-Type, rather than
DRF's 406. Parsers are still chosen by the request's Content-Type.
"""

from rest_framework.negotiation import DefaultContentNegotiation


class IgnoreAcceptHeader(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        renderer = renderers[0]
        return renderer, renderer.media_type
