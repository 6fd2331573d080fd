from django.urls import path

from apps.chats import views

app_name = "chats"

urlpatterns = [
    path("", views.index, name="index"),
    path("send/", views.send_new, name="send_new"),
    path("search/", views.search, name="search"),
    path("mentions/", views.mentions, name="mentions"),
    path("action/<int:pk>/", views.action, name="action"),
    path("<int:pk>/", views.detail, name="detail"),
    path("<int:pk>/send/", views.send, name="send"),
    path("<int:pk>/stop/<int:message_id>/", views.stop, name="stop"),
    path("<int:pk>/rename/", views.rename, name="rename"),
    path("<int:pk>/pin/", views.pin, name="pin"),
    path("<int:pk>/delete/", views.delete, name="delete"),
    path("<int:pk>/notes-only/", views.notes_only, name="notes_only"),
    path("<int:pk>/model/", views.model, name="model"),
    path("<int:pk>/instructions/", views.instructions, name="instructions"),
]
