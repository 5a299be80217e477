"""Live read endpoints: validate, call the selector, render (cached)."""

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from beers import degraded
from beers.counters import daily_cap_enforced, parse_rate, store_ok
from beers.selectors import queries, ranking

from . import schema
from .live import LiveReadApi, read_limit


class StatusApi(APIView):
    @extend_schema(
        operation_id="getStatus",
        responses={200: schema.StatusResponse},
        summary="Deployment health",
    )
    def get(self, request):
        db_ok = degraded.switch_state() is None and degraded.database_ok()
        counted = store_ok()  # a limit is enforced when configured and its counters answer
        return Response(
            {
                "ok": True,
                "time": timezone.now().isoformat(timespec="seconds"),
                "environment": settings.ENVIRONMENT,
                "db": db_ok,
                "rateLimits": {
                    "read": counted and read_limit() is not None,
                    "write": counted
                    and (daily_cap_enforced() or parse_rate(settings.WRITE_RATE_LIMIT) is not None),
                },
            }
        )


class SearchApi(LiveReadApi):
    @extend_schema(
        operation_id="searchDeals",
        parameters=schema.SEARCH_PARAMETERS,
        responses=schema.read_responses(schema.DealsResponse),
        summary="A city's prices, cheapest per litre first",
    )
    def get(self, request):
        query = queries.parse_search(request.query_params)
        return self.cached("search", query, lambda: ranking.search(query))


class CheapestApi(LiveReadApi):
    @extend_schema(
        operation_id="cheapestNow",
        parameters=schema.CHEAPEST_PARAMETERS,
        responses=schema.read_responses(schema.DealsResponse),
        summary="The cheapest prices on right now in the city's time zone",
    )
    def get(self, request):
        query = queries.parse_cheapest(request.query_params)
        return self.cached("cheapest", query, lambda: ranking.cheapest(query))


class VenueApi(LiveReadApi):
    @extend_schema(
        operation_id="getVenue",
        parameters=schema.VENUE_PARAMETERS,
        responses=schema.read_responses(schema.VenueResponse),
        summary="One bar and every price it has in the rankings",
    )
    def get(self, request, id: str):  # noqa: A002 - the interface's name for the path part
        query = queries.parse_venue(id, request.query_params)
        return self.cached("venue", query, lambda: ranking.venue_detail(query))
