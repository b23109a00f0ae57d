"""bench/load.py's URLs: the demo project's, plus ``POST bench/call`` running one tool call in a turn of
the authenticated user, as a chat server's model loop would."""
from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView

from webtools.host import start_turn


class CallView(APIView):
    def post(self, request):
        tool = request.data["tool"]
        with start_turn(request.user, requested_tools=[tool]) as turn:
            result = turn.call(tool, request.data["input"])
        return Response({"is_error": result.is_error, "output": result.output})


urlpatterns = [path("bench/call", CallView.as_view()), path("", include("project.urls"))]
