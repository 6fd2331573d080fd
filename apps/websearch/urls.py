"""Web search's own address: the private chat's web card's answer."""

from django.urls import path

from apps.websearch import views

app_name = "websearch"

urlpatterns = [
    path("card/<id:pk>/", views.card_answer, name="card_answer"),
]
