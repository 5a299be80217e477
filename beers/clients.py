"""Who is asking: the client address (trusted proxies only) and its keyed hash."""

import hashlib
import hmac
import ipaddress
from functools import lru_cache

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.utils.decorators import sync_and_async_middleware


@lru_cache(maxsize=8)
def trusted_networks(cidrs: tuple[str, ...]):
    """TRUSTED_PROXY_CIDRS as networks (blank entries skipped); ValueError on a malformed one
    (beers.apps checks them at start-up with this same parser)."""
    return tuple(ipaddress.ip_network(c.strip(), strict=False) for c in cidrs if c.strip())


def is_trusted_proxy(addr: str) -> bool:
    """Whether a peer's address is one of TRUSTED_PROXY_CIDRS (whose forwarding headers are
    believed)."""
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped is not None:  # an IPv4 peer on a dual-stack socket
        ip = ip.ipv4_mapped
    return any(ip in net for net in trusted_networks(tuple(settings.TRUSTED_PROXY_CIDRS)))


def _valid_ip(value: str) -> str | None:
    value = value.strip()
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


def client_ip_from_meta(meta) -> str:
    """REMOTE_ADDR, unless it is a trusted proxy: then CF-Connecting-IP, then the right-most
    X-Forwarded-For entry that is not itself a trusted proxy."""
    remote = meta.get("REMOTE_ADDR", "") or ""
    if not is_trusted_proxy(remote):
        return remote
    cf = _valid_ip(meta.get("HTTP_CF_CONNECTING_IP", "") or "")
    if cf:
        return cf
    for entry in reversed((meta.get("HTTP_X_FORWARDED_FOR", "") or "").split(",")):
        ip = _valid_ip(entry)
        if ip and not is_trusted_proxy(ip):
            return ip
    return remote


def client_ip(request) -> str:
    return client_ip_from_meta(request.META)


def _sender(ip: str) -> str:
    """The unit of the per-address rules: an IPv4 address, or an IPv6 /64. One subscriber
    gets a whole /64 and may use any address of it, so counting IPv6 addresses one by one
    would let a client reset its daily caps and 'once a day' by changing the last bits."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if addr.version == 6:
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.ip_network(f"{addr}/64", strict=False))
    return str(addr)


def address_hash(ip: str) -> str:
    """A keyed hash of an address (an IPv6 address's /64): the only form in which an address
    is ever stored."""
    key = settings.ADDRESS_HASH_KEY.encode()
    return hmac.new(key, _sender(ip).encode(), hashlib.sha256).hexdigest()


def _drop_untrusted_proto(request) -> None:
    if "HTTP_X_FORWARDED_PROTO" in request.META and not is_trusted_proxy(
        request.META.get("REMOTE_ADDR", "") or ""
    ):
        del request.META["HTTP_X_FORWARDED_PROTO"]


@sync_and_async_middleware
def proxy_headers_middleware(get_response):
    """X-Forwarded-Proto counts only from a trusted proxy (SECURE_PROXY_SSL_HEADER reads it
    from any peer): from any other client it is dropped, so a request sent straight to the
    app over plain HTTP cannot claim HTTPS to skip the redirect. First in MIDDLEWARE; sync
    and async, so that it adds no thread hop on either request path (config/asgi.py)."""
    if iscoroutinefunction(get_response):

        async def middleware(request):
            _drop_untrusted_proto(request)
            return await get_response(request)

    else:

        def middleware(request):
            _drop_untrusted_proto(request)
            return get_response(request)

    return middleware
