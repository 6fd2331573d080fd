from django.urls import path

from apps.chats import views

app_name = "chats"

urlpatterns = [
    path("", views.index, name="index"),
]
